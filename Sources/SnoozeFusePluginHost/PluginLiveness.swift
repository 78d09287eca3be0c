/// The time limits of a plugin's process: when it started, how long it is given to start (the host
/// program starting, the plugin loading and creating its instance), and how late it may be after
/// that before it counts as hung.
public struct PluginTimeLimits<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    public let started: Instant
    public let startup: Duration
    public let budget: Duration

    public init(started: Instant, startup: Duration, budget: Duration = .seconds(1)) {
        self.started = started
        self.startup = startup
        self.budget = budget
    }

    /// When the start-up allowance ends.
    public var startupEnds: Instant { started.advanced(by: startup) }
}

/// Whether a sound source's process still keeps up, judged from the reads of its frames: a pure
/// state machine, `(state, read, now) → verdict`, generic over its instant so it runs on virtual
/// time in tests and on CLOCK_BOOTTIME on the audio thread (no allocation, no lock).
///
/// A read that finds every frame it wants is on time. A read that comes up short begins (or
/// continues) a gap, filled by the host's fallback. A gap that lasts the budget (1 s) means the
/// source has stopped producing (its render sleeps, loops or blocks): it is hung, and is killed and
/// replaced for good. During its start-up (2 s) missing frames are filled but are no gap: they are
/// not counted, and never make it hung.
public struct SourceLiveness<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    public let limits: PluginTimeLimits<Instant>
    /// When the current gap began; nil while the source keeps up.
    public private(set) var gapSince: Instant?

    public init(_ limits: PluginTimeLimits<Instant>) {
        self.limits = limits
    }

    /// The limits of a source that started at `started`.
    public init(started: Instant) {
        self.init(PluginTimeLimits(started: started, startup: .seconds(2)))
    }

    public enum Verdict: Sendable, Hashable {
        /// Every frame wanted was there.
        case onTime
        /// Frames were missing while the source is still starting (filled, not counted).
        case starting
        /// Frames were missing (filled by the fallback); `began` on the first read of a gap.
        case behind(began: Bool)
        /// The gap has lasted `waited`, at least the budget: the source has stopped producing.
        case hung(waited: Duration)
    }

    /// One read: `complete` when every frame wanted was there.
    public mutating func read(complete: Bool, at now: Instant) -> Verdict {
        if complete {
            gapSince = nil
            return .onTime
        }
        guard now >= limits.startupEnds else { return .starting }
        guard let since = gapSince else {
            gapSince = now
            return .behind(began: true)
        }
        let waited = since.duration(to: now)
        if waited >= limits.budget { return .hung(waited: waited) }
        return .behind(began: false)
    }
}

/// Whether an emitter's process still finishes its pulses: a pure state machine over the pulses
/// sent and the answers that came back (each pulse is answered when the plugin's `emit` returned,
/// or at once when it was dropped because the plugin was busy).
///
/// A pulse counts as late once its own length plus the budget (1 s) has passed without its answer;
/// the first late pulse makes the emitter hung (its emit never returned). Pulses sent during the
/// emitter's start-up (3 s) are timed from the end of it.
public struct EmitterLiveness<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    public let limits: PluginTimeLimits<Instant>
    /// The pulses not answered yet: tag → (when its answer is due, its length).
    public private(set) var outstanding: [UInt64: (due: Instant, length: Duration)] = [:]

    public init(_ limits: PluginTimeLimits<Instant>) {
        self.limits = limits
    }

    /// The limits of an emitter that started at `started`.
    public init(started: Instant) {
        self.init(PluginTimeLimits(started: started, startup: .seconds(3)))
    }

    public enum Verdict: Sendable, Hashable {
        case alive
        /// Pulse `tag`'s answer is `late` overdue (past its length plus the budget).
        case hung(tag: UInt64, length: Duration, late: Duration)
    }

    /// A pulse of `length` was handed to the process at `now`.
    public mutating func sent(_ tag: UInt64, lasting length: Duration, at now: Instant) {
        outstanding[tag] = (max(now, limits.startupEnds).advanced(by: length + limits.budget), length)
    }

    /// The process answered pulse `tag` (done or dropped).
    public mutating func answered(_ tag: UInt64) {
        outstanding[tag] = nil
    }

    /// Hung when any pulse's answer is overdue at `now`.
    public func verdict(at now: Instant) -> Verdict {
        guard let (tag, pulse) = outstanding.min(by: { $0.value.due < $1.value.due }), pulse.due < now else { return .alive }
        return .hung(tag: tag, length: pulse.length, late: pulse.due.duration(to: now))
    }
}

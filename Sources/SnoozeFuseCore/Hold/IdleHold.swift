/// Where a nap's hold comes from (`--hold`): a key held in the nap's terminal, the person's use of
/// the whole desktop, or nothing (the release timer starts at once).
public enum HoldSource: String, Sendable, Hashable, CaseIterable, Codable {
    /// A key held down in the nap's terminal (the default on a terminal).
    case key
    /// Any key or pointer input anywhere in the desktop session: the nap counts as held while the
    /// person uses the machine, and lets go after `--idle-after` without input.
    case desktop
    /// No hold (`--no-hold`): the release timer starts at once.
    case none

    /// Whether the session waits for a hold before its release timer.
    public var waitsForHold: Bool { self != .none }
}

/// A desktop hold as a pure state machine: `(state, idle time read at an instant, phase) →
/// (state, session events, when to read again)`. No clock, bus or X server inside: the driver reads
/// the desktop's idle time (the time since the last key or pointer input anywhere in the session)
/// and hands it in.
///
/// - The nap starts held (whoever typed the command is using the machine): ``begin(at:)`` says
///   `holdBegan`.
/// - Held: `idleAfter` without input ends the hold (`holdEnded`). Until then nothing can end it
///   sooner, so the next read is due exactly when the idle time can first reach `idleAfter`: no
///   polling while the person works.
/// - Released: any input since the release (the idle time is shorter than the time since the last
///   input seen) is a new hold (`holdBegan`), which starts the release over, as a held key does.
///   Here input can come at any moment, so the idle time is read every ``releasePoll``.
/// - Napping, ringing, snoozed, ended: input changes nothing (a cat on the keyboard must not move
///   the alarm) and nothing is read any more (`next` is nil).
public struct IdleHold<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// How often the idle time is read while released (at most twice a second).
    public static var releasePoll: Duration { .milliseconds(500) }
    /// Idle times are read in milliseconds by every source, some coarser: input seen less than
    /// this after the last one is taken as the same.
    public static var tolerance: Duration { .milliseconds(100) }

    /// No input for this long ends the hold.
    public let idleAfter: Duration
    /// Holding (true) or released and waiting (false).
    public private(set) var holding = false
    /// When the last input before the release was (the release started `idleAfter` after it).
    private var lastInputAtRelease: Instant?

    public init(idleAfter: Duration) {
        self.idleAfter = idleAfter
    }

    /// What a read of the idle time means, and when to read it next.
    public struct Step: Sendable, Hashable {
        public var events: [SessionEvent]
        /// When to read again; nil: never again (the hold is over for this nap).
        public var next: Instant?

        public init(events: [SessionEvent], next: Instant?) {
            self.events = events
            self.next = next
        }
    }

    /// Whether the idle time is worth reading while the session is in `phase`: only before the
    /// nap starts (ready, holding, releasing). The driver asks before each read, so that nothing is
    /// read once the nap has started.
    public static func reads(in phase: Phase) -> Bool {
        [.ready, .holding, .releasing].contains(phase)
    }

    /// The nap starts held, at `now`.
    public mutating func begin(at now: Instant) -> Step {
        holding = true
        lastInputAtRelease = nil
        return Step(events: [.holdBegan], next: now)
    }

    /// The desktop says no input came for `idle`, read at `now`, while the session is in `phase`.
    public mutating func observe(idle: Duration, at now: Instant, phase: Phase) -> Step {
        guard Self.reads(in: phase) else { return Step(events: [], next: nil) }
        let idle = max(idle, .zero)
        let lastInput = now.advanced(by: .zero - idle)
        if holding {
            guard idle >= idleAfter else { return Step(events: [], next: now.advanced(by: idleAfter - idle)) }
            holding = false
            lastInputAtRelease = lastInput
            return Step(events: [.holdEnded], next: now.advanced(by: Self.releasePoll))
        }
        if let seen = lastInputAtRelease, seen.advanced(by: Self.tolerance) < lastInput {
            holding = true
            lastInputAtRelease = nil
            return Step(events: [.holdBegan], next: now.advanced(by: max(idleAfter - idle, .zero)))
        }
        return Step(events: [], next: now.advanced(by: Self.releasePoll))
    }
}

/// When each sink's monitor is read (SPEC §9): until a block proves the alarm, then a rest. The
/// proof needs a block about every second, not a continuous recording, and every chunk a monitor
/// delivers wakes the alarm's audio thread and the server (the listener cost more CPU than the
/// playback). Only a proof rests a monitor: a block that proves nothing (a pause in the alarm, a
/// muted sink) is followed by the next at once, so a rest never falls in step with an alarm's
/// rhythm and hides it. A pure value over virtual time: the output corks a monitor after
/// ``proved(_:at:)`` and uncorks what ``rested(at:)`` returns, waking at ``nextWake``.
///
/// With a quarter-second block and the default rest, a sink playing the alarm is proved about once
/// a second: well inside the 2 s that ``HeardWatch`` allows before it calls a sink unheard.
public struct MonitorDuty<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// How long a monitor rests after each block.
    public let rest: Duration
    @usableFromInline var restingUntil: [String: Instant] = [:] {
        didSet { nextWake = restingUntil.values.min() }
    }
    /// When the next rest ends; nil when no monitor rests. Kept from the last change: the output
    /// asks on every pass of its write loop.
    public private(set) var nextWake: Instant?

    public init(rest: Duration = .milliseconds(750)) {
        self.rest = rest
    }

    /// Whether `sink`'s monitor rests (what it delivers now is stale: drop it).
    @inlinable public func isResting(_ sink: String) -> Bool { restingUntil[sink] != nil }

    /// A block of `sink`'s monitor proved the alarm at `now`: it rests until `now + rest`.
    @inlinable public mutating func proved(_ sink: String, at now: Instant) {
        restingUntil[sink] = now.advanced(by: rest)
    }

    /// The sinks whose rest is over at `now`, in name order: they are read again.
    @inlinable public mutating func rested(at now: Instant) -> [String] {
        guard let nextWake, nextWake <= now else { return [] }
        let due = restingUntil.filter { $0.value <= now }.keys.sorted()
        for sink in due { restingUntil.removeValue(forKey: sink) }
        return due
    }

    /// `sink` is no longer listened to.
    @inlinable public mutating func forget(_ sink: String) {
        restingUntil.removeValue(forKey: sink)
    }
}

/// The phases of a nap session (SPEC §2).
///
/// `ready → holding ⇄ releasing → napping → ringing → finished`, with `snoozed` between rings and
/// `cancelled` reachable from every phase that is not already over.
public enum Phase: String, Sendable, Hashable, CaseIterable, Codable {
    /// Configured, not started: waiting for the first hold (or for `--no-hold` to start it). With a
    /// time named (`--until`) it rings then, held or not.
    case ready
    /// The person is holding the key.
    case holding
    /// The hold ended; the release timer runs. A new hold returns to `holding`.
    case releasing
    /// The release timer passed: the person is asleep and the nap timer runs.
    case napping
    /// The alarm sounds until it is dismissed, snoozed, or the ring limit passes.
    case ringing
    /// Silence for the snooze length, then `ringing` again.
    case snoozed
    /// The alarm was dismissed or rang out its limit.
    case finished
    /// The session was cancelled before it finished.
    case cancelled

    /// `finished` and `cancelled`: nothing happens after these.
    public var isTerminal: Bool { self == .finished || self == .cancelled }

    /// The phases in which the max failsafe still applies (before the alarm first rings).
    public var isBeforeAlarm: Bool {
        switch self {
        case .ready, .holding, .releasing, .napping: true
        case .ringing, .snoozed, .finished, .cancelled: false
        }
    }
}

/// Why the alarm rang.
public enum AlarmReason: String, Sendable, Hashable, Codable {
    /// The nap timer ran out.
    case nap
    /// The max failsafe passed first.
    case max
}

/// How a session ended.
public enum SessionOutcome: String, Sendable, Hashable, Codable {
    /// Someone stopped the ringing (exit 0).
    case dismissed
    /// The alarm rang for `--ring-limit` and stopped by itself (exit 0).
    case ringLimitReached = "ring_limit"
    /// The session was cancelled before the alarm was dismissed (exit 1, or 130 for SIGINT).
    case cancelled
}

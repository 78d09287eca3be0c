/// What to do with a nap whose process is gone, from what it last saved: the guardian's decision
/// when the nap dies, and `resume`'s after a reboot. A pure function of the saved state and now.
public enum TakeOver<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// Nothing to ring: the nap had not started (waiting for its first hold, with no time named)
    /// or had ended.
    case nothing
    /// Ring for `reason` at `alarm` (at once when it has passed; `late` says by how much).
    case ring(at: Instant, reason: AlarmReason, late: Duration)
    /// The alarm passed too long ago to ring now (`resume --max-late`): report and record it.
    case missed(due: Instant, late: Duration)

    /// The decision for a nap last seen in `phase`, whose alarm was due at `alarm` for `reason`,
    /// looked at `now`. Late by more than `maxLate` (when given) the alarm is missed; the guardian
    /// gives none: it rings however late it is.
    ///
    /// With `lastSaved` (when its state was last written), an alarm due later than a nap could
    /// have set it then (``Session/longestAdjustedWait`` after it: a clock that jumped, a state
    /// edited) is due at that bound instead: a year away became a nap that waits a year.
    public static func plan(phase: Phase, alarm: Instant?, reason: AlarmReason, now: Instant,
                            maxLate: Duration? = nil, lastSaved: Instant? = nil) -> TakeOver {
        // A nap waiting for its first hold has an alarm only when a time was named (`--until`).
        guard var alarm, !phase.isTerminal else { return .nothing }
        if let lastSaved { alarm = Swift.min(alarm, lastSaved.advanced(by: Session<Instant>.longestAdjustedWait)) }
        let late = max(alarm.duration(to: now), .zero)
        if let maxLate, late > maxLate { return .missed(due: alarm, late: late) }
        return .ring(at: alarm, reason: reason, late: late)
    }
}

extension Session {
    /// The alarm a nap that stops being watched now would ring, and why: while holding, the
    /// failsafe (nobody can let go any more); while releasing, the end of the undisturbed nap
    /// (or the failsafe, if sooner); while napping, the coming alarm; while snoozed, the end of the
    /// snooze; while ringing, the alarm that rings (due when it first rang: it rings again at once).
    /// Before the first hold, the time named (`--until`), if any; `nil` once it ended.
    public func alarmToKeep(now: Instant) -> (due: Instant, reason: AlarmReason)? {
        switch phase {
        case .ready:
            return alarmAt.map { ($0, .nap) }
        case .finished, .cancelled:
            return nil
        case .holding:
            // The failsafe, or the time named (`--until`), which rings for the nap.
            return maxDeadline.map { ($0, $0 == alarmAt ? .nap : .max) }
        case .releasing:
            guard let due = undisturbedAlarm else { return nil }
            let byNap = releaseDeadline.map { napEnd(releaseEnds: $0) == due } ?? false
            return (due, byNap ? .nap : .max)
        case .napping:
            guard let due = expectedAlarm else { return nil }
            return (due, napDeadline == due ? .nap : .max)
        case .snoozed:
            return snoozeDeadline.map { ($0, alarmReason ?? .nap) }
        case .ringing:
            return (alarmDue ?? now, alarmReason ?? .nap)
        }
    }
}

/// Something that happens to a session. The driver feeds these to ``Session/handle(_:at:)``.
public enum SessionEvent: Sendable, Hashable {
    /// Start without a hold (`--no-hold`): the session begins in `releasing`.
    case start
    /// The key went down (the first one starts the session).
    case holdBegan
    /// The key came up.
    case holdEnded
    /// Time passed: the driver woke at a deadline. Every event checks deadlines first, so this one
    /// carries no meaning of its own.
    case timeElapsed
    /// Stop the ringing (or the silence between snoozes) for good.
    case dismiss
    /// Silence the alarm for the given length, or the configured snooze length when `nil`.
    case snooze(Duration?)
    /// The person's terminal went away (a closed window, a dropped SSH connection): not a cancel.
    /// The nap goes on; with nobody at the keyboard to dismiss it, an alarm without a ring limit
    /// rings for ``Session/detachedRingLimit``.
    case detach
    /// Move the coming alarm by this much (negative: sooner), never to less than
    /// ``Session/shortestAdjustedWait`` from now nor to more than ``Session/longestAdjustedWait``
    /// (the longest a new nap may wait: moves add up, `add 23h` thrice put it 69 h out). While napping it moves the alarm (and the max
    /// failsafe with it, when the alarm moves past it: the person asked for the time); while
    /// snoozed, the end of the snooze. In other phases nothing runs that it could move.
    case adjust(Duration)
    /// Give up on the session.
    case cancel
    /// Give up on a session whose alarm has not rung: ignored once it rings or is snoozed. Another
    /// terminal's cancel is asked for in the phase it saw; handled after the alarm started, it must
    /// not silence the alarm without its challenge.
    case cancelBeforeAlarm
}

/// What the driver must do after an event. Effects come in the order they happened.
public enum SessionEffect<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// The phase changed at `at` (a deadline, for changes caused by time; the event's time otherwise).
    case phaseChanged(from: Phase, to: Phase, at: Instant)
    /// The max failsafe will end the nap before release + nap have run. Said once, at the start.
    case maxEndsNapEarly(max: Duration, releasePlusNap: Duration)
    /// Start sounding the alarm. `due` is the deadline it was due at; the driver reports its
    /// lateness against this.
    case alarmStarted(reason: AlarmReason, due: Instant)
    /// Stop sounding the alarm (snooze, dismissal, ring limit or cancel).
    case alarmSilenced
    /// The session is over.
    case ended(SessionOutcome, at: Instant)
    /// The coming alarm (or the end of the snooze) moved by `by` to `to`.
    case adjusted(by: Duration, to: Instant)
    /// The terminal went away; the alarm now rings at most `ringLimit`.
    case detached(ringLimit: Duration)
}

/// A nap session as a pure value: `(state, event, now) → (state, effects)`.
///
/// No clock, I/O or threads live here. Deadlines are absolute instants of whatever clock the
/// driver uses (in real runs `ContinuousClock`, which keeps counting through suspend), so a late
/// wake-up never shifts them: every event first applies each deadline that has passed, in order,
/// at the instant it was due. The alarm itself starts at the instant it is handled, so a session
/// woken late (after a suspend, say) rings for its whole ring limit.
public struct Session<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    public let timers: SessionTimers
    public private(set) var phase: Phase = .ready

    /// When the session started (first hold, or `start`; or the time named, `--until`, when it
    /// rang before any hold).
    public private(set) var startedAt: Instant?
    /// `startedAt + max`: the failsafe, active until the alarm first rings; never before the alarm
    /// (`+` moves it later with the alarm, `-` back, never before where it was set).
    public private(set) var maxDeadline: Instant?
    /// The failsafe as set when the session started, before any move of the alarm.
    private var failsafeAsSet: Instant?
    /// Set while `releasing`.
    public private(set) var releaseDeadline: Instant?
    /// Set while `napping`.
    public private(set) var napDeadline: Instant?
    /// Set while `snoozed`.
    public private(set) var snoozeDeadline: Instant?
    /// Set while `ringing` when a ring limit is configured.
    public private(set) var ringLimitDeadline: Instant?
    /// Why the alarm rang, once it has.
    public private(set) var alarmReason: AlarmReason?
    /// The instant the alarm was first due, once it has rung.
    public private(set) var alarmDue: Instant?
    /// How many times the alarm has started ringing (1 + the number of snoozes that ran out).
    public private(set) var ringCount = 0
    /// When the current ring period began (set while `ringing`): the ring limit counts from here.
    public private(set) var ringStartedAt: Instant?
    /// For a session taken up while its alarm rang: when that ring began, for the ring it
    /// continues (used once).
    private var continuedRingStart: Instant?
    /// How the session ended, once it has.
    public private(set) var outcome: SessionOutcome?
    /// The terminal went away (see ``SessionEvent/detach``).
    public private(set) var detached = false

    /// The instant the alarm rings, when the person named a time of day (`nap --until 14:30`)
    /// rather than a nap's length: the deadline while waiting for the first hold (it rings then if
    /// none comes), the failsafe from the first hold, and the nap's end when the release ends
    /// (however long the hold was). `nil`: the timers alone decide.
    public let alarmAt: Instant?

    public init(timers: SessionTimers, alarmAt: Instant? = nil) {
        self.timers = timers
        self.alarmAt = alarmAt
    }

    /// An adjustment never brings the alarm closer than this to now.
    public static var shortestAdjustedWait: Duration { .seconds(10) }

    /// An adjustment never puts the alarm further than this from now: the longest any duration may
    /// be (``DurationParser/maximumSeconds``, a day), as for a new nap.
    public static var longestAdjustedWait: Duration { .seconds(DurationParser.maximumSeconds) }

    /// Where an adjustment by `change` of `instant` lands at `now`: within the shortest and the
    /// longest adjusted wait.
    private static func adjusted(_ instant: Instant, by change: Duration, at now: Instant) -> Instant {
        Swift.min(Swift.max(instant.advanced(by: change), now.advanced(by: shortestAdjustedWait)), now.advanced(by: longestAdjustedWait))
    }

    /// How long an alarm without a ring limit rings once nobody is at the terminal (SPEC §9).
    public static var detachedRingLimit: Duration { .seconds(15 * 60) }

    /// A session taken up again where it stands (by the guardian of a nap that died, or `resume`
    /// after a reboot): napping since `now`, its alarm due at `alarm` for `reason` (at once when
    /// that has passed). With nobody at a terminal, it counts as detached.
    ///
    /// With `ringingSince`, its alarm was ringing when it was taken up: the ring it starts at once
    /// continues that one, and its ring limit counts from `ringingSince` (when that has passed,
    /// it ends at once, as the old one would have).
    public init(timers: SessionTimers, resumingAlarmAt alarm: Instant, reason: AlarmReason, at now: Instant,
                ringingSince: Instant? = nil) {
        self.timers = timers
        alarmAt = nil
        phase = .napping
        startedAt = now
        maxDeadline = alarm
        failsafeAsSet = alarm
        napDeadline = reason == .nap ? alarm : nil
        detached = true
        continuedRingStart = ringingSince
    }

    /// How long the alarm rings before it stops by itself: the configured limit, or
    /// ``detachedRingLimit`` once the terminal went away.
    public var ringLimit: Duration? {
        timers.ringLimit ?? (detached ? Self.detachedRingLimit : nil)
    }

    /// The earliest instant at which time alone changes this session; `nil` when only an event can.
    public var nextDeadline: Instant? {
        switch phase {
        case .ready: alarmAt
        case .finished, .cancelled: nil
        case .holding: maxDeadline
        case .releasing: [releaseDeadline, maxDeadline].compactMap { $0 }.min()
        case .napping: [napDeadline, maxDeadline].compactMap { $0 }.min()
        case .ringing: ringLimitDeadline
        case .snoozed: snoozeDeadline
        }
    }

    /// When the alarm will ring if nothing else happens: `min(napDeadline, maxDeadline)` while
    /// napping, `maxDeadline` before that, and the time named (`--until`) before the first hold.
    public var expectedAlarm: Instant? {
        switch phase {
        case .ready: alarmAt
        case .holding, .releasing: maxDeadline
        case .napping: nextDeadline
        default: nil
        }
    }

    /// When the alarm rings if the sleeper stays asleep: while `releasing`, after the rest of the
    /// release and the whole nap (or at the failsafe, if sooner); while `napping`, `expectedAlarm`;
    /// `nil` in every other phase. A sleep sound plays until shortly before this instant.
    public var undisturbedAlarm: Instant? {
        switch phase {
        case .releasing:
            [releaseDeadline.map { napEnd(releaseEnds: $0) }, maxDeadline].compactMap { $0 }.min()
        case .napping: expectedAlarm
        default: nil
        }
    }

    /// The length of the timer that runs in the current phase, for choosing a countdown layout.
    public var currentTimerLength: Duration? {
        switch phase {
        case .holding: timers.release
        case .releasing: timers.release
        case .napping: timers.nap
        case .ringing: ringLimit
        case .snoozed: timers.snooze
        case .ready, .finished, .cancelled: nil
        }
    }

    /// Applies `event` at `now` and returns what the driver must do.
    public mutating func handle(_ event: SessionEvent, at now: Instant) -> [SessionEffect<Instant>] {
        guard !phase.isTerminal else { return [] }
        var effects: [SessionEffect<Instant>] = []
        applyDeadlines(upTo: now, into: &effects)
        guard !phase.isTerminal else { return effects }

        switch (event, phase) {
        case (.start, .ready):
            begin(at: now, into: &effects)
            enterReleasing(at: now, into: &effects)
        case (.holdBegan, .ready):
            begin(at: now, into: &effects)
            move(to: .holding, at: now, into: &effects)
        case (.holdBegan, .releasing):
            // A new hold cancels the release timer; the next release starts it again at full length.
            releaseDeadline = nil
            move(to: .holding, at: now, into: &effects)
        case (.holdEnded, .holding):
            enterReleasing(at: now, into: &effects)
        case (.dismiss, .ringing), (.dismiss, .snoozed):
            end(.dismissed, at: now, into: &effects)
        case (.snooze(let length), .ringing):
            effects.append(.alarmSilenced)
            ringLimitDeadline = nil
            ringStartedAt = nil
            snoozeDeadline = now.advanced(by: length ?? timers.snooze)
            move(to: .snoozed, at: now, into: &effects)
        case (.adjust(let change), .napping):
            if let alarm = expectedAlarm {
                let target = Self.adjusted(alarm, by: change, at: now)
                napDeadline = target
                // The failsafe never rings before the alarm: it follows a move later, and comes
                // back (no earlier than it was set) with a move sooner.
                if maxDeadline != nil, let set = failsafeAsSet { maxDeadline = Swift.max(set, target) }
                effects.append(.adjusted(by: alarm.duration(to: target), to: target))
            }
        case (.adjust(let change), .snoozed):
            if let end = snoozeDeadline {
                let target = Self.adjusted(end, by: change, at: now)
                snoozeDeadline = target
                effects.append(.adjusted(by: end.duration(to: target), to: target))
            }
        case (.detach, _):
            guard !detached else { break }
            detached = true
            if let limit = ringLimit { effects.append(.detached(ringLimit: limit)) }
            switch phase {
            case .ready:
                // Nobody can hold a key any more: when in doubt, ring. The nap starts as if the
                // key had been let go as the terminal closed.
                begin(at: now, into: &effects)
                enterReleasing(at: now, into: &effects)
            case .holding:
                // The key can no longer be seen: the hold ends here.
                enterReleasing(at: now, into: &effects)
            case .ringing where ringLimitDeadline == nil:
                ringLimitDeadline = ringLimit.map { now.advanced(by: $0) }
            default:
                break
            }
        case (.cancel, _):
            end(.cancelled, at: now, into: &effects)
        case (.cancelBeforeAlarm, let current) where current.isBeforeAlarm:
            end(.cancelled, at: now, into: &effects)
        default:
            // Holds while napping, dismissals before the alarm, snoozes while snoozed and the like
            // do not change a session.
            break
        }
        // A zero-length timer started by this event (`--release 0`) is already due.
        applyDeadlines(upTo: now, into: &effects)
        return effects
    }

    // MARK: - Deadlines

    /// Applies every deadline at or before `now`, in time order, each at the instant it was due.
    private mutating func applyDeadlines(upTo now: Instant, into effects: inout [SessionEffect<Instant>]) {
        while !phase.isTerminal, let deadline = nextDeadline, deadline <= now {
            switch phase {
            case .holding:
                // At the time named (`--until`) it rings for the nap the person asked for.
                ring(alarmAt == deadline ? .nap : .max, due: deadline, now: now, into: &effects)
            case .releasing:
                if let releaseDeadline, releaseDeadline == deadline {
                    self.releaseDeadline = nil
                    napDeadline = napEnd(releaseEnds: releaseDeadline)
                    move(to: .napping, at: releaseDeadline, into: &effects)
                } else {
                    ring(alarmAt == deadline ? .nap : .max, due: deadline, now: now, into: &effects)
                }
            case .napping:
                // On a tie the nap timer is the reason: it is the one the person chose.
                ring(napDeadline == deadline ? .nap : .max, due: deadline, now: now, into: &effects)
            case .ringing:
                end(.ringLimitReached, at: deadline, into: &effects)
            case .snoozed:
                snoozeDeadline = nil
                startRinging(reason: alarmReason ?? .nap, due: deadline, now: now, into: &effects)
            case .ready:
                // The time named (`--until`) came before the first hold: when in doubt, ring. The
                // nap is taken to have begun then.
                begin(at: deadline, into: &effects)
                ring(.nap, due: deadline, now: now, into: &effects)
            case .finished, .cancelled:
                return
            }
        }
    }

    // MARK: - Transitions

    private mutating func begin(at now: Instant, into effects: inout [SessionEffect<Instant>]) {
        startedAt = now
        maxDeadline = alarmAt ?? now.advanced(by: timers.max)
        failsafeAsSet = maxDeadline
        if alarmAt == nil, timers.maxEndsNapEarly {
            effects.append(.maxEndsNapEarly(max: timers.max, releasePlusNap: timers.release + timers.nap))
        }
    }

    /// When a nap that begins as a release ends at `releaseEnds` rings: at the time named, or
    /// after the nap's length.
    func napEnd(releaseEnds: Instant) -> Instant {
        alarmAt ?? releaseEnds.advanced(by: timers.nap)
    }

    private mutating func enterReleasing(at now: Instant, into effects: inout [SessionEffect<Instant>]) {
        releaseDeadline = now.advanced(by: timers.release)
        move(to: .releasing, at: now, into: &effects)
    }

    private mutating func ring(_ reason: AlarmReason, due: Instant, now: Instant, into effects: inout [SessionEffect<Instant>]) {
        releaseDeadline = nil
        napDeadline = nil
        maxDeadline = nil
        alarmReason = reason
        alarmDue = due
        startRinging(reason: reason, due: due, now: now, into: &effects)
    }

    /// Starts a ring period. It begins at `now`, not at `due`, so a late wake-up still rings for
    /// the whole ring limit; `due` travels with the effect so the driver can report the lateness.
    private mutating func startRinging(reason: AlarmReason, due: Instant, now: Instant, into effects: inout [SessionEffect<Instant>]) {
        effects.append(.alarmStarted(reason: reason, due: due))
        ringCount += 1
        let start = min(continuedRingStart ?? now, now)
        continuedRingStart = nil
        ringStartedAt = start
        ringLimitDeadline = ringLimit.map { start.advanced(by: $0) }
        move(to: .ringing, at: now, into: &effects)
    }

    private mutating func end(_ outcome: SessionOutcome, at instant: Instant, into effects: inout [SessionEffect<Instant>]) {
        if phase == .ringing { effects.append(.alarmSilenced) }
        releaseDeadline = nil
        napDeadline = nil
        maxDeadline = nil
        snoozeDeadline = nil
        ringLimitDeadline = nil
        ringStartedAt = nil
        self.outcome = outcome
        move(to: outcome == .cancelled ? .cancelled : .finished, at: instant, into: &effects)
        effects.append(.ended(outcome, at: instant))
    }

    private mutating func move(to next: Phase, at instant: Instant, into effects: inout [SessionEffect<Instant>]) {
        effects.append(.phaseChanged(from: phase, to: next, at: instant))
        phase = next
    }
}

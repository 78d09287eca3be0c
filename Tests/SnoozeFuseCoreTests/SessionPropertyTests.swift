import Testing
import PropertyBased
import SnoozeFuseCore
import SnoozeFuseTestSupport

/// One step of a random session: an event after a random pause.
struct Step: Sendable, CustomStringConvertible {
    var pauseMilliseconds: Int
    var event: SessionEvent
    var description: String { "+\(pauseMilliseconds)ms \(event)" }
}

func eventGen() -> Generator<SessionEvent, some Sequence & SendableMetatype> {
    Gen.int(in: 0...8).map { choice -> SessionEvent in
        switch choice {
        case 0, 1: .holdBegan
        case 2, 3: .holdEnded
        case 4: .timeElapsed
        case 5: .dismiss
        case 6: .snooze(nil)
        case 7: .snooze(.seconds(3))
        default: .cancel
        }
    }
}

func stepGen() -> Generator<Step, some Sequence & SendableMetatype> {
    zip(Gen.int(in: 0...20_000), eventGen()).map { Step(pauseMilliseconds: $0, event: $1) }
}

func timersGen() -> Generator<SessionTimers, some Sequence & SendableMetatype> {
    zip(Gen.int(in: 0...30), Gen.int(in: 0...60), Gen.int(in: 1...90), Gen.int(in: 0...20)).map { release, nap, max, ringLimit in
        SessionTimers(
            release: .seconds(release), nap: .seconds(nap), max: .seconds(max),
            snooze: .seconds(7), ringLimit: ringLimit == 0 ? nil : .seconds(ringLimit)
        )
    }
}

@Suite("Session state machine: properties over random sessions")
struct SessionPropertyTests {
    /// Replays `steps` (first `start` or `holdBegan`), checking invariants after every step, then lets
    /// time run out with nobody answering.
    func check(timers: SessionTimers, hold: Bool, steps: [Step]) {
        var session = Session<Instant>(timers: timers)
        var now = Instant(offset: .zero)
        var terminalEffects = 0
        var alarmStarts: [(due: Instant, at: Instant)] = []
        var napStartedAt: Instant?

        func apply(_ event: SessionEvent) {
            let effects = session.handle(event, at: now)
            for effect in effects {
                switch effect {
                case .alarmStarted(_, let due):
                    alarmStarts.append((due, now))
                case .ended:
                    terminalEffects += 1
                case .phaseChanged(let from, let to, let when):
                    if to == .napping { napStartedAt = when }
                    #expect(from != to)
                    #expect(when <= now, "no transition is dated in the future")
                default: break
                }
            }
            // Deadlines that matter are always in the future after an event.
            if let next = session.nextDeadline { #expect(next > now) }
            #expect(session.phase.isTerminal == (session.outcome != nil))
        }

        apply(hold ? .holdBegan : .start)
        let start = now
        for step in steps where !session.phase.isTerminal {
            now = now.advanced(by: .milliseconds(step.pauseMilliseconds))
            apply(step.event)
        }

        // Nobody answers from here: a session releasing or napping rings exactly when it predicts
        // (what a sleep sound ends before).
        let predicted = session.undisturbedAlarm
        if predicted != nil { #expect(alarmStarts.isEmpty && [.releasing, .napping].contains(session.phase)) }
        // Time runs on from deadline to deadline.
        var guardSteps = 0
        while let next = session.nextDeadline, guardSteps < 1000 {
            now = next
            apply(.timeElapsed)
            guardSteps += 1
        }
        if let first = alarmStarts.first {
            // The alarm never starts before it is due, and is due exactly at min(nap, max).
            #expect(first.at >= first.due)
            let maxDeadline = start.advanced(by: timers.max)
            let napDeadline = napStartedAt.map { $0.advanced(by: timers.nap) }
            #expect(first.due == [napDeadline, maxDeadline].compactMap { $0 }.min())
            // An unanswered session never rings later than the max deadline.
            #expect(first.due <= start.advanced(by: timers.max))
            #expect(first.due >= start, "never before the session started")
        }
        for alarm in alarmStarts { #expect(alarm.at >= alarm.due) }
        if let predicted { #expect(alarmStarts.first?.due == predicted) }

        // Every session that ends, ends exactly once, in exactly one terminal phase.
        #expect(terminalEffects <= 1)
        if session.phase.isTerminal {
            #expect(terminalEffects == 1)
            #expect((session.phase == .cancelled) == (session.outcome == .cancelled))
        } else {
            // The only way to still be running with no deadline is to ring without a limit.
            #expect(session.phase == .ringing && timers.ringLimit == nil)
            #expect(session.nextDeadline == nil)
        }
    }

    @Test func randomSessionsStartedWithoutAHold() async {
        await propertyCheck(count: 400, input: timersGen(), stepGen().array(of: 0...25)) { timers, steps in
            check(timers: timers, hold: false, steps: steps)
        }
    }

    @Test func randomSessionsStartedByAHold() async {
        await propertyCheck(count: 400, input: timersGen(), stepGen().array(of: 0...25)) { timers, steps in
            check(timers: timers, hold: true, steps: steps)
        }
    }

    @Test func anUnansweredSessionRingsAtMinOfNapAndMax() async {
        await propertyCheck(count: 300, input: timersGen()) { timers in
            var session = Session<Instant>(timers: timers)
            var now = at(0)
            var due: Instant?
            // Zero-length release and nap ring within the start event itself.
            for case .alarmStarted(_, let when) in session.handle(.start, at: now) { due = when }
            while due == nil, let next = session.nextDeadline {
                now = next
                for case .alarmStarted(_, let when) in session.handle(.timeElapsed, at: now) { due = when }
            }
            let expected = Swift.min(timers.release + timers.nap, timers.max)
            #expect(due == Instant(offset: expected))
            #expect(session.alarmReason == (timers.release + timers.nap <= timers.max ? .nap : .max))
        }
    }
}

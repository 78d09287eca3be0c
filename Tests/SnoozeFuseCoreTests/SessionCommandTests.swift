import PropertyBased
import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// Moving the alarm, losing the terminal, and taking a session up again where it stands.
@Suite("Session state machine: adjustments, detaching, resuming")
struct SessionCommandTests {
    @Test func addingAndRemovingTimeMovesTheAlarmNeverCloserThanTenSeconds() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(2))
        #expect(session.expectedAlarm == at(7))
        // +60 s moves the alarm past the max failsafe (15 s): the failsafe moves with it.
        #expect(session.handle(.adjust(.seconds(60)), at: at(3)) == [.adjusted(by: .seconds(60), to: at(67))])
        #expect(session.napDeadline == at(67) && session.maxDeadline == at(67))
        // -60 s brings it back, but never closer than 10 s from now.
        #expect(session.handle(.adjust(.seconds(-60)), at: at(3)) == [.adjusted(by: .seconds(-54), to: at(13))])
        #expect(session.expectedAlarm == at(13))
        // And the failsafe comes back with it (it stayed at 67 s: `+` moved it, `-` did not),
        // never before where it was set (15 s).
        #expect(session.maxDeadline == at(15))
        #expect(session.handle(.adjust(.seconds(-60)), at: at(5)) == [.adjusted(by: .seconds(2), to: at(15))], "already within 10 s: it can only move out")
        let rung = session.handle(.timeElapsed, at: at(15))
        #expect(rung.first == .alarmStarted(reason: .nap, due: at(15)))
    }

    /// Moves add up, but never past a day from now (the longest a new nap may wait): `add 23h`
    /// three times put the alarm and the failsafe 69 h out. The same for a snooze's end.
    @Test func movesNeverPutTheAlarmMoreThanADayFromNow() {
        var session = Session<Instant>(timers: SessionTimers(release: .seconds(2), nap: .seconds(5), max: .seconds(60)))
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(2))
        let day = 86_400.0
        #expect(session.handle(.adjust(.seconds(23 * 3_600)), at: at(3)) == [.adjusted(by: .seconds(23 * 3_600), to: at(7 + 23 * 3_600))])
        #expect(session.handle(.adjust(.seconds(23 * 3_600)), at: at(4)) == [.adjusted(by: .seconds(4 + day - 7 - 23 * 3_600), to: at(4 + day))])
        #expect(session.handle(.adjust(.seconds(23 * 3_600)), at: at(5)) == [.adjusted(by: .seconds(1), to: at(5 + day))])
        #expect(session.expectedAlarm == at(5 + day) && session.maxDeadline == at(5 + day))
        var snoozed = Session<Instant>(timers: SessionTimers(release: .seconds(1), nap: .seconds(1), max: .seconds(60), snooze: .seconds(60)))
        _ = snoozed.handle(.start, at: at(0))
        _ = snoozed.handle(.timeElapsed, at: at(1))
        _ = snoozed.handle(.timeElapsed, at: at(2))
        _ = snoozed.handle(.snooze(nil), at: at(3))
        #expect(snoozed.handle(.adjust(.seconds(2 * day)), at: at(4)) == [.adjusted(by: .seconds(4 + day - 63), to: at(4 + day))])
    }

    @Test func adjustingASnoozeMovesItsEndAndNothingElseMoves() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(7))
        _ = session.handle(.snooze(.seconds(30)), at: at(8))
        #expect(session.snoozeDeadline == at(38))
        #expect(session.handle(.adjust(.seconds(60)), at: at(9)) == [.adjusted(by: .seconds(60), to: at(98))])
        // Before the nap there is no alarm time to move; ringing, there is nothing to wait for.
        var releasing = Session<Instant>(timers: quick)
        _ = releasing.handle(.start, at: at(0))
        #expect(releasing.handle(.adjust(.seconds(60)), at: at(1)) == [])
    }

    @Test func aDetachedSessionGoesOnAndItsAlarmRingsForFifteenMinutes() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.start, at: at(0))
        #expect(session.handle(.detach, at: at(1)) == [.detached(ringLimit: .seconds(900))])
        #expect(session.phase == .releasing, "not a cancel")
        #expect(session.handle(.detach, at: at(1.5)) == [], "said once")
        _ = session.handle(.timeElapsed, at: at(2))
        _ = session.handle(.timeElapsed, at: at(7))
        #expect(session.phase == .ringing)
        #expect(session.ringLimitDeadline == at(907))
        #expect(session.handle(.timeElapsed, at: at(907)).last == .ended(.ringLimitReached, at: at(907)))
    }

    @Test func detachingWhileRingingWithoutALimitSetsOne() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(7))
        #expect(session.ringLimitDeadline == nil)
        _ = session.handle(.detach, at: at(10))
        #expect(session.ringLimitDeadline == at(910))
        // A configured ring limit stays what it was.
        var limited = Session<Instant>(timers: SessionTimers(release: .seconds(2), nap: .seconds(5), max: .seconds(15), ringLimit: .seconds(30)))
        _ = limited.handle(.start, at: at(0))
        _ = limited.handle(.timeElapsed, at: at(7))
        #expect(limited.handle(.detach, at: at(8)) == [.detached(ringLimit: .seconds(30))])
        #expect(limited.ringLimitDeadline == at(37))
    }

    @Test func detachingBeforeOrDuringTheHoldStartsTheReleaseWhenInDoubt() {
        var waiting = Session<Instant>(timers: quick)
        let effects = waiting.handle(.detach, at: at(3))
        #expect(phases(effects) == [.releasing])
        #expect(waiting.maxDeadline == at(18) && waiting.releaseDeadline == at(5))
        var holding = Session<Instant>(timers: quick)
        _ = holding.handle(.holdBegan, at: at(0))
        #expect(phases(holding.handle(.detach, at: at(4))) == [.releasing])
        #expect(holding.releaseDeadline == at(6))
    }

    @Test func aResumedSessionRingsAtItsAlarmForItsReason() {
        var nap = Session<Instant>(timers: quick, resumingAlarmAt: at(100), reason: .nap, at: at(40))
        #expect(nap.phase == .napping && nap.expectedAlarm == at(100) && nap.detached)
        #expect(nap.handle(.timeElapsed, at: at(100)).first == .alarmStarted(reason: .nap, due: at(100)))
        #expect(nap.ringLimitDeadline == at(1000), "nobody at a terminal: fifteen minutes")
        var failsafe = Session<Instant>(timers: quick, resumingAlarmAt: at(100), reason: .max, at: at(40))
        #expect(failsafe.handle(.timeElapsed, at: at(100)).first == .alarmStarted(reason: .max, due: at(100)))
        // Already due: it rings at the next event, and knows how late it is.
        var late = Session<Instant>(timers: quick, resumingAlarmAt: at(100), reason: .nap, at: at(130))
        #expect(late.handle(.timeElapsed, at: at(130)).first == .alarmStarted(reason: .nap, due: at(100)))
    }

    @Test func randomAdjustmentsNeverBringTheAlarmWithinTenSecondsOrBeforeNow() async {
        await propertyCheck(count: 300, input: Gen.int(in: -600...600).array(of: 1...12), Gen.int(in: 0...8_000).array(of: 1...12)) { changes, pauses in
            var session = Session<Instant>(timers: SessionTimers(release: .seconds(1), nap: .seconds(600), max: .seconds(900)))
            var now = at(0)
            _ = session.handle(.start, at: now)
            now = at(1)
            _ = session.handle(.timeElapsed, at: now)
            for (change, pause) in zip(changes, pauses) where session.phase == .napping {
                now = now.advanced(by: .milliseconds(pause))
                let before = session.expectedAlarm
                let effects = session.handle(.adjust(.seconds(change)), at: now)
                guard session.phase == .napping, let alarm = session.expectedAlarm else { continue }
                #expect(alarm >= now.advanced(by: .seconds(10)) || effects.isEmpty, "\(alarm) at \(now)")
                if case .adjusted(let by, let to)? = effects.first {
                    #expect(to == alarm && before?.advanced(by: by) == alarm)
                }
                #expect(session.maxDeadline.map { $0 >= alarm } ?? false, "the failsafe never rings before the alarm the person set")
            }
        }
    }
}

@Suite("Taking a nap over when its process is gone")
struct TakeOverTests {
    @Test func theAlarmToKeepFollowsThePhase() {
        var session = Session<Instant>(timers: quick)
        #expect(session.alarmToKeep(now: at(0)) == nil, "not started: nothing to ring")
        _ = session.handle(.holdBegan, at: at(0))
        #expect(session.alarmToKeep(now: at(1))! == (at(15), .max), "held: only the failsafe is sure")
        _ = session.handle(.holdEnded, at: at(1))
        #expect(session.alarmToKeep(now: at(2))! == (at(8), .nap), "released at 1 s: 2 s + 5 s")
        _ = session.handle(.timeElapsed, at: at(3))
        _ = session.handle(.adjust(.seconds(20)), at: at(4))
        #expect(session.alarmToKeep(now: at(4))! == (at(28), .nap))
        _ = session.handle(.timeElapsed, at: at(28))
        #expect(session.alarmToKeep(now: at(29))! == (at(28), .nap), "ringing: the alarm that rings, again at once")
        _ = session.handle(.snooze(.seconds(60)), at: at(30))
        #expect(session.alarmToKeep(now: at(31))! == (at(90), .nap))
        _ = session.handle(.dismiss, at: at(32))
        #expect(session.alarmToKeep(now: at(33)) == nil)
    }

    @Test func plans() {
        #expect(TakeOver.plan(phase: .napping, alarm: at(100), reason: .nap, now: at(40)) == .ring(at: at(100), reason: .nap, late: .zero))
        #expect(TakeOver.plan(phase: .napping, alarm: at(100), reason: .max, now: at(160)) == .ring(at: at(100), reason: .max, late: .seconds(60)),
                "the guardian rings however late")
        #expect(TakeOver.plan(phase: .napping, alarm: at(100), reason: .nap, now: at(1900), maxLate: .seconds(1800)) == .ring(at: at(100), reason: .nap, late: .seconds(1800)))
        #expect(TakeOver.plan(phase: .napping, alarm: at(100), reason: .nap, now: at(1901), maxLate: .seconds(1800)) == .missed(due: at(100), late: .seconds(1801)))
        // Due a year after the state was last saved (a clock that jumped): due a day after it.
        #expect(TakeOver.plan(phase: .napping, alarm: at(365 * 86_400), reason: .nap, now: at(40), lastSaved: at(30))
            == .ring(at: at(30 + 86_400), reason: .nap, late: .zero))
        #expect(TakeOver.plan(phase: .napping, alarm: at(365 * 86_400), reason: .nap, now: at(90_000), lastSaved: at(30))
            == .ring(at: at(30 + 86_400), reason: .nap, late: .seconds(90_000 - 30 - 86_400)))
        #expect(TakeOver.plan(phase: .napping, alarm: at(100), reason: .nap, now: at(40), lastSaved: at(30)) == .ring(at: at(100), reason: .nap, late: .zero))
        #expect(TakeOver<Instant>.plan(phase: .ready, alarm: nil, reason: .nap, now: at(5)) == .nothing)
        #expect(TakeOver.plan(phase: .finished, alarm: at(5), reason: .nap, now: at(5)) == .nothing)
    }
}

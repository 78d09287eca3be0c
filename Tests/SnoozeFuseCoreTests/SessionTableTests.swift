import Testing
import SnoozeFuseCore
import SnoozeFuseTestSupport

typealias Instant = ManualClock.Instant
typealias Effect = SessionEffect<Instant>

/// An instant `seconds` after the virtual epoch.
func at(_ seconds: Double) -> Instant { Instant(offset: .milliseconds(Int64((seconds * 1000).rounded()))) }

let quick = SessionTimers(release: .seconds(2), nap: .seconds(5), max: .seconds(15))

/// Phase changes among `effects`, as (to, time in seconds).
func phases(_ effects: [Effect]) -> [Phase] {
    effects.compactMap { if case .phaseChanged(_, let to, _) = $0 { to } else { nil } }
}

@Suite("Session state machine: transitions")
struct SessionTableTests {
    @Test func noHoldStartReleasesNapsAndRings() {
        var session = Session<Instant>(timers: quick)
        #expect(session.handle(.start, at: at(0)) == [.phaseChanged(from: .ready, to: .releasing, at: at(0))])
        #expect(session.releaseDeadline == at(2))
        #expect(session.maxDeadline == at(15))
        #expect(session.nextDeadline == at(2))
        #expect(session.handle(.timeElapsed, at: at(1.999)) == [])
        #expect(session.handle(.timeElapsed, at: at(2)) == [.phaseChanged(from: .releasing, to: .napping, at: at(2))])
        #expect(session.napDeadline == at(7))
        #expect(session.nextDeadline == at(7))
        #expect(session.handle(.timeElapsed, at: at(7)) == [
            .alarmStarted(reason: .nap, due: at(7)),
            .phaseChanged(from: .napping, to: .ringing, at: at(7)),
        ])
        #expect(session.alarmReason == .nap)
        #expect(session.nextDeadline == nil, "without a ring limit only a dismissal ends the ringing")
        #expect(session.handle(.dismiss, at: at(9)) == [
            .alarmSilenced,
            .phaseChanged(from: .ringing, to: .finished, at: at(9)),
            .ended(.dismissed, at: at(9)),
        ])
        #expect(session.phase == .finished)
        #expect(session.outcome == .dismissed)
        #expect(session.nextDeadline == nil)
    }

    @Test func undisturbedAlarmIsKnownFromTheStartOfTheRelease() {
        var session = Session<Instant>(timers: quick)
        #expect(session.undisturbedAlarm == nil)
        _ = session.handle(.holdBegan, at: at(0))
        #expect(session.undisturbedAlarm == nil, "no sleep sound while the key is held")
        _ = session.handle(.holdEnded, at: at(1))
        #expect(session.undisturbedAlarm == at(8), "release 1…3, then the 5 s nap")
        _ = session.handle(.timeElapsed, at: at(3))
        #expect(session.phase == .napping)
        #expect(session.undisturbedAlarm == at(8), "unchanged when the nap starts")
        _ = session.handle(.timeElapsed, at: at(8))
        #expect(session.phase == .ringing)
        #expect(session.undisturbedAlarm == nil)

        // The failsafe comes first when release + nap would outlast it.
        var short = Session<Instant>(timers: SessionTimers(release: .seconds(2), nap: .seconds(20), max: .seconds(10)))
        _ = short.handle(.start, at: at(0))
        #expect(short.undisturbedAlarm == at(10))
    }

    @Test func holdStartsTheSessionAndTheMaxTimer() {
        var session = Session<Instant>(timers: quick)
        #expect(session.handle(.holdBegan, at: at(3)) == [.phaseChanged(from: .ready, to: .holding, at: at(3))])
        #expect(session.startedAt == at(3))
        #expect(session.maxDeadline == at(18))
        #expect(session.nextDeadline == at(18))
        #expect(session.handle(.holdEnded, at: at(4)) == [.phaseChanged(from: .holding, to: .releasing, at: at(4))])
        #expect(session.releaseDeadline == at(6))
    }

    @Test func reHoldDuringReleasingRestoresTheFullReleaseTime() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.holdBegan, at: at(0))
        _ = session.handle(.holdEnded, at: at(1))
        #expect(session.releaseDeadline == at(3))
        // 1.5 s of the 2 s release have run; a new hold cancels it ...
        #expect(session.handle(.holdBegan, at: at(2.5)) == [.phaseChanged(from: .releasing, to: .holding, at: at(2.5))])
        #expect(session.releaseDeadline == nil)
        #expect(session.handle(.timeElapsed, at: at(3.5)) == [], "the old release deadline no longer applies")
        // ... and the next release starts again at full length, never part-way.
        _ = session.handle(.holdEnded, at: at(4))
        #expect(session.releaseDeadline == at(6))
        #expect(session.handle(.timeElapsed, at: at(6)) == [.phaseChanged(from: .releasing, to: .napping, at: at(6))])
        #expect(session.napDeadline == at(11))
    }

    @Test func repeatedHoldsAndReleasesNeverMoveTheMaxDeadline() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.holdBegan, at: at(0))
        for step in 0..<6 {
            _ = session.handle(.holdEnded, at: at(Double(step * 2) + 1))
            _ = session.handle(.holdBegan, at: at(Double(step * 2) + 2))
        }
        #expect(session.maxDeadline == at(15))
        #expect(session.phase == .holding)
    }

    @Test func maxFiresWhileHolding() {
        var session = Session<Instant>(timers: quick)
        _ = session.handle(.holdBegan, at: at(0))
        #expect(session.handle(.timeElapsed, at: at(15)) == [
            .alarmStarted(reason: .max, due: at(15)),
            .phaseChanged(from: .holding, to: .ringing, at: at(15)),
        ])
        #expect(session.alarmReason == .max)
    }

    @Test func maxFiresWhileReleasing() {
        let timers = SessionTimers(release: .seconds(30), nap: .seconds(60), max: .seconds(20))
        var session = Session<Instant>(timers: timers)
        _ = session.handle(.holdBegan, at: at(0))
        _ = session.handle(.holdEnded, at: at(5))
        #expect(session.nextDeadline == at(20))
        #expect(session.handle(.timeElapsed, at: at(20)) == [
            .alarmStarted(reason: .max, due: at(20)),
            .phaseChanged(from: .releasing, to: .ringing, at: at(20)),
        ])
    }

    @Test func maxFiresWhileNapping() {
        let timers = SessionTimers(release: .seconds(2), nap: .seconds(60), max: .seconds(30))
        var session = Session<Instant>(timers: timers)
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(2))
        #expect(session.phase == .napping)
        #expect(session.nextDeadline == at(30), "the alarm rings at min(napDeadline, maxDeadline)")
        #expect(session.handle(.timeElapsed, at: at(30)) == [
            .alarmStarted(reason: .max, due: at(30)),
            .phaseChanged(from: .napping, to: .ringing, at: at(30)),
        ])
    }

    @Test func napAndMaxAtTheSameInstantRingForTheNap() {
        let timers = SessionTimers(release: .seconds(5), nap: .seconds(10), max: .seconds(15))
        var session = Session<Instant>(timers: timers)
        _ = session.handle(.start, at: at(0))
        let effects = session.handle(.timeElapsed, at: at(15))
        #expect(effects == [
            .phaseChanged(from: .releasing, to: .napping, at: at(5)),
            .alarmStarted(reason: .nap, due: at(15)),
            .phaseChanged(from: .napping, to: .ringing, at: at(15)),
        ])
    }

    @Test func maxShorterThanReleasePlusNapIsSaidOnceAndTheSessionRuns() {
        let timers = SessionTimers(release: .seconds(30), nap: .seconds(20 * 60), max: .seconds(10 * 60))
        #expect(timers.maxEndsNapEarly)
        var session = Session<Instant>(timers: timers)
        #expect(session.handle(.holdBegan, at: at(0)) == [
            .maxEndsNapEarly(max: .seconds(600), releasePlusNap: .seconds(1230)),
            .phaseChanged(from: .ready, to: .holding, at: at(0)),
        ])
        let later = session.handle(.holdEnded, at: at(1)) + session.handle(.holdBegan, at: at(2))
        #expect(!later.contains { if case .maxEndsNapEarly = $0 { true } else { false } })
        _ = session.handle(.holdEnded, at: at(3))
        #expect(session.handle(.timeElapsed, at: at(600)).contains(.alarmStarted(reason: .max, due: at(600))))
    }

    @Test func defaultTimersDoNotWarn() {
        #expect(!Preset.basic.timers.maxEndsNapEarly)
        #expect(!Preset.quickTest.timers.maxEndsNapEarly)
        var session = Session<Instant>(timers: Preset.basic.timers)
        #expect(session.handle(.start, at: at(0)).count == 1)
    }

    @Test func severalSnoozeCycles() {
        var timers = quick
        timers.snooze = .seconds(60)
        var session = Session<Instant>(timers: timers)
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(7))
        #expect(session.phase == .ringing)
        #expect(session.ringCount == 1)

        #expect(session.handle(.snooze(nil), at: at(8)) == [
            .alarmSilenced,
            .phaseChanged(from: .ringing, to: .snoozed, at: at(8)),
        ])
        #expect(session.nextDeadline == at(68))
        #expect(session.handle(.timeElapsed, at: at(68)) == [
            .alarmStarted(reason: .nap, due: at(68)),
            .phaseChanged(from: .snoozed, to: .ringing, at: at(68)),
        ])
        #expect(session.ringCount == 2)

        // A snooze of a chosen length.
        _ = session.handle(.snooze(.seconds(10)), at: at(70))
        #expect(session.snoozeDeadline == at(80))
        #expect(session.handle(.snooze(.seconds(99)), at: at(71)) == [], "snoozing while snoozed changes nothing")
        _ = session.handle(.timeElapsed, at: at(80))
        #expect(session.ringCount == 3)
        _ = session.handle(.snooze(nil), at: at(81))
        #expect(session.handle(.dismiss, at: at(100)) == [
            .phaseChanged(from: .snoozed, to: .finished, at: at(100)),
            .ended(.dismissed, at: at(100)),
        ], "dismissing during a snooze ends the session with no alarm to silence")
    }

    @Test func ringLimitEndsTheSessionAndResetsAfterASnooze() {
        var timers = quick
        timers.ringLimit = .seconds(3)
        timers.snooze = .seconds(20)
        var session = Session<Instant>(timers: timers)
        _ = session.handle(.start, at: at(0))
        _ = session.handle(.timeElapsed, at: at(7))
        #expect(session.ringLimitDeadline == at(10))
        _ = session.handle(.snooze(nil), at: at(9))
        #expect(session.ringLimitDeadline == nil)
        _ = session.handle(.timeElapsed, at: at(29))
        #expect(session.ringLimitDeadline == at(32), "each ring period gets the whole limit")
        #expect(session.handle(.timeElapsed, at: at(32)) == [
            .alarmSilenced,
            .phaseChanged(from: .ringing, to: .finished, at: at(32)),
            .ended(.ringLimitReached, at: at(32)),
        ])
        #expect(session.outcome == .ringLimitReached)
    }

    @Test func aLateWakeUpAppliesEachDeadlineWhenItWasDueAndRingsForTheWholeLimit() {
        var timers = quick
        timers.ringLimit = .seconds(3)
        var session = Session<Instant>(timers: timers)
        _ = session.handle(.start, at: at(0))
        // The machine slept through release and nap (a suspend): resume at t=100.
        #expect(session.handle(.timeElapsed, at: at(100)) == [
            .phaseChanged(from: .releasing, to: .napping, at: at(2)),
            .alarmStarted(reason: .nap, due: at(7)),
            .phaseChanged(from: .napping, to: .ringing, at: at(100)),
        ])
        #expect(session.ringLimitDeadline == at(103))
    }

    @Test("cancel in every phase", arguments: Phase.allCases)
    func cancelInEveryPhase(phase: Phase) throws {
        var timers = quick
        timers.ringLimit = .seconds(3)
        var session = Session<Instant>(timers: timers)
        let now = at(try drive(&session, to: phase) + 0.5)
        let before = session.phase
        let effects = session.handle(.cancel, at: now)
        if before.isTerminal {
            #expect(effects == [], "nothing happens after the end")
            #expect(session.phase == before)
        } else {
            var expected: [Effect] = before == .ringing ? [.alarmSilenced] : []
            expected += [.phaseChanged(from: before, to: .cancelled, at: now), .ended(.cancelled, at: now)]
            #expect(effects == expected)
            #expect(session.phase == .cancelled)
            #expect(session.nextDeadline == nil)
            #expect(session.handle(.timeElapsed, at: at(10_000)) == [])
        }
    }

    /// Another terminal's cancel, asked for before the alarm: it cancels as `.cancel` does until
    /// the alarm rings, and changes nothing once it rings or is snoozed (the asker saw an older
    /// phase; the alarm is not silenced without its challenge).
    @Test("a cancel before the alarm, in every phase", arguments: Phase.allCases)
    func cancelBeforeTheAlarmInEveryPhase(phase: Phase) throws {
        var session = Session<Instant>(timers: quick)
        let now = at(try drive(&session, to: phase) + 0.5)
        let before = session
        let effects = session.handle(.cancelBeforeAlarm, at: now)
        if phase.isBeforeAlarm {
            #expect(effects == [.phaseChanged(from: phase, to: .cancelled, at: now), .ended(.cancelled, at: now)])
            #expect(session.phase == .cancelled)
        } else {
            #expect(effects == [], "\(phase): nothing happens")
            #expect(session == before)
        }
    }

    @Test("events that do not apply change nothing", arguments: [
        (Phase.ready, SessionEvent.holdEnded), (.ready, .dismiss), (.ready, .snooze(nil)), (.ready, .timeElapsed),
        (.holding, .holdBegan), (.holding, .start), (.holding, .dismiss), (.holding, .snooze(nil)),
        (.releasing, .holdEnded), (.releasing, .start), (.releasing, .dismiss),
        (.napping, .holdBegan), (.napping, .holdEnded), (.napping, .dismiss), (.napping, .snooze(nil)),
        (.ringing, .holdBegan), (.ringing, .start),
        (.snoozed, .holdEnded), (.snoozed, .snooze(.seconds(5))),
        (.finished, .start), (.finished, .dismiss), (.cancelled, .holdBegan),
    ])
    func ignoredEvents(phase: Phase, event: SessionEvent) throws {
        var session = Session<Instant>(timers: quick)
        let last = try drive(&session, to: phase)
        let before = session
        // Half a second after the last event lies before every deadline still pending.
        #expect(session.handle(event, at: at(last + 0.5)) == [])
        #expect(session == before)
    }

    @Test func startedAndPhasesAreConsistentWithPhase() throws {
        for phase in Phase.allCases {
            var session = Session<Instant>(timers: quick)
            try drive(&session, to: phase)
            #expect(session.phase == phase)
        }
    }
}

/// Drives a fresh session into `phase` with the quick-test timers (snooze 5 min); returns the time
/// of the last event, in seconds.
@discardableResult
func drive(_ session: inout Session<Instant>, to phase: Phase) throws -> Double {
    let last: Double
    switch phase {
    case .ready: last = 0
    case .holding: _ = session.handle(.holdBegan, at: at(0)); last = 0
    case .releasing: _ = session.handle(.start, at: at(0)); last = 0
    case .napping: try drive(&session, to: .releasing); _ = session.handle(.timeElapsed, at: at(2)); last = 2
    case .ringing: try drive(&session, to: .napping); _ = session.handle(.timeElapsed, at: at(7)); last = 7
    case .snoozed: try drive(&session, to: .ringing); _ = session.handle(.snooze(nil), at: at(8)); last = 8
    case .finished: try drive(&session, to: .ringing); _ = session.handle(.dismiss, at: at(8)); last = 8
    case .cancelled: _ = session.handle(.cancel, at: at(0)); last = 0
    }
    try #require(session.phase == phase)
    return last
}

import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// A session taken up while its alarm rang continues that ring (issue 21, item 5): its ring limit
/// counts from the first ring, on virtual time.
@Suite("Session taken over mid-ring")
struct SessionTakeOverTests {
    var timers: SessionTimers {
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(8)
        return timers
    }

    func at(_ seconds: Double) -> Instant { Instant(offset: .milliseconds(Int64(seconds * 1000))) }

    @Test func theRingLimitCountsFromTheRingItContinues() {
        // Rang at 10 s, taken over at 13.2 s.
        var session = Session(timers: timers, resumingAlarmAt: at(10), reason: .nap, at: at(13.2), ringingSince: at(10))
        let effects = session.handle(.timeElapsed, at: at(13.2))
        #expect(session.phase == .ringing)
        #expect(effects.contains { if case .alarmStarted = $0 { true } else { false } })
        #expect(session.ringStartedAt == at(10))
        #expect(session.ringLimitDeadline == at(18))
        _ = session.handle(.timeElapsed, at: at(18))
        #expect(session.outcome == .ringLimitReached)
    }

    @Test func aRingWhoseLimitPassedEndsAtOnceAndANewRingAfterASnoozeHasItsWholeLimit() {
        var over = Session(timers: timers, resumingAlarmAt: at(10), reason: .nap, at: at(19), ringingSince: at(10))
        _ = over.handle(.timeElapsed, at: at(19))
        #expect(over.outcome == .ringLimitReached)

        var session = Session(timers: timers, resumingAlarmAt: at(10), reason: .nap, at: at(12), ringingSince: at(10))
        _ = session.handle(.timeElapsed, at: at(12))
        _ = session.handle(.snooze(.seconds(5)), at: at(13))
        _ = session.handle(.timeElapsed, at: at(18))
        #expect(session.phase == .ringing)
        #expect(session.ringStartedAt == at(18) && session.ringLimitDeadline == at(26))
    }

    @Test func withoutARingToContinueTheLimitCountsFromNow() {
        var session = Session(timers: timers, resumingAlarmAt: at(10), reason: .nap, at: at(12))
        _ = session.handle(.timeElapsed, at: at(12))
        #expect(session.ringLimitDeadline == at(20))
    }
}

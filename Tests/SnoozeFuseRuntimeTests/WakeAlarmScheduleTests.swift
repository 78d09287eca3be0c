import SnoozeFuseRuntime
import SnoozeFuseSystem
import Testing

/// When the wake alarm fires for an alarm, and what its record says, whatever is left of the nap
/// when it is armed (a resumed nap is often nearer its alarm than the head start).
@Suite struct WakeAlarmScheduleTests {
    private func at(_ seconds: Double) -> BootInstant { BootInstant(sinceBoot: .milliseconds(Int64(seconds * 1000))) }

    @Test("the head start before the alarm, or the alarm itself when that has passed, never after it nor at once",
          arguments: [
              // now, deadline: expected wake (nil: none)
              (100.0, 200.0, 195.0 as Double?),
              (100.0, 105.5, 100.5),
              (100.0, 105.0, 105.0),  // exactly the head start away: at the alarm (not at once)
              (100.0, 102.5, 102.5),  // a resumed nap, 2.5 s from its alarm
              (100.0, 100.0, nil),    // due now: it rings, nothing to wake for
              (100.0, 90.0, nil),     // overdue
          ])
    func instant(now: Double, deadline: Double, expected: Double?) {
        let wake = WakeAlarmSchedule.instant(for: at(deadline), now: at(now), headStart: .seconds(5))
        #expect(wake == expected.map(at))
        if let wake {
            #expect(wake > at(now))
            #expect(wake <= at(deadline))
        }
    }

    @Test func theRecordSaysHowLongBeforeTheAlarmItWakesAsTheKernelHoldsIt() {
        let full = WakeAlarmSchedule.message(armed: at(195), deadline: at(200), headStart: .seconds(5))
        #expect(full.contains("wakes at boot+195.000 s (CLOCK_BOOTTIME_ALARM), 5s before the alarm at boot+200.000 s"), "\(full)")
        let short = WakeAlarmSchedule.message(armed: at(100.5), deadline: at(102.9), headStart: .seconds(5))
        #expect(short.contains("2.4 s before the alarm (it was less than 5s away when armed) at boot+102.900 s"), "\(short)")
        #expect(!short.contains("5s before"))
        let with = WakeAlarmSchedule.message(armed: at(102.5), deadline: at(102.5), headStart: .seconds(5))
        #expect(with.contains("with the alarm (it was less than 5s away when armed)"), "\(with)")
    }
}

import SnoozeFuseAudio
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// The gate that holds the alarm's first write until its due instant: it never opens early, and a
/// cancel keeps it closed.
@Suite("Alarm start gate")
struct AlarmStartGateTests {
    @Test("it opens at its due instant, never before: past one 50 ms slice, within one, and at once")
    func opensAtDueNeverBefore() async throws {
        for delay in [Duration.milliseconds(60), .milliseconds(5), .zero] {
            let gate = AlarmStartGate(due: BootInstant.now.advanced(by: delay))
            let opened = try await onOwnThread { (gate.wait(), BootInstant.now) }
            #expect(opened.0)
            #expect(opened.1 >= gate.due, "opened \(gate.due.duration(to: opened.1)) after due, for a delay of \(delay)")
        }
    }

    @Test("cancelled before or while it waits, it stays closed")
    func cancelledStaysClosed() async throws {
        let early = AlarmStartGate(due: BootInstant.now.advanced(by: .seconds(30)))
        early.cancel()
        #expect(try await onOwnThread { early.wait() } == false)

        // Cancelled by another thread during the wait: it returns false well before its due instant.
        let gate = AlarmStartGate(due: BootInstant.now.advanced(by: .seconds(30)))
        SystemThread.start(named: "gate-cancel") {
            _ = SystemThread.sleep(until: BootInstant.now.advanced(by: .milliseconds(100)), unless: { false })
            gate.cancel()
        }
        let result = try await onOwnThread { (gate.wait(), BootInstant.now) }
        #expect(result.0 == false)
        #expect(result.1 < gate.due)
    }
}

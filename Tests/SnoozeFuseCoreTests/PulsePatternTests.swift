import SnoozeFuseCore
import Testing

@Suite("Pulse patterns")
struct PulsePatternTests {
    @Test func alarmAndHeartbeatPatterns() {
        #expect(PulsePattern.alarm(until: .milliseconds(2600)).map(\.offset) ==
                [.zero, .seconds(1), .milliseconds(1500), .seconds(2), .milliseconds(2500)])
        let beat = PulsePattern.heartbeat(bpm: 60)
        #expect(beat.interval == .seconds(1))
        #expect(beat.pulses.map(\.offset) == [.zero, .milliseconds(300)])
        #expect(beat.pulses.map(\.intensity) == [1, 0.7])
        #expect(PulsePattern.heartbeat(bpm: 500).interval == .milliseconds(500))
    }
}

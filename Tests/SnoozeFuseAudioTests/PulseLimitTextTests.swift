@testable import SnoozeFuseAudio
import Testing

/// How a sound server's time limit reads in an error: the 800 ms limit read "no answer within 0s".
@Suite struct PulseLimitTextTests {
    @Test func aLimitReadsAsItIs() {
        #expect(PulseConnection.spoken(PulseConnection.answerLimit) == "800 ms")
        #expect(PulseConnection.spoken(.seconds(1)) == "1 s")
        #expect(PulseConnection.spoken(.milliseconds(1500)) == "1.5 s")
    }
}

import SnoozeFuseSystem
import Testing

/// A length as poll's time limit: never shorter than the length, never a wrapped number.
struct PollMillisecondsTests {
    @Test func aLengthBecomesWholeMillisecondsPlusOneAndOneTooLongIsTheLongest() {
        #expect(Duration.microseconds(1).pollMilliseconds == 1)
        #expect(Duration.microseconds(1_500).pollMilliseconds == 2)
        #expect(Duration.milliseconds(200).pollMilliseconds == 201)
        #expect(Duration.seconds(60).pollMilliseconds == 60_001)
        #expect(Duration.seconds(30 * 86_400).pollMilliseconds == .max, "30 days do not fit poll's milliseconds")
        #expect(Duration.seconds(Int64.max).pollMilliseconds == .max)
    }
}

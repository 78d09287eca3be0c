import Testing
import SnoozeFuseCore

@Suite("Duration parsing")
struct DurationParsingTests {
    @Test("accepted forms", arguments: [
        ("90", 90), ("0", 0), ("90s", 90), ("20m", 1200), ("1h", 3600), ("1h30m", 5400),
        ("1h 30m", 5400), ("1h 5m 10s", 3910), ("2m30s", 150), ("25:00", 1500), ("0:05", 5),
        ("1:25:00", 5100), ("  45s ", 45), ("1H30M", 5400), ("24h", 86_400), ("00090", 90),
        ("1h\t30m", 5400), ("5m 0s", 300),
    ] as [(String, Int64)])
    func accepted(input: String, seconds: Int64) throws {
        #expect(try DurationParser.parseSeconds(input) == seconds)
        #expect(try DurationParser.parse(input) == .seconds(seconds))
    }

    @Test("rejected forms", arguments: [
        ("", DurationParseError.Reason.empty), ("   ", .empty),
        ("-5", .negative), ("-5m", .negative), ("-00:30", .negative), ("--dry-run", .malformed), ("-", .malformed),
        ("abc", .malformed), ("5x", .malformed), ("m", .malformed), ("1h30", .malformed),
        ("30m1h", .malformed), ("5m5m", .malformed), ("1.5m", .malformed), ("1,5", .malformed),
        ("25:0", .malformed), ("25:60", .malformed), (":30", .malformed), ("1:2:3:4", .malformed),
        ("1: 30", .malformed), ("5 m", .malformed), ("٣٠", .malformed), ("+5", .malformed),
        ("24h1s", .tooLong), ("86401", .tooLong), ("99999999999999999999", .tooLong),
        ("9223372036854775807s", .tooLong), ("9999999999h", .tooLong), ("25:00:00", .tooLong),
    ] as [(String, DurationParseError.Reason)])
    func rejected(input: String, reason: DurationParseError.Reason) {
        #expect(throws: DurationParseError(input: input, reason: reason)) {
            try DurationParser.parseSeconds(input)
        }
    }

    @Test func errorMessageShowsTheAcceptedForms() {
        let error = DurationParseError(input: "soon", reason: .malformed)
        #expect(error.description == "\"soon\" is not a duration. Use 90 (seconds), 90s, 20m, 1h30m, 1h 30m, 25:00 (minutes:seconds) or 1:25:00.")
    }
}

@Suite("Remaining-time display")
struct RemainingTimeTests {
    @Test("layout follows the configured duration", arguments: [
        (30, RemainingTimeLayout.seconds), (59, .seconds), (60, .minutesSeconds),
        (1200, .minutesSeconds), (3599, .minutesSeconds), (3600, .hoursMinutesSeconds),
    ] as [(Int64, RemainingTimeLayout)])
    func layout(configured: Int64, expected: RemainingTimeLayout) {
        #expect(RemainingTimeLayout(configured: .seconds(configured)) == expected)
    }

    @Test("whole seconds, rounded down, in a fixed layout", arguments: [
        (RemainingTimeLayout.minutesSeconds, Duration.milliseconds(65_999), "1m05s"),
        (.minutesSeconds, .seconds(65), "1m05s"),
        (.minutesSeconds, .milliseconds(59_999), "0m59s"),
        (.minutesSeconds, .milliseconds(999), "0m00s"),
        (.minutesSeconds, .seconds(1200), "20m00s"),
        (.seconds, .milliseconds(29_999), "29s"),
        (.seconds, .seconds(30), "30s"),
        (.seconds, .seconds(-3), "0s"),
        (.seconds, .milliseconds(-1), "0s"),
        (.hoursMinutesSeconds, .seconds(3600 + 5 * 60 + 3), "1h05m03s"),
        (.hoursMinutesSeconds, .seconds(59), "0h00m59s"),
    ])
    func format(layout: RemainingTimeLayout, remaining: Duration, expected: String) {
        #expect(layout.format(remaining) == expected)
    }

    @Test func aCountdownNeverChangesForm() {
        let layout = RemainingTimeLayout(configured: .seconds(65))
        var previous = Int64.max
        for tenth in stride(from: 650, through: 0, by: -1) {
            let text = layout.format(.milliseconds(tenth * 100))
            #expect(text.contains("m") && text.hasSuffix("s"))
            let parts = text.dropLast().split(separator: "m")
            let seconds = Int64(parts[0])! * 60 + Int64(parts[1])!
            #expect(seconds <= previous)
            #expect(seconds == Int64(tenth / 10))
            previous = seconds
        }
    }

    @Test func compactDescription() {
        #expect(Duration.seconds(30).compactDescription == "30s")
        #expect(Duration.seconds(1200).compactDescription == "20m")
        #expect(Duration.seconds(5400).compactDescription == "1h30m")
        #expect(Duration.seconds(65).compactDescription == "1m5s")
        #expect(Duration.zero.compactDescription == "0s")
    }

    /// A limit in a message (a server's 800 ms read "no answer within 0s" in whole seconds).
    @Test func millisecondsDescription() {
        #expect(Duration.milliseconds(800).millisecondsDescription == "800 ms")
        #expect(Duration.seconds(1).millisecondsDescription == "1.0 s")
        #expect(Duration.milliseconds(1450).millisecondsDescription == "1.4 s")
    }

    @Test func signedDescription() {
        #expect(Duration.seconds(60).signedDescription == "+1m")
        #expect(Duration.seconds(-105).signedDescription == "-1m45s")
        #expect(Duration.zero.signedDescription == "+0s")
    }
}

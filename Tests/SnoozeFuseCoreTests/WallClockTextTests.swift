import Foundation
import PropertyBased
import SnoozeFuseCore
import Testing

@Suite("Wall-clock text (ISO 8601, UTC, milliseconds)")
struct WallClockTextTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),        // a leap day of a 400-year leap year
        (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),      // 2100 is not a leap year
        (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
        (1_795_297_503_123, "2026-11-21T21:45:03.123Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ])
    func knownInstants(milliseconds: Int64, text: String) {
        #expect(WallClockText.iso8601(millisecondsSince1970: milliseconds) == text)
        #expect(WallClockText.millisecondsSince1970(iso8601: text) == milliseconds, "read back")
    }

    @Test(arguments: ["", "2026-11-21T21:45:03Z", "2026-11-21 21:45:03.123Z", "2026-13-01T00:00:00.000Z",
                      "2026-11-21T24:00:00.000Z", "2026-11-2xT21:45:03.123Z", "2026-11-21T21:45:03.123+01:00"])
    func otherTextIsNotRead(text: String) {
        #expect(WallClockText.millisecondsSince1970(iso8601: text) == nil)
    }

    @Test func secondsAreRoundedDownToTheMillisecond() {
        #expect(WallClockText.iso8601(secondsSince1970: 7.0099) == "1970-01-01T00:00:07.009Z")
        #expect(WallClockText.iso8601(secondsSince1970: -0.0001) == "1969-12-31T23:59:59.999Z")
    }

    /// Any number (one read from a damaged file, a `history --since` 20000000000 weeks back) is
    /// written, never trapped on: beyond the years 0000–9999, the nearest of them.
    @Test(arguments: [(1e300, "9999-12-31T23:59:59.999Z"), (-1e300, "0000-01-01T00:00:00.000Z"), (.infinity, "9999-12-31T23:59:59.999Z"),
                      (-.infinity, "0000-01-01T00:00:00.000Z"), (.nan, "1970-01-01T00:00:00.000Z"), (9.2e18, "9999-12-31T23:59:59.999Z"),
                      (-0.0, "1970-01-01T00:00:00.000Z")] as [(Double, String)])
    func anyNumberIsWrittenNeverTrapped(_ seconds: Double, _ text: String) {
        #expect(WallClockText.iso8601(secondsSince1970: seconds) == text)
    }

    /// Any instant from 1970 to 9999 reads the same as Foundation's ISO 8601 format in UTC (the
    /// quarter millisecond keeps both away from a rounding edge).
    @Test func agreesWithFoundationsFormat() async {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(secondsFromGMT: 0)!)
        await propertyCheck(count: 2000, input: Gen.int(in: 0...253_402_300_799_999)) { milliseconds in
            let date = Date(timeIntervalSince1970: (Double(milliseconds) + 0.25) / 1000)
            #expect(WallClockText.iso8601(millisecondsSince1970: Int64(milliseconds)) == date.formatted(style))
            #expect(WallClockText.millisecondsSince1970(iso8601: date.formatted(style)) == Int64(milliseconds))
        }
    }
}

/// A UTC time as ISO 8601 text with milliseconds, `2026-11-21T21:45:03.123Z`: the `wall` field of
/// every event record (SPEC §3).
///
/// Computed from the count of milliseconds alone (proleptic Gregorian calendar, the days-to-civil
/// conversion of H. Hinnant's "chrono-compatible low-level date algorithms"), so that an event does
/// not bring in Foundation's calendar and time-zone machinery: on Linux that is ICU, whose data a
/// nap then holds in memory (SPEC §8). The tests check it against Foundation's ISO 8601 format.
public enum WallClockText {
    /// `milliseconds` since 1970-01-01T00:00:00Z; years 0 through 9999 come out as four digits.
    public static func iso8601(millisecondsSince1970 milliseconds: Int64) -> String {
        let millisecondsPerDay: Int64 = 86_400_000
        let days = floorDivide(milliseconds, millisecondsPerDay)
        let ofDay = milliseconds - days * millisecondsPerDay
        let (year, month, day) = civil(daysSince1970: days)
        var text = ""
        text.reserveCapacity(24)
        append(year, digits: 4, to: &text)
        text += "-"
        append(month, digits: 2, to: &text)
        text += "-"
        append(day, digits: 2, to: &text)
        text += "T"
        append(ofDay / 3_600_000, digits: 2, to: &text)
        text += ":"
        append(ofDay / 60_000 % 60, digits: 2, to: &text)
        text += ":"
        append(ofDay / 1000 % 60, digits: 2, to: &text)
        text += "."
        append(ofDay % 1000, digits: 3, to: &text)
        text += "Z"
        return text
    }

    /// Seconds since 1970 (as `Date.timeIntervalSince1970` gives them), rounded down to the
    /// millisecond. Total: a time beyond the years 0000–9999 this form can write (a number read
    /// from a damaged file) is written as the nearest it can; not a number, as 1970.
    public static func iso8601(secondsSince1970 seconds: Double) -> String {
        let writable = seconds.isNaN ? 0 : min(max(seconds, -62_167_219_200), 253_402_300_799.999)
        return iso8601(millisecondsSince1970: Int64((writable * 1000).rounded(.down)))
    }

    /// The milliseconds since 1970 that `text` (exactly this type's form, `2026-11-21T21:45:03.123Z`)
    /// stands for, or nil for any other text: the inverse of ``iso8601(millisecondsSince1970:)``.
    public static func millisecondsSince1970(iso8601 text: String) -> Int64? {
        // Read in place, without an array of its bytes: `history` reads one per nap.
        var text = text
        return text.withUTF8 { millisecondsSince1970(iso8601: $0) }
    }

    private static func millisecondsSince1970(iso8601 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
              bytes[23] == UInt8(ascii: "Z") else { return nil }
        func field(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[start ..< start + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = field(0, 4), let month = field(5, 2), let day = field(8, 2), let hour = field(11, 2),
              let minute = field(14, 2), let second = field(17, 2), let millisecond = field(20, 3),
              (1 ... 12).contains(month), (1 ... 31).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
    }

    /// Seconds since 1970 for `text` (see ``millisecondsSince1970(iso8601:)``).
    public static func secondsSince1970(iso8601 text: String) -> Double? {
        millisecondsSince1970(iso8601: text).map { Double($0) / 1000 }
    }

    /// Days from 1970-01-01 to a date: the inverse of ``civil(daysSince1970:)``.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year        // years counted from March
        let era = floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Year, month (1–12) and day (1–31) of a day counted from 1970-01-01.
    static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468                          // days since 0000-03-01
        let era = floorDivide(shifted, 146_097)               // 400-year cycles
        let dayOfEra = shifted - era * 146_097                // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)   // from March 1
        let monthFromMarch = (5 * dayOfYear + 2) / 153        // 0 = March ... 11 = February
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    private static func append(_ value: Int64, digits: Int, to text: inout String) {
        text += padded(value, digits: digits)
    }

    /// `value` in decimal with leading zeros to `digits` (`07`), without `String(format:)`, whose
    /// first use costs a short command most of its start-up (Foundation's formatting).
    public static func padded(_ value: Int64, digits: Int) -> String {
        let decimal = String(value)
        return decimal.count < digits ? String(repeating: "0", count: digits - decimal.count) + decimal : decimal
    }
}

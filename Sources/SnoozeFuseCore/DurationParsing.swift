/// Parsing of the durations people type on the command line and in presets.
///
/// Accepted forms (SPEC §3):
/// - a bare number of seconds: `90`
/// - unit forms, largest unit first, each unit at most once, spaces allowed between parts:
///   `90s`, `20m`, `1h30m`, `1h 30m`, `1h 5m 10s`
/// - clock forms: `25:00` (minutes:seconds) and `1:25:00` (hours:minutes:seconds); every field
///   after the first has exactly two digits and is below 60.
///
/// Everything else is rejected with a ``DurationParseError`` whose description shows these forms.
public enum DurationParser {
    /// The longest duration accepted anywhere: a day. Longer values are almost certainly typos
    /// (`90h` for `90m`) and would otherwise overflow arithmetic on clock instants.
    public static let maximumSeconds: Int64 = 24 * 60 * 60

    /// A one-line summary of the accepted forms, for help texts and error messages.
    public static let acceptedForms = "90 (seconds), 90s, 20m, 1h30m, 1h 30m, 25:00 (minutes:seconds) or 1:25:00"

    /// Parses `text` into a whole number of seconds as a `Duration`.
    public static func parse(_ text: String) throws(DurationParseError) -> Duration {
        .seconds(try parseSeconds(text))
    }

    /// Parses `text` into a whole number of seconds.
    public static func parseSeconds(_ text: String) throws(DurationParseError) -> Int64 {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw DurationParseError(input: text, reason: .empty) }
        if trimmed.first == "-" {
            // "-5m" is a negative duration; "--dry-run" (an option taken as the value) is none.
            let next = trimmed.dropFirst().first
            throw DurationParseError(input: text, reason: next.map { ("0" ... "9").contains($0) } == true ? .negative : .malformed)
        }
        let seconds: Int64
        if trimmed.contains(":") {
            seconds = try parseClockForm(trimmed, original: text)
        } else {
            seconds = try parseUnitForm(trimmed, original: text)
        }
        guard seconds <= maximumSeconds else {
            throw DurationParseError(input: text, reason: .tooLong)
        }
        return seconds
    }

    // MARK: - Forms

    private static func parseClockForm(_ text: Substring, original: String) throws(DurationParseError) -> Int64 {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else {
            throw DurationParseError(input: original, reason: .malformed)
        }
        var total: Int64 = 0
        for (index, field) in fields.enumerated() {
            guard let value = try wholeNumber(field, original: original) else {
                throw DurationParseError(input: original, reason: .malformed)
            }
            if index > 0 {
                // Later fields are two-digit minutes or seconds, as on a clock face.
                guard field.count == 2, value < 60 else {
                    throw DurationParseError(input: original, reason: .malformed)
                }
            }
            total = try checkedMultiplyAdd(total, 60, value, original: original)
        }
        return total
    }

    private static func parseUnitForm(_ text: Substring, original: String) throws(DurationParseError) -> Int64 {
        // A bare number is seconds.
        if let bare = try wholeNumber(text, original: original) { return bare }

        var total: Int64 = 0
        var rest = text[...]
        var lastUnitRank = Int.max
        while !rest.isEmpty {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" })
            let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty, let value = try wholeNumber(digits, original: original) else {
                throw DurationParseError(input: original, reason: .malformed)
            }
            rest = rest.dropFirst(digits.count)
            guard let unit = rest.first else {
                // A number without a unit is only allowed on its own ("90").
                throw DurationParseError(input: original, reason: .malformed)
            }
            let (rank, multiplier): (Int, Int64)
            switch unit {
            case "h", "H": (rank, multiplier) = (3, 3600)
            case "m", "M": (rank, multiplier) = (2, 60)
            case "s", "S": (rank, multiplier) = (1, 1)
            default: throw DurationParseError(input: original, reason: .malformed)
            }
            // Units appear largest first and at most once: "30m1h" and "5m5m" are typos.
            guard rank < lastUnitRank else {
                throw DurationParseError(input: original, reason: .malformed)
            }
            lastUnitRank = rank
            rest = rest.dropFirst()
            total = try checkedMultiplyAdd(value, multiplier, total, original: original)
        }
        return total
    }

    /// A run of ASCII digits as a number; `nil` when `text` is not only digits.
    private static func wholeNumber(_ text: Substring, original: String) throws(DurationParseError) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var value: Int64 = 0
        for character in text.utf8 {
            value = try checkedMultiplyAdd(value, 10, Int64(character - UInt8(ascii: "0")), original: original)
        }
        return value
    }

    /// `a * b + c`, or a `.tooLong` error when it overflows or passes the maximum.
    private static func checkedMultiplyAdd(_ a: Int64, _ b: Int64, _ c: Int64, original: String) throws(DurationParseError) -> Int64 {
        let (product, overflow1) = a.multipliedReportingOverflow(by: b)
        let (sum, overflow2) = product.addingReportingOverflow(c)
        guard !overflow1, !overflow2, sum <= maximumSeconds else {
            throw DurationParseError(input: original, reason: .tooLong)
        }
        return sum
    }
}

/// A duration that could not be parsed; its description names the input and the accepted forms.
public struct DurationParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        case empty
        case negative
        case tooLong
        case malformed
    }

    public var input: String
    public var reason: Reason

    public init(input: String, reason: Reason) {
        self.input = input
        self.reason = reason
    }

    public var description: String {
        let what: String
        switch reason {
        case .empty: what = "a duration is required"
        case .negative: what = "\"\(input)\" is negative; durations count forward"
        case .tooLong: what = "\"\(input)\" is longer than the limit of 24h"
        case .malformed: what = "\"\(input)\" is not a duration"
        }
        return "\(what). Use \(DurationParser.acceptedForms)."
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let start = firstIndex(where: { !isSpace($0) }) ?? endIndex
        let end = lastIndex(where: { !isSpace($0) }).map { index(after: $0) } ?? start
        return self[start..<end]
    }
}

/// A time of day as people type it for `nap --until`: when the alarm should ring.
///
/// Accepted forms:
/// - 24-hour: `14:30`, `7:05`, `14:30:15` (hours 0–23; minutes and seconds two digits, below 60);
/// - 12-hour, with `am` or `pm` (any case, a space allowed before it): `2:30pm`, `2:30 PM`, `7am`,
///   `12am` (midnight), `12pm` (noon); hours 1–12.
///
/// A bare number (`14`) is refused: it reads as a duration. Everything else is refused with a
/// ``ClockTimeParseError`` whose description shows these forms.
public struct ClockTime: Sendable, Hashable, CustomStringConvertible {
    /// 0–23.
    public let hour: Int
    /// 0–59.
    public let minute: Int
    /// 0–59.
    public let second: Int

    public init?(hour: Int, minute: Int, second: Int = 0) {
        guard (0 ..< 24).contains(hour), (0 ..< 60).contains(minute), (0 ..< 60).contains(second) else { return nil }
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// A one-line summary of the accepted forms, for help texts and error messages.
    public static let acceptedForms = "14:30, 7:05, 14:30:15 (24-hour) or 2:30pm, 7am, 12pm (noon), 12am (midnight)"

    /// `14:30`, or `14:30:15` when the seconds are not zero.
    public var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(hour)):\(two(minute))" + (second == 0 ? "" : ":\(two(second))")
    }

    /// Reads `text` in one of the ``acceptedForms``.
    public init(parsing text: String) throws(ClockTimeParseError) {
        var rest = text.trimmingWhitespace().lowercased()[...]
        guard !rest.isEmpty else { throw ClockTimeParseError(input: text, reason: .empty) }
        var afternoon: Bool?
        for (suffix, isPM) in [("am", false), ("pm", true), ("a.m.", false), ("p.m.", true)] where rest.hasSuffix(suffix) {
            afternoon = isPM
            rest = rest.dropLast(suffix.count)
            while rest.last == " " { rest = rest.dropLast() }
            break
        }
        let fields = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count <= 3, afternoon != nil || fields.count >= 2 else {
            let bare = fields.count == 1 && !rest.isEmpty && rest.allSatisfy { $0.isASCII && $0.isNumber }
            throw ClockTimeParseError(input: text, reason: bare ? .bareNumber : .malformed)
        }
        var numbers: [Int] = []
        for (index, field) in fields.enumerated() {
            // The hour has one or two digits; minutes and seconds two, as on a clock face.
            let widths = index == 0 ? 1 ... 2 : 2 ... 2
            guard widths.contains(field.count), field.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(field) else {
                throw ClockTimeParseError(input: text, reason: .malformed)
            }
            numbers.append(value)
        }
        var hour = numbers[0]
        if let afternoon {
            guard (1 ... 12).contains(hour) else { throw ClockTimeParseError(input: text, reason: .outOfRange) }
            hour = hour % 12 + (afternoon ? 12 : 0)
        }
        guard let time = ClockTime(hour: hour, minute: numbers.count > 1 ? numbers[1] : 0, second: numbers.count > 2 ? numbers[2] : 0) else {
            throw ClockTimeParseError(input: text, reason: .outOfRange)
        }
        self = time
    }
}

/// A time of day that could not be read; its description names the input and the accepted forms.
public struct ClockTimeParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        case empty
        /// `14`: a number alone reads as a duration, not a time.
        case bareNumber
        /// `25:00`, `13pm`, `7:60`.
        case outOfRange
        case malformed
    }

    public var input: String
    public var reason: Reason

    public init(input: String, reason: Reason) {
        self.input = input
        self.reason = reason
    }

    public var description: String {
        let what = switch reason {
        case .empty: "a time of day is required"
        case .bareNumber:
            "\"\(input)\" is a number, not a time of day (write \(input):00\(Int(input).map { (1 ... 12).contains($0) } == true ? ", \(input)am or \(input)pm" : ""))"
        case .outOfRange: "\"\(input)\" is not a time on a clock (hours 0–23, or 1–12 with am/pm; minutes and seconds 00–59)"
        case .malformed: "\"\(input)\" is not a time of day"
        }
        return "\(what). Use \(ClockTime.acceptedForms)."
    }
}

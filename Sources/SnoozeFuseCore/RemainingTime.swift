/// How a countdown is laid out. The layout is chosen once from the *configured* duration, never
/// from the remaining value, so a 20-minute nap shows `0m59s` near its end rather than switching
/// to `59s`, and the line never flickers between forms (SPEC §2).
public enum RemainingTimeLayout: Sendable, Equatable {
    /// `45s`: for durations under a minute.
    case seconds
    /// `1m05s`: for durations from a minute up to, not including, an hour.
    case minutesSeconds
    /// `1h05m00s`: for durations of an hour or more.
    case hoursMinutesSeconds

    /// The layout for a countdown of `configured` length.
    public init(configured: Duration) {
        let seconds = configured.components.seconds
        if seconds >= 3600 {
            self = .hoursMinutesSeconds
        } else if seconds >= 60 {
            self = .minutesSeconds
        } else {
            self = .seconds
        }
    }

    /// `remaining` in this layout, in whole seconds rounded down (negative values show as zero).
    public func format(_ remaining: Duration) -> String {
        let total = max(0, remaining.components.seconds)
        let hours = total / 3600
        let minutes = (total % 3600) / 60
        let seconds = total % 60
        switch self {
        case .seconds:
            // Only reached for short configured durations, but a longer remaining value (after
            // `add`) still reads correctly in plain seconds.
            return "\(total)s"
        case .minutesSeconds:
            return "\(hours * 60 + minutes)m\(twoDigits(seconds))s"
        case .hoursMinutesSeconds:
            return "\(hours)h\(twoDigits(minutes))m\(twoDigits(seconds))s"
        }
    }

    private func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}

extension Duration {
    /// The duration in seconds as a `Double`, for display and JSON.
    public var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// A compact human form of a whole-second duration: `30s`, `20m`, `1h30m`, `1m05s`.
    public var compactDescription: String {
        let total = max(0, components.seconds)
        let hours = total / 3600, minutes = (total % 3600) / 60, seconds = total % 60
        var text = ""
        if hours > 0 { text += "\(hours)h" }
        if minutes > 0 { text += "\(minutes)m" }
        if seconds > 0 || text.isEmpty { text += "\(seconds)s" }
        return text
    }

    /// A short length for messages, to the millisecond below a second: `120 ms`, `1.4 s`.
    public var millisecondsDescription: String {
        let milliseconds = Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        return milliseconds < 1000 ? "\(Int(milliseconds.rounded())) ms" : DecimalText.fixed(milliseconds / 1000, decimals: 1) + " s"
    }

    /// A move by this duration, with its sign: `+1m`, `-1m45s` (as ``compactDescription``).
    public var signedDescription: String {
        (self < .zero ? "-" : "+") + (self < .zero ? .zero - self : self).compactDescription
    }
}

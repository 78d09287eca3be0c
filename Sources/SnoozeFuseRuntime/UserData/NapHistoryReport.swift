public import Foundation
import SnoozeFuseCore
public import SnoozeFuseStore

/// One recorded nap (see the store's `NapHistoryEntry`: times are ISO 8601 UTC text).
public typealias NapHistoryEntry = SnoozeFuseStore.NapHistoryEntry

extension NapHistoryEntry {
    /// When the nap started, in seconds since 1970 (nil for text this release did not write).
    public var startedSeconds: Double? { WallClockText.secondsSince1970(iso8601: startedAt) }
}

extension UserData {
    /// The naps started at or after `since` (every nap when nil), in the order they started; none
    /// when nothing is recorded yet.
    public func history(since: Date? = nil) throws(NapSetupError) -> [NapHistoryEntry] {
        guard let database = try reader() else { return [] }
        let bound = since.map { WallClockText.iso8601(secondsSince1970: $0.timeIntervalSince1970) }
        return try store { () throws(StoreError) in try database.naps(since: bound) }
    }

    /// Calls `body` with each nap started at or after `since`, in the order they started, one at a
    /// time: for a listing of a long history that need not hold it all.
    public func forEachNap(since: Date? = nil, _ body: (NapHistoryEntry) -> Void) throws(NapSetupError) {
        guard let database = try reader() else { return }
        let bound = since.map { WallClockText.iso8601(secondsSince1970: $0.timeIntervalSince1970) }
        try store { () throws(StoreError) in try database.forEachNap(since: bound, body) }
    }

    /// The columns of `history export --csv`, in order (the `naps` table's).
    public static var historyColumns: [String] { StoreDatabase.napColumns }
}

/// What the history says about your sleep: the summary under `snoozefuse history`.
public struct NapHistorySummary: Sendable, Hashable, Encodable {
    /// How many naps the summary is about.
    public var naps: Int
    /// Of those, how many started in the 7 days before now.
    public var napsThisWeek: Int
    /// The median time from the first hold to the final release, over the naps that have one.
    public var medianFallAsleepSeconds: Double?
    public var napsWithFallAsleep: Int
    /// Naps whose alarm rang, and of those: rung by the max failsafe, and snoozed at least once.
    public var alarms: Int
    public var maxAlarms: Int
    public var snoozedAlarms: Int
    /// The time to fall asleep of the last 30 naps, oldest first (nil: no hold that nap).
    public var fallAsleepLast30: [Double?]

    public init(_ naps: [NapHistoryEntry], now: Date = Date()) {
        var tally = Tally(now: now)
        for nap in naps { tally.add(nap) }
        self = tally.summary
    }

    /// The summary of naps taken in one at a time, in the order they started (nothing of a nap is
    /// kept but its time to fall asleep).
    public struct Tally: Sendable {
        /// ISO 8601 UTC text sorts as it counts: a start is compared with this as text.
        let weekAgo: String
        var naps = 0, thisWeek = 0, alarms = 0, maxAlarms = 0, snoozed = 0
        var fallAsleep: [Double] = []
        var last30: [Double?] = []

        public init(now: Date = Date()) {
            weekAgo = WallClockText.iso8601(secondsSince1970: now.timeIntervalSince1970 - 7 * 86_400)
        }

        public mutating func add(_ nap: NapHistoryEntry) {
            naps += 1
            if nap.startedAt >= weekAgo { thisWeek += 1 }
            if let seconds = nap.fallAsleepSeconds { fallAsleep.append(seconds) }
            if last30.count == 30 { last30.removeFirst() }
            last30.append(nap.fallAsleepSeconds)
            guard let reason = nap.alarmReason else { return }
            alarms += 1
            if reason == AlarmReason.max.rawValue { maxAlarms += 1 }
            if nap.snoozes > 0 { snoozed += 1 }
        }

        public var summary: NapHistorySummary {
            NapHistorySummary(naps: naps, napsThisWeek: thisWeek, medianFallAsleepSeconds: NapHistorySummary.median(fallAsleep.sorted()),
                              napsWithFallAsleep: fallAsleep.count, alarms: alarms, maxAlarms: maxAlarms, snoozedAlarms: snoozed,
                              fallAsleepLast30: last30)
        }
    }

    init(naps: Int, napsThisWeek: Int, medianFallAsleepSeconds: Double?, napsWithFallAsleep: Int, alarms: Int, maxAlarms: Int,
         snoozedAlarms: Int, fallAsleepLast30: [Double?]) {
        self.naps = naps
        self.napsThisWeek = napsThisWeek
        self.medianFallAsleepSeconds = medianFallAsleepSeconds
        self.napsWithFallAsleep = napsWithFallAsleep
        self.alarms = alarms
        self.maxAlarms = maxAlarms
        self.snoozedAlarms = snoozedAlarms
        self.fallAsleepLast30 = fallAsleepLast30
    }

    /// The median of sorted `values` (the mean of the middle two for an even count).
    static func median(_ sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        // Halved before they are added: two values edited to near the largest Double do not add up to infinity.
        return sorted.count % 2 == 1 ? sorted[middle] : sorted[middle - 1] / 2 + sorted[middle] / 2
    }
}

/// The small chart of time to fall asleep under the history.
public enum NapHistoryChart {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// One Unicode block a nap, its height in proportion to the longest (a space: no hold).
    public static func blocks(_ values: [Double?]) -> String {
        let longest = values.compactMap { $0 }.max() ?? 0
        return String(values.map { value -> Character in
            guard let value else { return " " }
            guard longest > 0 else { return blocks[0] }
            guard value < longest else { return blocks[blocks.count - 1] }
            // Clamped: a negative time, or any beside an infinite one (a database edited by hand).
            let level = (value / longest * Double(blocks.count - 1)).rounded()
            return blocks[Int(min(max(level.isFinite ? level : 0, 0), Double(blocks.count - 1)))]
        })
    }

    /// The same as plain whole seconds (`-`: no hold, or a number no `Int` holds), for NO_COLOR
    /// and output that is not a terminal.
    public static func numbers(_ values: [Double?]) -> String {
        values.map { $0.flatMap { Int(exactly: $0.rounded()) }.map { "\($0)" } ?? "-" }.joined(separator: " ")
    }
}

/// `history export --csv`: RFC 4180 (a header line, fields with a comma, a quote or a line break
/// quoted, quotes doubled, CRLF between records).
public enum NapHistoryCSV {
    /// The header line.
    public static var header: String { UserData.historyColumns.joined(separator: ",") + "\r\n" }

    /// The whole export.
    public static func text(_ naps: [NapHistoryEntry]) -> String {
        var text = Array(header.utf8)
        for nap in naps { append(nap, to: &text) }
        return String(decoding: text, as: UTF8.self)
    }

    /// One record, as bytes (an export of a long history is built in one buffer).
    public static func append(_ nap: NapHistoryEntry, to text: inout [UInt8]) {
        let fields: [String?] = [
            nap.napID, nap.startedAt, nap.endedAt, number(nap.fallAsleepSeconds), number(nap.napSeconds),
            number(nap.latenessMs), nap.outcome, nap.alarmReason, String(nap.snoozes), nap.sound, nap.output, nap.rungBy,
            nap.recordedBy, nap.preset, nap.takenOverBy, nap.hold,
        ]
        for (index, field) in fields.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            var quotedField = quoted(field ?? "")
            quotedField.withUTF8 { text.append(contentsOf: $0) }
        }
        text.append(UInt8(ascii: "\r"))
        text.append(UInt8(ascii: "\n"))
    }

    static func number(_ value: Double?) -> String? {
        // A whole number as one (`7260`), anything else as Swift writes it: a value edited into
        // the database (1e300, infinity) is written as it is, never turned into an Int64.
        value.map { Int64(exactly: $0).map(String.init) ?? "\($0)" }
    }

    static func quoted(_ field: String) -> String {
        guard field.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// `history --since`: a date (`2026-11-01`, local midnight), a date and time (`2026-11-01T14:00`,
/// local), or how far back from now (`7d`, `2w`, `36h`, `90m`, or any duration `nap` takes).
public enum HistorySince {
    /// The moment `text` names; one before 1970 (`20000000000w` back, `0001-01-01`) is 1970, before
    /// every nap (it trapped, turned into milliseconds).
    public static func parse(_ text: String, now: Date = Date()) throws(NapSetupError) -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func sinceNaps(_ date: Date) -> Date { max(date, Date(timeIntervalSince1970: 0)) }
        if let date = localDate(trimmed) { return sinceNaps(date) }
        if let seconds = unitSeconds(trimmed) { return sinceNaps(now.addingTimeInterval(-seconds)) }
        if let duration = try? DurationParser.parse(trimmed) { return sinceNaps(now.addingTimeInterval(-duration.secondsValue)) }
        throw NapSetupError(.usage, ["--since takes a date (2026-11-01), a date and time (2026-11-01T14:00), or how far back: 7d, 2w, 36h, 90m; not \"\(text)\"."])
    }

    /// `N` followed by w, d, h, m or s, largest first, each once (`1w 2d`, `36h`).
    static func unitSeconds(_ text: String) -> Double? {
        let units: [(Character, Double)] = [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]
        var rest = Substring(text), total = 0.0, lastRank = -1, matched = false
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let value = Double(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            guard let unit = rest.first, let rank = units.firstIndex(where: { $0.0 == unit.lowercased().first }), rank > lastRank else { return nil }
            total += value * units[rank].1
            lastRank = rank
            matched = true
            rest = rest.dropFirst()
        }
        return matched ? total : nil
    }

    /// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` in local time.
    static func localDate(_ text: String) -> Date? {
        let parts = text.split(separator: "T", maxSplits: 1).map(String.init)
        let day = parts[0].split(separator: "-").compactMap { Int($0) }
        guard day.count == 3, parts[0].count == 10 else { return nil }
        var time: [Int] = [0, 0, 0]
        if parts.count == 2 {
            let fields = parts[1].split(separator: ":").compactMap { Int($0) }
            guard (2 ... 3).contains(fields.count) else { return nil }
            time = fields + (fields.count == 2 ? [0] : [])
        }
        var components = DateComponents()
        (components.year, components.month, components.day) = (day[0], day[1], day[2])
        (components.hour, components.minute, components.second) = (time[0], time[1], time[2])
        guard (1 ... 12).contains(day[1]), (1 ... 31).contains(day[2]) else { return nil }
        return Calendar.current.date(from: components)
    }
}

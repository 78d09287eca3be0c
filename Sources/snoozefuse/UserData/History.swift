import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

// `history [--json] [--since D]` and `history export --csv`: the naps recorded when they ended.
// Data goes to standard output (one line per nap, the summary, the chart), messages to standard
// error. Exit statuses: 0; 64 a bad --since; 78 the database cannot be used.

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "The naps you took: one line each, then what they say about your sleep.",
        discussion: """
        Every nap is recorded when it ends, however it ends: dismissed, ring_limit, cancelled, \
        interrupted (both its process and its guardian were gone: recorded by the next nap, \
        `resume` or `stop` that finds it) or missed (`resume` found its alarm too late to ring). \
        A line says when it started, what held it (key, desktop or none: --hold), the time to \
        fall asleep (first hold to final release, or to the last input with --hold desktop; none \
        with --no-hold), how long it napped (the nap timer until the alarm), the outcome, why the \
        alarm rang (nap, or max: the failsafe) and how late, the snoozes, who rang it (nap, \
        guardian, resume) and the sound and output.

        Then a summary: naps in the last 7 days, the median time to fall asleep, how often the \
        max failsafe rang, how often you snoozed, and a chart of the time to fall asleep over the \
        last 30 naps (Unicode blocks on a terminal; plain seconds with NO_COLOR or when standard \
        output is not a terminal).

        Examples:
          snoozefuse history
          snoozefuse history --since 7d
          snoozefuse history --since 2026-11-01 --json | jq .summary
          snoozefuse history export --csv > naps.csv
        """,
        subcommands: [List.self, Export.self],
        defaultSubcommand: List.self
    )

    /// The `--since` both subcommands take.
    struct Since: ParsableArguments {
        @Option(help: ArgumentHelp("Only naps started since then: a date (2026-11-01), a date and time (2026-11-01T14:00), or how far back (7d, 2w, 36h, 90m).", valueName: "when"))
        var since: String?

        func validate() throws {
            if let since {
                do { _ = try HistorySince.parse(since) } catch { throw ValidationError(error.description) }
            }
        }

        /// The start of the naps asked for (all when nil).
        func bound() throws -> Date? {
            try since.map { text in try userData { _ throws(NapSetupError) in try HistorySince.parse(text) } }
        }

        func naps() throws -> [NapHistoryEntry] {
            let bound = try bound()
            return try userData { data throws(NapSetupError) in try data.history(since: bound) }
        }

        /// Calls `body` with each nap asked for, one at a time.
        func forEach(_ body: (NapHistoryEntry) -> Void) throws {
            let bound = try bound()
            try userData { data throws(NapSetupError) in try data.forEachNap(since: bound, body) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "One line per nap, then the summary and the chart (the default).")

        @OptionGroup var since: Since

        @Flag(help: "Print the naps and the summary as JSON on standard output.")
        var json = false

        func run() throws {
            writePendingHistory()
            if NapStatus.read().status == .interrupted {
                writeLine("snoozefuse: an interrupted nap is not in the history yet: `snoozefuse resume` rings it or records it as missed, `snoozefuse stop` records it as interrupted.", to: STDERR_FILENO)
            }
            if json {
                struct Document: Encodable {
                    var naps: [NapHistoryEntry]
                    var summary: NapHistorySummary
                }
                let naps = try since.naps()
                printJSON(Document(naps: naps, summary: NapHistorySummary(naps)))
                return
            }
            // One line per nap as it is read, into one buffer written at once; the summary is
            // tallied on the way (a long history is never held whole).
            // As wide as the terminal (or COLUMNS): below 117 columns the least needed go first.
            let layout = HistoryLayout(width: HistoryLayout.availableWidth())
            var text = Array(layout.header.utf8)
            var tally = NapHistorySummary.Tally()
            try since.forEach { nap in
                layout.append(nap, to: &text)
                tally.add(nap)
            }
            let summary = tally.summary
            guard summary.naps > 0 else {
                writeLine("snoozefuse: no naps recorded\(since.since == nil ? " yet (each nap is recorded when it ends)" : " since then").", to: STDERR_FILENO)
                return
            }
            // Blocks on a terminal that allows decoration; plain numbers for NO_COLOR, pipes and files.
            let environment = ProcessInfo.processInfo.environment
            let plain = environment["NO_COLOR"].map { !$0.isEmpty } ?? false || environment["TERM"] == "dumb"
            let said = HistoryText.summary(summary, blocks: isatty(STDOUT_FILENO) == 1 && !plain)
            // Fitted to the terminal like the table: long lines wrap at a word, indented.
            text += (layout.isFull ? said : HistoryText.wrapped(said, width: layout.width)).utf8
            write(bytes: text, to: STDOUT_FILENO)
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the history as CSV on standard output (a header line, then one record per nap).",
            discussion: "Columns: \(UserData.historyColumns.joined(separator: ", ")). Times are ISO 8601 UTC; durations in seconds, lateness in milliseconds.")

        @Flag(help: "CSV (RFC 4180): the format of the export, and for now the only one.")
        var csv = false

        @OptionGroup var since: Since

        func run() throws {
            var text = Array(NapHistoryCSV.header.utf8)
            try since.forEach { NapHistoryCSV.append($0, to: &text) }
            write(bytes: text, to: STDOUT_FILENO)
        }
    }
}

/// The text of `snoozefuse history`, appended as bytes to one buffer written at once (10,000 naps
/// print in milliseconds, SPEC §8: no string per line, no copy of a nap).
enum HistoryText {
    /// The BY column: who held the nap, in order (`nap`, then each that took it over: `guardian`,
    /// `resume`), the one that first rang it marked `*`: `nap*`, `nap>guardian*` (its process died,
    /// its guardian rang), `nap*>guardian` (it rang, died, its guardian rang on), `nap>guardian>resume*`.
    /// No `*`: nothing rang it.
    static func appendHolders(_ nap: NapHistoryEntry, _ text: inout [UInt8]) {
        let holders = ["nap"] + (nap.takenOverBy?.components(separatedBy: ", ") ?? [])
        let ringer = nap.rungBy.flatMap { holders.firstIndex(of: $0) }
        for (index, holder) in holders.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ">")) }
            append(holder, &text)
            if index == ringer { text.append(UInt8(ascii: "*")) }
        }
    }

    /// What the naps say, after a blank line: naps of the last 7 days, the median time to fall
    /// asleep, how often the failsafe rang and how often you snoozed, and the chart.
    static func summary(_ summary: NapHistorySummary, blocks: Bool) -> String {
        var text = "\n"
        text += "naps in the last 7 days: \(summary.napsThisWeek)\n"
        if let median = summary.medianFallAsleepSeconds {
            text += "median time to fall asleep: \(duration(median)) (over \(summary.napsWithFallAsleep) nap\(summary.napsWithFallAsleep == 1 ? "" : "s") with a hold)\n"
        } else {
            text += "median time to fall asleep: - (no nap with a hold; --no-hold naps have none)\n"
        }
        text += "the max failsafe rang: \(share(summary.maxAlarms, of: summary.alarms))\n"
        text += "snoozed: \(share(summary.snoozedAlarms, of: summary.alarms))\n"
        let count = summary.fallAsleepLast30.count
        let chartNaps = count == 1 ? "1 nap" : "\(count) naps"
        if blocks {
            let longest = summary.fallAsleepLast30.compactMap { $0 }.max().map { " (highest: \(duration($0)))" } ?? ""
            text += "time to fall asleep, last \(chartNaps): \(NapHistoryChart.blocks(summary.fallAsleepLast30))\(longest)\n"
        } else {
            text += "time to fall asleep, last \(chartNaps) (seconds): \(NapHistoryChart.numbers(summary.fallAsleepLast30))\n"
        }
        return text
    }

    /// `text`'s lines, each longer than `width` columns broken at its spaces, the rest of it
    /// indented by two (a word longer than the line stays whole).
    static func wrapped(_ text: String, width: Int) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = ""
            for word in line.split(separator: " ", omittingEmptySubsequences: false) {
                let candidate = current.isEmpty ? String(word) : current + " " + word
                if TerminalColumns.width(of: candidate) > width, !current.trimmingCharacters(in: .whitespaces).isEmpty {
                    out += current + "\n"
                    current = "  " + word
                } else {
                    current = candidate
                }
            }
            out += current + "\n"
        }
        return String(out.dropLast())
    }

    /// `field`'s UTF-8 bytes, copied at once.
    static func append(_ field: String, _ text: inout [UInt8]) {
        var field = field
        field.withUTF8 { text.append(contentsOf: $0) }
    }

    /// `3 of 11 alarms (27%)`.
    static func share(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "no alarm rang" }
        return "\(part) of \(whole) alarm\(whole == 1 ? "" : "s") (\(Int((Double(part) * 100 / Double(whole)).rounded()))%)"
    }

    /// What `write` appends, then spaces to `width` bytes, then two spaces.
    static func pad(_ width: Int, _ text: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        let start = text.count
        write(&text)
        text.append(contentsOf: repeatElement(UInt8(ascii: " "), count: max(width - (text.count - start), 0) + 2))
    }

    /// Whole seconds as `45s`, `4m12s`, `1h05m`.
    static func duration(_ seconds: Double) -> String {
        var text: [UInt8] = []
        appendDuration(seconds, &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// ``duration(_:)``, appended; `-` for none, or for a number of seconds no `Int` holds (a
    /// damaged record).
    static func appendDuration(_ seconds: Double?, _ text: inout [UInt8]) {
        guard let seconds, let total = Int(exactly: seconds.rounded()) else { return append("-", &text) }
        if total < 60 {
            appendInteger(total, &text)
            text.append(UInt8(ascii: "s"))
        } else if total < 3600 {
            appendInteger(total / 60, &text)
            text.append(UInt8(ascii: "m"))
            guard total % 60 != 0 else { return }
            appendInteger(total % 60, &text, digits: 2)
            text.append(UInt8(ascii: "s"))
        } else {
            appendInteger(total / 3600, &text)
            text.append(UInt8(ascii: "h"))
            appendInteger(total % 3600 / 60, &text, digits: 2)
            text.append(UInt8(ascii: "m"))
        }
    }

    /// `0.25 ms`, `12.40 ms`, `1203 ms`, `-0.25 ms`; `-` for none, or for a number no `Int` holds
    /// (a damaged record).
    static func appendMilliseconds(_ value: Double?, _ text: inout [UInt8]) {
        guard let value else { return append("-", &text) }
        if value >= 100 {
            guard let whole = Int(exactly: value.rounded()) else { return append("-", &text) }
            appendInteger(whole, &text)
        } else {
            guard let hundredths = Int(exactly: (value * 100).rounded()) else { return append("-", &text) }
            if hundredths < 0 { text.append(UInt8(ascii: "-")) }
            // Its magnitude, not abs(): -2^63 has no positive Int.
            appendInteger(Int(hundredths.magnitude / 100), &text)
            text.append(UInt8(ascii: "."))
            appendInteger(Int(hundredths.magnitude % 100), &text, digits: 2)
        }
        append(" ms", &text)
    }

    /// `value` in decimal, with leading zeros to at least `digits` digits.
    static func appendInteger(_ value: Int, _ text: inout [UInt8], digits: Int = 1) {
        if value < 0 { text.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        // The largest power of ten not above it (1 for 0), and so its number of digits; then the
        // digits in order, into the buffer as it is (no string, no reversal).
        var divisor: UInt = 1, count = 1
        while divisor <= magnitude / 10 {
            divisor *= 10
            count += 1
        }
        for _ in count ..< max(digits, count) { text.append(UInt8(ascii: "0")) }
        repeat {
            text.append(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
            divisor /= 10
        } while divisor > 0
    }

    /// `2026-11-21 19:52` on this machine's clock.
    static func localTime(_ seconds: Double, into text: inout [UInt8]) {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&time, &parts)
        func digits(_ value: Int32, _ count: Int) {
            var divisor: Int32 = 1
            for _ in 1 ..< count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / divisor % 10))
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        text.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        text.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        text.append(UInt8(ascii: " "))
        digits(parts.tm_hour, 2)
        text.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
    }
}

/// The columns `history` shows in a narrower terminal than its 117 columns: the least needed go
/// first (SNOOZES, ALARM, HOLD, LATE, BY, then OUTCOME), the start is shortened to the day and
/// time below 60 columns, and SOUND → OUTPUT is cut to what is left. Every column is always in
/// `--json` and the CSV export.
struct HistoryLayout {
    enum Column: CaseIterable {
        case started, hold, asleep, napped, outcome, alarm, late, snoozes, by, sound
    }

    /// The full table's width: its longest header and the usual rows.
    static let fullWidth = 117
    /// The columns dropped, in this order, until the rest fit.
    static let dropOrder: [Column] = [.snoozes, .alarm, .hold, .late, .by, .outcome]

    let columns: [Column]
    let width: Int
    /// A start written `MM-DD HH:MM` rather than with its year.
    let shortStart: Bool
    var isFull: Bool { columns.count == Column.allCases.count && !shortStart && width >= Self.fullWidth }

    /// The width to fit: COLUMNS when set, else standard output's terminal's; nil (no limit) for
    /// a pipe or a file.
    static func availableWidth() -> Int? {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    init(width given: Int?) {
        width = given ?? .max
        shortStart = width < 60
        var columns = Column.allCases
        for column in Self.dropOrder where Self.fixedWidth(columns, shortStart: shortStart) + 14 > width {
            columns.removeAll { $0 == column }
        }
        self.columns = columns
    }

    /// Each column's width with its two spaces after it (the sound's is what is left).
    static func width(of column: Column, shortStart: Bool) -> Int {
        switch column {
        case .started: shortStart ? 13 : 18
        case .hold, .asleep, .napped, .snoozes: 9
        case .outcome: 13
        case .alarm: 7
        case .late: 11
        case .by: 10
        case .sound: 0
        }
    }

    static func fixedWidth(_ columns: [Column], shortStart: Bool) -> Int {
        columns.reduce(0) { $0 + width(of: $1, shortStart: shortStart) }
    }

    static func title(_ column: Column) -> String {
        switch column {
        case .started: "STARTED"
        case .hold: "HOLD"
        case .asleep: "ASLEEP"
        case .napped: "NAPPED"
        case .outcome: "OUTCOME"
        case .alarm: "ALARM"
        case .late: "LATE"
        case .snoozes: "SNOOZES"
        case .by: "BY"
        case .sound: "SOUND → OUTPUT"
        }
    }

    var header: String {
        var text: [UInt8] = []
        for column in columns {
            let title = Self.title(column)
            if column == .sound {
                HistoryText.append(title, &text)
            } else {
                HistoryText.pad(Self.width(of: column, shortStart: shortStart) - 2, &text) { HistoryText.append(title, &$0) }
            }
        }
        return cut(String(decoding: text, as: UTF8.self)) + "\n"
    }

    /// One line: when the nap started, what held it, the time to fall asleep, the nap, how it
    /// ended, why the alarm rang and how late, the snoozes, who rang it, the sound and the output,
    /// as the layout keeps them. In the full table each field is written as bytes where it goes: no
    /// string made per field (rendering was 88 M of the 205 M instructions of `history` over
    /// 10,000 naps, with a string per number; SPEC §8); a narrower one cuts its line to the width.
    func append(_ nap: NapHistoryEntry, to text: inout [UInt8]) {
        let start = text.count
        for column in columns {
            let room = Self.width(of: column, shortStart: shortStart) - 2
            switch column {
            case .started:
                let at = text.count
                if let seconds = nap.startedSeconds { HistoryText.localTime(seconds, into: &text) } else { HistoryText.append(nap.startedAt, &text) }
                // `2026-11-20 10:00` → `11-20 10:00`.
                if shortStart, text.count - at > 5 { text.removeSubrange(at ..< at + 5) }
                HistoryText.append("  ", &text)
            case .hold: HistoryText.pad(room, &text) { HistoryText.append(nap.hold ?? "-", &$0) }
            case .asleep: HistoryText.pad(room, &text) { HistoryText.appendDuration(nap.fallAsleepSeconds, &$0) }
            case .napped: HistoryText.pad(room, &text) { HistoryText.appendDuration(nap.napSeconds, &$0) }
            case .outcome: HistoryText.pad(room, &text) { HistoryText.append(nap.outcome, &$0) }
            case .alarm: HistoryText.pad(room, &text) { HistoryText.append(nap.alarmReason ?? "-", &$0) }
            case .late: HistoryText.pad(room, &text) { HistoryText.appendMilliseconds(nap.latenessMs, &$0) }
            case .snoozes: HistoryText.pad(room, &text) { HistoryText.appendInteger(nap.snoozes, &$0) }
            case .by where isFull:
                HistoryText.pad(room, &text) { HistoryText.appendHolders(nap, &$0) }
            case .by:
                // Cut to its column in a narrower table (`nap>guardian>resume*` is 20 characters).
                var holders: [UInt8] = []
                HistoryText.appendHolders(nap, &holders)
                var shown = String(decoding: holders, as: UTF8.self)
                shown = TerminalColumns.fitted(shown, columns: room)
                // Padded by columns (`…` is three bytes).
                HistoryText.append(TerminalColumns.padded(shown, to: room) + "  ", &text)
            case .sound:
                HistoryText.append(nap.sound ?? "-", &text)
                if let output = nap.output {
                    HistoryText.append(" → ", &text)
                    HistoryText.append(output, &text)
                }
            }
        }
        if !isFull {
            let line = cut(String(decoding: text[start...], as: UTF8.self))
            text.removeSubrange(start...)
            HistoryText.append(line, &text)
        }
        text.append(UInt8(ascii: "\n"))
    }

    /// `line` within the width (counted in the terminal's columns: a sound called `目覚まし` takes
    /// 8), its end replaced by `…` when cut; trailing blanks dropped.
    func cut(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return TerminalColumns.fitted(line, columns: max(width, 1))
    }
}


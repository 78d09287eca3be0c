import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

/// The lines of the status area a nap keeps on its terminal: what it is doing and when the alarm
/// comes (`napping  18:42  [█████░░░░░]  wake at 14:32 (latest 14:42)`), and the keys that work
/// now. A pure function of what the records said and the terminal's width: every line fits in
/// `width - 1` columns, so nothing wraps; parts are left out, least useful first, on narrow ones.
struct StatusArea: Equatable {
    var phase: Phase = .ready
    var hold: HoldSource
    var tick: CountdownTick?
    var prompt: KeyPrompt
    /// The heartbeat glyph is lit (it turns at each beat while holding).
    var beatLit = false
    /// The snooze length, for the key line.
    var snooze: Duration
    var usesColour: Bool

    /// The area's lines for a terminal `width` columns wide.
    func lines(width: Int) -> [String] {
        let room = max(10, width - 1)
        return [fit(statusParts(room: room), room: room), keyLine(room: room)]
    }

    // MARK: - The status line

    private struct Part {
        var text: String
        /// Shown in colour (the phase).
        var style: String?
        /// Left out first when lower; 0 is never left out (but may be cut).
        var priority: Int
        /// The terminal columns it takes.
        var columns: Int { TerminalColumns.width(of: text) }
    }

    private func statusParts(room: Int) -> [Part] {
        var parts: [Part] = []
        let remaining = tick?.remainingText ?? ""
        switch phase {
        case .ready:
            let text = switch hold {
            case .key: "ready: hold any key while you drift off"
            case .desktop: "ready: use the machine as usual; let go of it as you drift off"
            case .none: "starting"
            }
            parts.append(Part(text: text, style: "1", priority: 0))
        case .holding:
            parts.append(Part(text: beatLit ? "♥" : "♡", style: "31", priority: 0))
            parts.append(Part(text: "holding", style: "1", priority: 0))
        case .releasing:
            parts.append(Part(text: "releasing", style: "1;36", priority: 0))
            parts.append(Part(text: remaining, priority: 0))
        case .napping:
            parts.append(Part(text: "napping", style: "1;34", priority: 0))
            parts.append(Part(text: remaining, priority: 0))
        case .ringing:
            parts.append(Part(text: "RINGING", style: "1;5;31", priority: 0))
            parts.append(Part(text: "wake up!", priority: 0))
            if !remaining.isEmpty { parts.append(Part(text: "(stops by itself in \(remaining))", priority: 1)) }
        case .snoozed:
            parts.append(Part(text: "snoozed", style: "1;33", priority: 0))
            parts.append(Part(text: remaining, priority: 0))
        case .finished, .cancelled:
            parts.append(Part(text: phase.rawValue, priority: 0))
        }
        if let wake = tick?.wakeAt {
            let label = phase == .snoozed ? "rings at" : "wake at"
            parts.append(Part(text: "\(label) \(Self.clock(wake))", priority: 3))
            if let latest = tick?.latestAt, latest != wake {
                parts.append(Part(text: "(latest \(Self.clock(latest)))", priority: 2))
            }
        }
        parts = parts.filter { !$0.text.isEmpty }
        // The progress bar takes what room is left after the rest, up to 20 cells, at least 4.
        if [.releasing, .napping, .snoozed].contains(phase), let progress = tick?.progress {
            while parts.map(\.columns).reduce(0, +) + 2 * parts.count + 6 > room,
                  let lowest = parts.indices.filter({ parts[$0].priority > 0 }).min(by: { parts[$0].priority < parts[$1].priority }) {
                parts.remove(at: lowest)
            }
            let left = room - parts.map(\.columns).reduce(0, +) - 2 * parts.count - 2
            if left >= 4 { parts.insert(Part(text: Self.bar(progress, cells: min(20, left)), priority: 1), at: min(2, parts.count)) }
        }
        return parts
    }

    /// Joins the parts that fit, leaving out the least useful first, and cuts what still does not.
    private func fit(_ parts: [Part], room: Int) -> String {
        var kept = parts
        while kept.map(\.columns).reduce(0, +) + 2 * max(0, kept.count - 1) > room,
              let lowest = kept.indices.filter({ kept[$0].priority > 0 }).min(by: { kept[$0].priority < kept[$1].priority }) {
            kept.remove(at: lowest)
        }
        var plain = ""
        var styled = ""
        for part in kept {
            let separator = plain.isEmpty ? "" : "  "
            let budget = room - TerminalColumns.width(of: plain) - separator.count
            guard budget > 0 else { break }
            let text = TerminalColumns.fitted(part.text, columns: budget)
            plain += separator + text
            if usesColour, let style = part.style {
                styled += separator + "\u{1B}[\(style)m" + text + "\u{1B}[0m"
            } else {
                styled += separator + text
            }
        }
        return styled
    }

    static func bar(_ progress: Double, cells: Int) -> String {
        let filled = Int((progress * Double(cells)).rounded(.down))
        return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: cells - filled) + "]"
    }

    /// `HH:MM` (or `HH:MM:SS`) on this machine's clock.
    static func clock(_ date: Date, seconds withSeconds: Bool = false) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return withSeconds ? String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
            : String(format: "%02d:%02d", parts.tm_hour, parts.tm_min)
    }

    // MARK: - The key line

    /// What the keys do now, most important first, and what has been typed of the word.
    private func keys() -> (parts: [String], typed: String?) {
        if prompt.confirmingCancel {
            return (["cancel nap? y yes, any other key no", "its alarm will not ring"], nil)
        }
        switch phase {
        case .ready: return (hold == .key ? ["hold any key", "Ctrl-C cancels"] : ["Ctrl-C cancels"], nil)
        case .holding:
            return (hold == .desktop ? ["no key or pointer input starts the release", "Ctrl-C cancels"] : ["let go as you fall asleep", "Ctrl-C cancels"], nil)
        case .releasing:
            switch hold {
            case .key: return (["hold a key again to start over", "Ctrl-C cancels"], nil)
            case .desktop: return (["any input starts over", "Ctrl-C cancels"], nil)
            case .none: return (["q cancels"], nil)
            }
        case .napping: return (["+/- one minute", "q cancels"], nil)
        case .ringing, .snoozed:
            let stop: String
            switch prompt.dismissal {
            case .word:
                let word = prompt.word ?? "?"
                if prompt.wrong { stop = "not the word: type \(word) then Enter" }
                else { stop = "type \(word) then Enter to stop" }
            case .hold:
                stop = prompt.holdingToDismiss ? "keep holding…" : "hold any key for 3 s to stop\(phase == .snoozed ? " for good" : "")"
            case .key:
                stop = "Enter stops"
            }
            var parts = [stop, phase == .ringing ? "s snoozes \(snooze.compactDescription)" : "+/- one minute"]
            if prompt.dismissal == .key { parts.append("q then y cancels") }
            // What has been typed of the word comes last: the cursor rests after it.
            return (parts, prompt.dismissal == .word ? prompt.typed : nil)
        case .finished, .cancelled: return ([], nil)
        }
    }

    /// The key line in `room` columns: the parts that fit, then what has been typed (whose end is
    /// kept when even that is too long); the word stands out in colour.
    private func keyLine(room: Int) -> String {
        let (parts, typed) = keys()
        let tail = typed.map { " > " + $0 } ?? ""
        var kept = parts
        let tailColumns = TerminalColumns.width(of: tail)
        while kept.count > 1, TerminalColumns.width(of: kept.joined(separator: " · ")) + tailColumns > room { kept.removeLast() }
        var line = kept.joined(separator: " · ")
        if TerminalColumns.width(of: line) + tailColumns > room {
            let budget = room - tailColumns
            line = budget > 1 ? TerminalColumns.fitted(line, columns: budget) : ""
        }
        line += tail
        // What was typed keeps its end: drop from the start until it fits.
        while TerminalColumns.width(of: line) > room, !line.isEmpty { line.removeFirst() }
        if usesColour, let word = prompt.word, phase == .ringing || phase == .snoozed, let range = line.range(of: " \(word) ") {
            line.replaceSubrange(range, with: " \u{1B}[1;4m\(word)\u{1B}[0m ")
        }
        return line
    }
}

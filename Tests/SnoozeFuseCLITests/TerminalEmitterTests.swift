import Foundation
import SnoozeFuseTestSupport
import Testing

/// The built-in `terminal` emitter (`libsnoozefuse-terminal.so` from the build folder) in a nap on
/// a real pty: what the terminal receives, replayed as a terminal would show it.
@Suite("terminal emitter on a real pty")
struct TerminalEmitterTests {
    @Test func heartbeatIsDrawnAfterTheCountdownWithTheBellOnlyWhereConfigured() async throws {
        let pty = try PtyRun()
        defer { pty.cleanUp() }
        // Two instances: a heart that rings the bell on full-strength pulses, and a "+" without bell.
        let result = try await pty.napOnPty("hold:1.5", [
            "--bpm", "120", "--emitter", "terminal:bell=1", "--emitter", "terminal:symbol=+",
        ], environment: ProcessInfo.processInfo.environment.filter { $0.key != "NO_COLOR" }.merging(["TERM": "xterm"]) { $1 })
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(result.standardError)")
        let replay = LineReplay(bytes: try Data(contentsOf: pty.transcript))

        // The status area's second line names the keys; the cursor rests at its end, so the
        // emitter's marks land one space after it while holding.
        let holdingKeys = "let go as you fall asleep · Ctrl-C cancels"
        let whileHolding = replay.draws.filter { $0.line.hasPrefix(holdingKeys) }
        // The heartbeat at 120 bpm for the ~2.2 s hold: beats (bold) and light beats (dim), from both.
        let hearts = whileHolding.filter { $0.drawn == " ♥" }
        for mark in [" ♥", " +"] {
            let marks = whileHolding.filter { $0.drawn == mark }
            #expect((3...6).contains(marks.filter { $0.style == "2;31" }.count), "light beats of \(mark): \(replay.draws)")
            #expect((3...6).contains(marks.filter { $0.style == "1;31" }.count), "full beats of \(mark): \(replay.draws)")
        }
        // Each mark sits one space after the key line's text, which stays whole…
        for draw in whileHolding {
            #expect(draw.line == holdingKeys + draw.drawn, "the line while a mark is shown")
        }
        // …and erasing the mark leaves exactly that text.
        let erasedWhileHolding = replay.erasures.filter { $0.hasPrefix(holdingKeys) }
        #expect(!erasedWhileHolding.isEmpty, "\(replay.erasures)")
        #expect(erasedWhileHolding.allSatisfy { $0 == holdingKeys }, "\(erasedWhileHolding)")
        // bell=1: the bell with every full-strength mark (and only then); the default: never.
        #expect(hearts.allSatisfy { $0.bell == ($0.style == "1;31") }, "\(hearts)")
        #expect(replay.draws.filter { $0.drawn == " +" }.allSatisfy { !$0.bell })
        // The alarm's pulses reach the terminal too: full-strength hearts with the bell.
        let lastHolding = replay.draws.lastIndex { $0.line.hasPrefix(holdingKeys) } ?? 0
        #expect(replay.draws[(lastHolding + 1)...].contains { $0.drawn == " ♥" && $0.style == "1;31" && $0.bell })
        // The area's phase lines, drawn again above the key line, never carry a mark left over from
        // the emitter (the "+" instance draws only its mark; the area's own heart is ♥ or ♡).
        #expect(replay.finishedLines.contains { $0.hasPrefix("napping") }, "\(replay.finishedLines)")
        #expect(replay.finishedLines.filter { $0.contains("holding") || $0.hasPrefix("releasing") || $0.hasPrefix("napping") }
            .allSatisfy { !$0.contains(" +") }, "\(replay.finishedLines)")
    }
}

/// A terminal's current line replayed from the bytes it received: enough of a VT100 for what
/// snoozefuse and the terminal plugin write (text, CR, LF, BEL, ESC 7 / ESC 8, CSI K, CSI 2K, CSI J,
/// CSI m; cursor movement up is ignored: each line feed starts a new line).
struct LineReplay {
    /// One drawing between ESC 7 (save the cursor) and ESC 8 (restore it).
    struct Draw: CustomStringConvertible {
        /// The whole line right after the drawing.
        var line: String
        /// What was written between save and restore, and its style (the CSI m parameters, `1;31`).
        var drawn: String
        var style: String?
        /// Whether BEL came right after the restore.
        var bell: Bool
        var description: String { "\(line.debugDescription) [\(style ?? "-")\(bell ? " BEL" : "")]" }
    }

    let draws: [Draw]
    /// The line after each CSI K (erase to the end of the line).
    let erasures: [String]
    /// The text written after each CSI 2K up to the next CR, LF or ESC 7 (the countdown's way of
    /// drawing its line), without the lines of messages (`snoozefuse: …`).
    let countdowns: [String]
    /// Each line as it stood when a line feed ended it (the status area's first line, messages).
    let finishedLines: [String]

    init(bytes: Data) {
        var draws: [Draw] = [], erasures: [String] = [], countdowns: [String] = [], finishedLines: [String] = []
        var line: [Unicode.Scalar] = [], column = 0, saved = 0
        var drawing: (text: String, style: String?)?
        var countdown: String?
        var restored = false
        func text(_ scalars: [Unicode.Scalar]) -> String { String(String.UnicodeScalarView(scalars)) }
        func endCountdown() {
            if let written = countdown, !written.isEmpty, !written.hasPrefix("snoozefuse:") { countdowns.append(written) }
            countdown = nil
        }
        var scalars = String(decoding: bytes, as: UTF8.self).unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            let afterRestore = restored
            restored = false
            switch scalar {
            case "\u{1B}":
                switch scalars.next() {
                case "7":
                    endCountdown()
                    saved = column
                    drawing = ("", nil)
                case "8":
                    column = saved
                    draws.append(Draw(line: text(line), drawn: drawing?.text ?? "", style: drawing?.style, bell: false))
                    drawing = nil
                    restored = true
                case "[":
                    var parameters = "", final: Unicode.Scalar?
                    while let next = scalars.next() {
                        if (0x40...0x7E).contains(next.value) {
                            final = next
                            break
                        }
                        parameters.unicodeScalars.append(next)
                    }
                    switch (final, parameters) {
                    case ("K", ""), ("K", "0"):
                        if column < line.count { line.removeSubrange(column...) }
                        erasures.append(text(line))
                    case ("J", ""), ("J", "0"):
                        // Erase to the end of the screen: on this one-line model, the rest of the line.
                        if column < line.count { line.removeSubrange(column...) }
                    case ("K", "2"):
                        endCountdown()
                        line = []
                        countdown = ""
                    case ("m", _) where drawing != nil && parameters != "0" && parameters != "":
                        drawing?.style = parameters
                    default:
                        break
                    }
                default:
                    break
                }
            case "\r":
                endCountdown()
                column = 0
            case "\n":
                endCountdown()
                finishedLines.append(text(line))
                line = []
                column = 0
            case "\u{07}":
                if afterRestore, !draws.isEmpty { draws[draws.count - 1].bell = true }
            default:
                while line.count < column { line.append(" ") }
                if column < line.count { line[column] = scalar } else { line.append(scalar) }
                column += 1
                if drawing != nil { drawing?.text.unicodeScalars.append(scalar) } else { countdown?.unicodeScalars.append(scalar) }
            }
        }
        endCountdown()
        self.draws = draws
        self.erasures = erasures
        self.countdowns = countdowns
        self.finishedLines = finishedLines
    }
}

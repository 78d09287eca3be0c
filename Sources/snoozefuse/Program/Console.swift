import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

/// How standard error may be decorated: a countdown line and colour only on a terminal, and
/// colour never when `NO_COLOR` is set.
struct TerminalStyle: Sendable {
    var isTerminal: Bool
    var usesColour: Bool
    /// The cursor may be moved (a status area redrawn in place): a terminal whose TERM is set and
    /// is not `dumb`, unless `--plain` asks for one line per change.
    var movesCursor: Bool

    static func detect(environment: [String: String] = ProcessInfo.processInfo.environment, plain: Bool = false) -> TerminalStyle {
        let isTerminal = isatty(STDERR_FILENO) == 1
        let noColour = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let term = environment["TERM"] ?? ""
        let movesCursor = isTerminal && !plain && !term.isEmpty && term != "dumb"
        return TerminalStyle(isTerminal: isTerminal, usesColour: movesCursor && !noColour, movesCursor: movesCursor)
    }
}

/// The CLI's view of a session: JSON lines on standard output (with `--events jsonl`), and for
/// people, messages and a status area on standard error (``StatusArea``: the phase, the time left,
/// a progress bar, when the alarm comes, the keys that work now). The area is redrawn in place only
/// when what it shows changes, which the session's records make at most once a second (a beat of
/// the heartbeat while holding, what is typed while ringing). Off a terminal, and with `--quiet`,
/// there is no area: each phase is a line, and the word that stops the alarm is said once.
final class Console {
    private let jsonLines: Bool
    private let quiet: Bool
    private let verbose: Bool
    private let terminal: TerminalStyle
    private let timers: SessionTimers
    private let presetName: String
    /// Keys can be typed (standard input is a terminal), so prompts are worth showing.
    private let keysOnTerminal: Bool
    /// What the area shows; nil when there is none.
    private var area: StatusArea?
    /// The lines on screen now (their visible lengths), for clearing them.
    private var drawn: [Int] = []
    private var drawnLines: [String] = []
    /// The last prompt said as a line (without an area).
    private var saidPrompt: KeyPrompt?
    /// The terminal went away: nothing more is drawn on it.
    private var detached = false
    /// The time of day the alarm rings (`--until`); nil: after the timers.
    var wakeAt: Date?
    /// The nap is in the background of its terminal: the area is not drawn (it would move the
    /// cursor about the shell's screen); messages are plain lines.
    private var background: Bool

    init(jsonLines: Bool, quiet: Bool, verbose: Bool = false, terminal: TerminalStyle, timers: SessionTimers,
         presetName: String, hold: HoldSource = .none, dismissal: DismissMode = .word, keysOnTerminal: Bool = false,
         showsArea: Bool = false, background: Bool = false) {
        self.background = background
        self.jsonLines = jsonLines
        self.quiet = quiet
        self.verbose = verbose
        self.terminal = terminal
        self.timers = timers
        self.presetName = presetName
        self.keysOnTerminal = keysOnTerminal
        if showsArea && terminal.isTerminal && !quiet {
            area = StatusArea(hold: hold, prompt: KeyPrompt(dismissal: dismissal), snooze: timers.snooze,
                              usesColour: terminal.usesColour)
        }
    }

    /// The set-up's warnings, kept while ``sayBeforeTheNap(_:)`` reads them to say them as one
    /// line; nil otherwise (a record's warning is said at once).
    private var earlyWarnings: [String]?

    /// What the set-up said before the nap began (``LinesUntilTheNap``): the warnings become one
    /// line on a terminal (all of them with --verbose, off a terminal, and in --events).
    func sayBeforeTheNap(_ lines: [String]) {
        earlyWarnings = []
        for line in lines {
            guard line.hasPrefix(Self.warningPrefix) else {
                message("snoozefuse: \(line)")
                continue
            }
            let text = String(line.dropFirst(Self.warningPrefix.count))
            if jsonLines { writeLine(SessionRecord(.warning, elapsed: .zero, wall: Date(), message: text).jsonLine(), to: STDOUT_FILENO) }
            warn(text)
        }
        // Said now, before the instruction that matters (never held until the nap's first record,
        // which a key hold or a taken-over nap may make only much later).
        sayEarlyWarnings()
    }

    static let warningPrefix = "warning: "

    /// A warning: kept for one line among the set-up's, else one line each (cut to the terminal's
    /// width), whole with --verbose or off a terminal.
    private func warn(_ text: String) {
        guard terminal.isTerminal, !verbose else { return message("snoozefuse: warning: \(text)") }
        if earlyWarnings != nil {
            earlyWarnings?.append(text)
        } else {
            message(oneLine("snoozefuse: warning: \(text)", then: ""))
        }
    }

    /// The warnings kept before the nap began, as one line naming `snoozefuse doctor`.
    private func sayEarlyWarnings() {
        guard let warnings = earlyWarnings else { return }
        earlyWarnings = nil
        guard let first = warnings.first else { return }
        let more = warnings.count > 1 ? " (and \(warnings.count - 1) more: --verbose shows them)" : ""
        message(oneLine("snoozefuse: warning: \(first)", then: more))
    }

    /// `text` on one line of the terminal, then `tail`; cut, it ends with where the rest is (where
    /// that still leaves room to read: below about 60 columns the pointer goes first). In plain
    /// mode (a screen reader, TERM=dumb) the line is whole: nothing is redrawn there, and the
    /// terminal wraps it.
    private func oneLine(_ text: String, then tail: String) -> String {
        let whole = text + tail
        if !terminal.movesCursor { return whole.split(separator: "\n").joined(separator: " ") }
        let columns = width() - 1
        if TerminalColumns.width(of: whole) <= columns, !whole.contains("\n") { return whole }
        let pointer = " (see snoozefuse doctor)"
        let tailColumns = TerminalColumns.width(of: tail)
        let room = columns - tailColumns - pointer.count
        if room >= 30 { return Self.shortened(text, to: room) + tail + pointer }
        return Self.shortened(text, to: max(columns - tailColumns, 10)) + tail
    }

    /// The opening line: what will happen and when.
    func announce(hold: HoldSource, idleAfter: Duration) {
        defer { redraw() }
        // Said even with --quiet: without it nothing on screen says what to do.
        if hold == .key && area == nil {
            message("snoozefuse: hold any key while you drift off and let go as you fall asleep (Ctrl-C cancels)")
        } else if hold == .desktop {
            message("snoozefuse: use the machine as usual; the release starts after \(idleAfter.compactDescription) without any key or pointer input, and input during it starts it over (Ctrl-C cancels)")
        }
        guard !quiet else { return }
        var line = if let wakeAt {
            "snoozefuse: release \(timers.release.compactDescription) → nap → alarm at \(NapStatus.localTime(wakeAt.timeIntervalSince1970, now: Date().timeIntervalSince1970))"
                + " (in \(Duration.seconds(max(wakeAt.timeIntervalSinceNow.rounded(), 0)).compactDescription))" + (hold == .none ? "" : ", however long the hold lasts, held or not")
        } else {
            "snoozefuse: release \(timers.release.compactDescription) → nap \(timers.nap.compactDescription) → alarm; failsafe after \(timers.max.compactDescription)"
        }
        if let ringLimit = timers.ringLimit { line += "; rings for \(ringLimit.compactDescription)" }
        line += " (\(presetName))"
        message(line)
    }

    /// When the nap timer started and when the alarm first rang, in the session's `t`: how long
    /// the person slept (from the end of the release).
    private var nappingSince: Double?
    private var sleptSeconds: Double?

    func finish(outcome: SessionOutcome) {
        sayEarlyWarnings()
        clearArea()
        area = nil
        guard !quiet else { return }
        switch outcome {
        case .dismissed:
            let slept = sleptSeconds.map { " You slept \(Duration.milliseconds(Int64(($0 * 1000).rounded())).compactDescription)." } ?? ""
            message("snoozefuse: alarm stopped.\(slept) \(Self.greeting(hour: Self.localHour()))")
        case .ringLimitReached: message("snoozefuse: the alarm rang for its limit and stopped.")
        case .cancelled: message("snoozefuse: cancelled.")
        }
    }

    /// A greeting for the hour it is (0–23).
    static func greeting(hour: Int) -> String {
        switch hour {
        case 5 ..< 12: "Good morning."
        case 12 ..< 18: "Good afternoon."
        case 18 ..< 22: "Good evening."
        default: "It is the middle of the night: welcome back."
        }
    }

    /// The hour of the day on this machine's clock.
    static func localHour() -> Int {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return Int(parts.tm_hour)
    }

    func render(_ record: SessionRecord) {
        if record.event == .phase {
            if record.phase == .napping, nappingSince == nil { nappingSince = record.t }
            if record.phase == .ringing, sleptSeconds == nil, let since = nappingSince { sleptSeconds = max(record.t - since, 0) }
        }
        if jsonLines, record.isEvent { writeLine(record.jsonLine(), to: STDOUT_FILENO) }
        // `fg` of a nap that runs says nothing to it: each record looks (at most one a second
        // while the area counts down), and the area comes back with the terminal.
        if background, area != nil, record.event == .countdown || record.event == .phase, ForegroundKeys.isForeground() == true {
            background = false
        }
        switch record.event {
        case .warning, .guardian:
            warn(record.message ?? "")
        case .output:
            // A device's error can be long: one short line beside the area (the whole of it is in
            // --events, and on screen with --verbose).
            let text = "snoozefuse: \(record.message ?? "the alarm moved to another output")"
            message(area != nil && !verbose ? Self.shortened(text, to: width() - 1) : text)
        case .sink:
            // What the alarm did to the sinks is said, as a warning is; how it routed and the
            // proof that it is heard, only with --verbose (always in --events).
            guard let text = record.message, !text.isEmpty else { return }
            if ["routed", "recovered"].contains(record.what ?? "") && !verbose { return }
            message("snoozefuse: \(text)")
        case .heard:
            guard verbose, let text = record.message else { return }
            message("snoozefuse: \(text)")
        case .terminal:
            // Said even with --quiet: in the background nothing else on screen says what happens.
            background = record.what == "background" ? true : record.what == "foreground" ? false : background
            if background {
                drawn = []
                drawnLines = []
            }
            message("snoozefuse: \(record.message ?? "")")
        case .hold:
            // Where a desktop's idle time comes from is said; how a key's release is read, with
            // --verbose (always in --events).
            guard !quiet, let text = record.message, !text.isEmpty, record.what != "key" || verbose else { return }
            message("snoozefuse: \(text)")
        case .adjusted:
            guard !quiet else { return }
            message("snoozefuse: \(record.message ?? "the alarm moved")")
        case .detached:
            detached = true
            area = nil
        case .missed:
            message("snoozefuse: \(record.message ?? "an alarm was missed")")
        case .phase:
            guard let phase = record.phase else { return }
            if area != nil {
                area?.phase = phase
                redraw()
            } else if !quiet {
                // Off a terminal, or plain: say each phase once, with when its timer runs out on
                // the clock and how long that is.
                var line = "snoozefuse: \(phase.rawValue)"
                if let until = record.untilWall {
                    let left = max(until.timeIntervalSinceNow, 0).rounded()
                    line += " until \(StatusArea.clock(until, seconds: true)) (in \(Duration.seconds(left).compactDescription))"
                }
                message(line)
            }
        case .countdown:
            guard let tick = record.countdown, area != nil else { return }
            area?.tick = tick
            area?.phase = tick.phase
            redraw()
        case .heartbeat:
            guard (record.intensity ?? 0) >= 1, area != nil else { return }
            area?.beatLit.toggle()
            redraw()
        case .prompt:
            guard let prompt = record.prompt else { return }
            if area != nil {
                area?.prompt = prompt
                redraw()
            } else {
                sayPrompt(prompt, phase: record.phase)
            }
        case .alarm, .alarmStopped, .end, .wakeAlarm:
            return
        }
    }

    /// Without an area: the word (or the hold) that stops the alarm, once per ring, and each wrong
    /// try or pending confirmation; not each key.
    private func sayPrompt(_ prompt: KeyPrompt, phase: Phase?) {
        defer { saidPrompt = prompt }
        guard keysOnTerminal, !detached else { return }
        let before = saidPrompt
        if prompt.confirmingCancel, before?.confirmingCancel != true {
            message("snoozefuse: cancel the nap? y cancels, any other key keeps it")
        } else if phase == .ringing, prompt.word != before?.word || prompt.dismissal != .word && before == nil {
            switch prompt.dismissal {
            case .word: message("snoozefuse: type \(prompt.word ?? "?") then Enter to stop the alarm (s snoozes)")
            case .hold: message("snoozefuse: hold any key for 3 s to stop the alarm (s snoozes)")
            case .key: message("snoozefuse: Enter stops the alarm (s snoozes)")
            }
        } else if prompt.wrong, before?.wrong != true {
            message("snoozefuse: not the word: type \(prompt.word ?? "?") then Enter")
        }
    }

    // MARK: - Drawing

    /// Draws the area again when what it shows changed, in one write.
    private func redraw() {
        guard let area, !detached, !background else { return }
        // The phase's countdown follows its phase record at once: draw them together.
        if let tick = area.tick, tick.phase != area.phase, area.phase != .finished, area.phase != .cancelled { return }
        let lines = area.lines(width: width())
        guard lines != drawnLines else { return }
        write(clearing() + lines.joined(separator: "\n"), to: STDERR_FILENO)
        drawnLines = lines
        drawn = lines.map(Self.visibleLength)
    }

    /// Moves to the top of the area and clears to the end of the screen (nothing when none is drawn).
    private func clearing() -> String {
        guard !drawn.isEmpty else { return "" }
        // A line drawn on a wider terminal may wrap now: count the rows it takes.
        let columns = max(1, width())
        let rows = drawn.map { max(1, ($0 + columns - 1) / columns) }.reduce(0, +)
        return "\r" + String(repeating: "\u{1B}[1A", count: rows - 1) + "\u{1B}[J"
    }

    private func clearArea() {
        if !drawn.isEmpty, !detached { write(clearing(), to: STDERR_FILENO) }
        drawn = []
        drawnLines = []
    }

    private func message(_ text: String) {
        guard !drawn.isEmpty, !detached else {
            writeLine(text, to: STDERR_FILENO)
            return
        }
        // The message goes above the area, which is drawn again below it.
        write(clearing() + text + "\n", to: STDERR_FILENO)
        drawn = []
        drawnLines = []
        redraw()
    }

    /// The terminal's width (80 when it does not say).
    private func width() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// The columns `line` takes on the terminal, its escape sequences (colour) taking none.
    static func visibleLength(_ line: String) -> Int {
        var count = 0
        var inEscape = false
        for character in line {
            if inEscape {
                if character.isLetter { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                count += TerminalColumns.width(of: character)
            }
        }
        return count
    }

    static func shortened(_ text: String, to room: Int) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? text
        return TerminalColumns.fitted(line, columns: max(2, room))
    }
}

/// `text` followed by spaces up to `width` columns of the terminal (never cut): a column of a
/// listing (`昼寝` takes 4). Not Foundation's `padding(toLength:withPad:startingAt:)`, which goes
/// through NSString (its first use scans every protocol conformance record of the binary, issue
/// 23), counts UTF-16 units rather than columns, and cuts a text longer than the width.
func padded(_ text: String, to width: Int) -> String {
    TerminalColumns.padded(text, to: width)
}

/// `texts` with `separator` between them. Not `joined(separator:)`: unspecialised in the standard
/// library, its first call asks the runtime for the element type by name, which scans every
/// protocol conformance record (issue 23: `presets list`, a short command).
func joined(_ texts: [String], separator: String) -> String {
    var line = ""
    for (index, text) in texts.enumerated() {
        if index > 0 { line += separator }
        line += text
    }
    return line
}

import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

/// How standard error may be decorated: a countdown line and colour only on a terminal, and
/// colour never when `NO_COLOR` is set.
struct TerminalStyle: Sendable {
    var isTerminal: Bool
    var usesColour: Bool

    static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) -> TerminalStyle {
        let isTerminal = isatty(STDERR_FILENO) == 1
        let noColour = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        return TerminalStyle(isTerminal: isTerminal, usesColour: isTerminal && !noColour && environment["TERM"] != "dumb")
    }
}

/// The CLI's view of a session: JSON lines on standard output (with `--events jsonl`), and for
/// people, messages and a one-line countdown on standard error. It renders the records a nap or a
/// preview gives, in order.
final class Console {
    private let jsonLines: Bool
    private let quiet: Bool
    private let terminal: TerminalStyle
    private let timers: SessionTimers
    private let presetName: String
    /// Whether a countdown line is on screen and must be cleared before a message.
    private var countdownShown = false
    /// The terminal went away: nothing more is drawn on it.
    private var detached = false

    init(jsonLines: Bool, quiet: Bool, terminal: TerminalStyle, timers: SessionTimers, presetName: String) {
        self.jsonLines = jsonLines
        self.quiet = quiet
        self.terminal = terminal
        self.timers = timers
        self.presetName = presetName
    }

    /// The opening line: what will happen and when.
    func announce(holdMode: Bool) {
        if holdMode {
            // Said even with --quiet: without it nothing on screen says what to do.
            message("snoozefuse: hold any key while you drift off and let go as you fall asleep (Ctrl-C cancels)")
        }
        guard !quiet else { return }
        var line = "snoozefuse: release \(timers.release.compactDescription) → nap \(timers.nap.compactDescription) → alarm; failsafe after \(timers.max.compactDescription)"
        if let ringLimit = timers.ringLimit { line += "; rings for \(ringLimit.compactDescription)" }
        line += " (\(presetName))"
        message(line)
    }

    func finish(outcome: SessionOutcome) {
        clearCountdown()
        guard !quiet else { return }
        switch outcome {
        case .dismissed: message("snoozefuse: alarm stopped. Good morning.")
        case .ringLimitReached: message("snoozefuse: the alarm rang for its limit and stopped.")
        case .cancelled: message("snoozefuse: cancelled.")
        }
    }

    func render(_ record: SessionRecord) {
        if jsonLines, record.isEvent { writeLine(record.jsonLine(), to: STDOUT_FILENO) }
        switch record.event {
        case .warning:
            message("snoozefuse: warning: \(record.message ?? "")")
        case .output:
            message("snoozefuse: \(record.message ?? "the alarm moved to another output")")
        case .adjusted:
            guard !quiet else { return }
            message("snoozefuse: \(record.message ?? "the alarm moved")")
        case .detached:
            detached = true
        case .missed:
            message("snoozefuse: \(record.message ?? "an alarm was missed")")
        case .phase:
            guard !quiet, !terminal.isTerminal, let phase = record.phase else { return }
            // Off a terminal there is no countdown line: say each phase once.
            var line = "snoozefuse: \(phase.rawValue)"
            if let until = record.until { line += " until t=\(until)s" }
            message(line)
        case .countdown:
            if let tick = record.countdown { countdown(tick) }
        case .alarm, .alarmStopped, .end, .heartbeat:
            return
        }
    }

    private func countdown(_ tick: CountdownTick) {
        guard !quiet, !detached, terminal.isTerminal, tick.phase != .ringing else { return }
        let label: String
        switch tick.phase {
        case .holding: label = "holding (let go when you are drifting off)"
        case .releasing: label = "releasing: nap starts in \(tick.remainingText)"
        case .napping: label = "napping: alarm in \(tick.remainingText)"
        case .snoozed: label = "snoozed: alarm again in \(tick.remainingText)"
        default: label = tick.phase.rawValue
        }
        let styled = terminal.usesColour ? "\u{1B}[2m\(label)\u{1B}[0m" : label
        countdownShown = true
        write("\r\u{1B}[2K" + styled, to: STDERR_FILENO)
    }

    private func clearCountdown() {
        if countdownShown { write("\r\u{1B}[2K", to: STDERR_FILENO) }
        countdownShown = false
    }

    private func message(_ text: String) {
        clearCountdown()
        writeLine(text, to: STDERR_FILENO)
    }
}

import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import Synchronization

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
/// people, messages and a one-line countdown on standard error.
final class ConsoleObserver: SessionObserver {
    private let jsonLines: Bool
    private let quiet: Bool
    private let terminal: TerminalStyle
    private let timers: SessionTimers
    private let presetName: String
    /// Whether a countdown line is on screen and must be cleared before a message.
    private let countdownShown = Mutex(false)
    /// The phase of the last `phase` record (hold mode reads keys differently per phase).
    private let phase = Mutex(Phase.ready)
    /// When the session started (its first record, `t` = 0), once it has.
    private let origin = Mutex<ContinuousClock.Instant?>(nil)

    var currentPhase: Phase { phase.withLock { $0 } }

    /// The instant records' `t` counts from: the session's start (the first hold, or the start
    /// with --no-hold), or now while it has not started, so records made outside the driver
    /// (output changes, plugin notices) share the driver's time line.
    var sessionOrigin: ContinuousClock.Instant {
        origin.withLock { $0 } ?? .now
    }

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

    func record(_ record: SessionRecord) async {
        if record.event == .phase, let next = record.phase {
            phase.withLock { $0 = next }
            origin.withLock { $0 = $0 ?? ContinuousClock.now.advanced(by: .seconds(-record.t)) }
        }
        if jsonLines { writeLine(record.jsonLine(), to: STDOUT_FILENO) }
        switch record.event {
        case .warning:
            message("snoozefuse: warning: \(record.message ?? "")")
        case .output:
            message("snoozefuse: \(record.message ?? "the alarm moved to another output")")
        case .phase:
            guard !quiet, !terminal.isTerminal, let phase = record.phase else { return }
            // Off a terminal there is no countdown line: say each phase once.
            var line = "snoozefuse: \(phase.rawValue)"
            if let until = record.until { line += " until t=\(until)s" }
            message(line)
        case .alarm, .alarmStopped, .end:
            return
        }
    }

    func countdown(_ tick: CountdownTick) async {
        guard !quiet, terminal.isTerminal, tick.phase != .ringing else { return }
        let label: String
        switch tick.phase {
        case .holding: label = "holding (let go when you are drifting off)"
        case .releasing: label = "releasing: nap starts in \(tick.remainingText)"
        case .napping: label = "napping: alarm in \(tick.remainingText)"
        case .snoozed: label = "snoozed: alarm again in \(tick.remainingText)"
        default: label = tick.phase.rawValue
        }
        let styled = terminal.usesColour ? "\u{1B}[2m\(label)\u{1B}[0m" : label
        countdownShown.withLock { $0 = true }
        writeAll("\r\u{1B}[2K" + styled, to: STDERR_FILENO)
    }

    private func clearCountdown() {
        let shown = countdownShown.withLock { shown in
            defer { shown = false }
            return shown
        }
        if shown { writeAll("\r\u{1B}[2K", to: STDERR_FILENO) }
    }

    private func message(_ text: String) {
        clearCountdown()
        writeLine(text, to: STDERR_FILENO)
    }
}

/// Writes `text` and a newline in one write, so lines from different places never interleave.
func writeLine(_ text: String, to fileDescriptor: Int32) {
    writeAll(text + "\n", to: fileDescriptor)
}

import Glibc
public import SnoozeFuseCore
public import SnoozeFuseSystem

/// The last-resort alarm: the terminal bell plus a visible, flashing message, repeated every
/// second until stopped (on the nap's event loop, at instants of the boot-time clock, so a step of
/// the wall clock never stalls it). It needs no sound card, no library and no plugin, so it is
/// what the alarm falls back to when every audio output has failed.
public final class TerminalBellAlarm: AlarmOutput, Sendable {
    private let fileDescriptor: Int32
    private let isTerminal: Bool
    private let usesColour: Bool
    private let interval: Duration
    private let hint: String
    /// Whether each ring also draws its line; not when a status area on the same terminal shows
    /// the alarm (the line would overwrite it).
    private let drawsLine: Bool
    /// One plain line at the first ring, then the bell alone: no cursor movement (`--plain`,
    /// TERM=dumb; a screen reader reads each line once).
    private let plain: Bool
    /// How reports name this output.
    private let output: String
    private let loop: EventLoop
    private let state = Locked(State())

    private struct State {
        var running = false
        var reason = AlarmReason.nap
        var repeater: Task<Void, Never>?
    }

    /// - Parameters:
    ///   - fileDescriptor: where to write (standard error by default, so standard output stays data).
    ///   - isTerminal: whether it is a terminal; off a terminal the message is written plainly.
    ///   - usesColour: flash in reverse video (only on a terminal, never with `NO_COLOR`).
    ///   - hint: how to stop the alarm, shown in the message.
    ///   - loop: where the repeat runs and what it is timed on (pass the nap's).
    public init(
        fileDescriptor: Int32 = 2,
        isTerminal: Bool,
        usesColour: Bool,
        interval: Duration = .seconds(1),
        hint: String,
        outputName: String = "terminal bell",
        drawsLine: Bool = true,
        plain: Bool = false,
        loop: EventLoop
    ) {
        self.drawsLine = drawsLine
        self.plain = plain
        self.output = outputName
        self.fileDescriptor = fileDescriptor
        self.isTerminal = isTerminal
        self.usesColour = usesColour && isTerminal
        self.interval = interval
        self.hint = hint
        self.loop = loop
    }

    /// A bell on the controlling terminal (`/dev/tty`) when there is one, so the alarm is seen and
    /// heard even when standard error is redirected; otherwise on standard error.
    public static func onControllingTerminal(usesColour: Bool, hint: String, drawsLine: Bool = true, plain: Bool = false,
                                             loop: EventLoop) -> TerminalBellAlarm {
        let tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        if tty >= 0 {
            // Kept open for the life of the process: the alarm may ring at any time.
            return TerminalBellAlarm(fileDescriptor: tty, isTerminal: true, usesColour: usesColour, hint: hint, drawsLine: drawsLine,
                                     plain: plain, loop: loop)
        }
        return TerminalBellAlarm(fileDescriptor: 2, isTerminal: isatty(2) == 1, usesColour: usesColour, hint: hint, drawsLine: drawsLine,
                                 plain: plain, loop: loop)
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        let alreadyRunning = state.withLock { state -> Bool in
            defer {
                state.running = true
                state.reason = reason
            }
            return state.running
        }
        // The first signal is written before returning, so the driver measures real lateness.
        writeAll(ring(flash: true, reason: reason, first: !alreadyRunning), to: fileDescriptor)
        if !alreadyRunning {
            let clock = loop.clock, interval = interval
            let repeater = Task(executorPreference: loop) { [self] in
                var flash = false
                var next = clock.now.advanced(by: interval)
                while (try? await clock.sleep(until: next)) != nil {
                    guard let reason = state.withLock({ $0.running ? $0.reason : nil }) else { return }
                    writeAll(ring(flash: flash, reason: reason, first: false), to: fileDescriptor)
                    flash.toggle()
                    // Woken late (a suspend): the next ring comes a whole interval later, not at once.
                    next = max(next.advanced(by: interval), clock.now)
                }
            }
            state.withLock { state in
                if state.running { state.repeater = repeater } else { repeater.cancel() }
            }
        }
        return AlarmStartReport(output: output)
    }

    public func stop() async {
        let wasRunning = state.withLock { state -> Bool in
            defer {
                state.running = false
                state.repeater?.cancel()
                state.repeater = nil
            }
            return state.running
        }
        if wasRunning && isTerminal && drawsLine && !plain {
            writeAll("\r\u{1B}[2K", to: fileDescriptor)
        }
    }

    private func ring(flash: Bool, reason: AlarmReason, first: Bool) -> String {
        let text = "ALARM (\(reason == .nap ? "nap over" : "max limit reached")) \(hint)"
        if plain { return first ? "\u{07}\(text)\n" : "\u{07}" }
        guard isTerminal else { return "\u{07}\(text)\n" }
        guard drawsLine else { return "\u{07}" }
        if usesColour && flash {
            return "\u{07}\r\u{1B}[2K\u{1B}[1;7m \(text) \u{1B}[0m"
        }
        return "\u{07}\r\u{1B}[2K \(text) "
    }
}

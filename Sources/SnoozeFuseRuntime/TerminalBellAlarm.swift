import Foundation
public import SnoozeFuseCore

/// The last-resort alarm: the terminal bell plus a visible, flashing message, repeated every
/// second on a thread of its own until stopped. It needs no sound card, no library and no plugin,
/// so it is what the alarm falls back to when every audio output has failed.
///
/// Safe to share: all mutable state lives behind `condition`.
public final class TerminalBellAlarm: AlarmOutput, @unchecked Sendable {
    private let fileDescriptor: Int32
    private let isTerminal: Bool
    private let usesColour: Bool
    private let interval: TimeInterval
    private let hint: String
    /// How reports name this output.
    private let output: String
    private let condition = NSCondition()
    private var running = false
    /// Bumped on every start and stop, so a bell thread from an earlier start ends at its next turn.
    private var generation = 0
    private var reason: AlarmReason = .nap

    /// - Parameters:
    ///   - fileDescriptor: where to write (standard error by default, so standard output stays data).
    ///   - isTerminal: whether it is a terminal; off a terminal the message is written plainly.
    ///   - usesColour: flash in reverse video (only on a terminal, never with `NO_COLOR`).
    ///   - hint: how to stop the alarm, shown in the message.
    public init(
        fileDescriptor: Int32 = 2,
        isTerminal: Bool,
        usesColour: Bool,
        interval: Duration = .seconds(1),
        hint: String,
        outputName: String = "terminal bell"
    ) {
        self.output = outputName
        self.fileDescriptor = fileDescriptor
        self.isTerminal = isTerminal
        self.usesColour = usesColour && isTerminal
        self.interval = interval.secondsValue
        self.hint = hint
    }

    /// A bell on the controlling terminal (`/dev/tty`) when there is one, so the alarm is seen and
    /// heard even when standard error is redirected; otherwise on standard error.
    public static func onControllingTerminal(usesColour: Bool, hint: String) -> TerminalBellAlarm {
        let tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        if tty >= 0 {
            // Kept open for the life of the process: the alarm may ring at any time.
            return TerminalBellAlarm(fileDescriptor: tty, isTerminal: true, usesColour: usesColour, hint: hint)
        }
        return TerminalBellAlarm(fileDescriptor: 2, isTerminal: isatty(2) == 1, usesColour: usesColour, hint: hint)
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        startSounding(reason: reason)
    }

    public func stop() async {
        stopSounding()
    }

    private func startSounding(reason: AlarmReason) -> AlarmStartReport {
        condition.lock()
        let alreadyRunning = running
        running = true
        self.reason = reason
        if !alreadyRunning { generation += 1 }
        let myGeneration = generation
        condition.unlock()
        // The first signal is written before returning, so the driver measures real lateness.
        write(ring(flash: true, reason: reason))
        if !alreadyRunning {
            let thread = Thread { [self] in repeatUntilStopped(generation: myGeneration) }
            thread.name = "snoozefuse-bell"
            thread.start()
        }
        return AlarmStartReport(output: output)
    }

    private func stopSounding() {
        condition.lock()
        let wasRunning = running
        running = false
        generation += 1
        condition.broadcast()
        condition.unlock()
        if wasRunning && isTerminal {
            write("\r\u{1B}[2K")
        }
    }

    private func repeatUntilStopped(generation mine: Int) {
        var flash = false
        condition.lock()
        while generation == mine {
            let wakeAt = Date(timeIntervalSinceNow: interval)
            while generation == mine && condition.wait(until: wakeAt) {}
            guard generation == mine else { break }
            let reason = self.reason
            condition.unlock()
            write(ring(flash: flash, reason: reason))
            flash.toggle()
            condition.lock()
        }
        condition.unlock()
    }

    private func ring(flash: Bool, reason: AlarmReason) -> String {
        let text = "ALARM (\(reason == .nap ? "nap over" : "max limit reached")) \(hint)"
        guard isTerminal else { return "\u{07}\(text)\n" }
        if usesColour && flash {
            return "\u{07}\r\u{1B}[2K\u{1B}[1;7m \(text) \u{1B}[0m"
        }
        return "\u{07}\r\u{1B}[2K \(text) "
    }

    private func write(_ text: String) {
        writeAll(text, to: fileDescriptor)
    }
}

/// Writes all of `text` to `fileDescriptor` in as few writes as the kernel allows, retrying partial
/// writes and EINTR, so lines from different threads never interleave mid-line. Errors are
/// dropped: this is for the terminal and standard streams, and a closed one leaves nowhere better
/// to report to.
public func writeAll(_ text: String, to fileDescriptor: Int32) {
    var text = text
    text.withUTF8 { buffer in
        guard var pointer = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            let written = Foundation.write(fileDescriptor, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            pointer += written
            remaining -= written
        }
    }
}

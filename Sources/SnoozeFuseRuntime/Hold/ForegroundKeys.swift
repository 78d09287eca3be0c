import Glibc
public import SnoozeFuseCore
import SnoozeFuseSystem

/// The nap's keys under the shell's job control (SPEC §9: a nap in the background never stops for
/// the terminal). A process that is not in its terminal's foreground group and changes the
/// terminal's modes or reads from it is stopped by the kernel (SIGTTOU, SIGTTIN): a nap started
/// with `&` would not ring until `fg`. So the nap ignores both, and reads keys (in single-key
/// mode) only while it is in the foreground:
///
/// - started in the background, it never touches the terminal's modes or reads it;
/// - `fg` gives it the terminal's keys from then on. `fg` of a job that runs sends it nothing (a
///   shell sends SIGCONT only to a stopped job), so in the background it looks every 2 s, and
///   when the terminal has input (the shell's own typing wakes it at most once a second): its
///   keys work within 2 s of `fg`. In the foreground that wait ends at its next look and
///   nothing wakes for this any more. The SIGCONT of `bg` reaches the nap through libdispatch's
///   handler, on whichever thread takes it, whose blocking call then fails with EINTR: every wait
///   here takes that for nothing and goes on;
/// - stopped (SIGSTOP) and sent on with `bg`, it stops reading without touching the modes (the
///   shell put back its own when the job stopped);
/// - Ctrl-Z (SIGTSTP) does not stop it: its alarm would not ring. It goes on and says how to
///   cancel it instead.
///
/// `said` gets each move (foreground or not) and the refusal of Ctrl-Z, in words.
public final class ForegroundKeys: KeySource, Sendable {
    private let fileDescriptor: Int32
    private let reader: TerminalKeyReader
    private let said: @Sendable (JobControlNews) -> Void
    private let state = Locked(State())

    private struct State {
        var releaseGap: Duration?
        var deliver: (@Sendable (KeyInput) -> Void)?
        var reading = false
        var signals: SignalWatcher?
        var stopped = false
        /// The background wait that runs, if any: its number, and the write end of the pipe that
        /// ends it (-1 when it has none).
        var wait: (number: UInt64, wake: Int32)?
        var waits: UInt64 = 0
        /// How many times the reader was started: the end of an earlier one is not the current's.
        var readerStarts: UInt64 = 0
    }

    /// nil when `fileDescriptor` is not a terminal.
    public init?(fileDescriptor: Int32 = 0, said: @escaping @Sendable (JobControlNews) -> Void) {
        guard let reader = TerminalKeyReader(fileDescriptor: fileDescriptor) else { return nil }
        self.fileDescriptor = fileDescriptor
        self.reader = reader
        self.said = said
    }

    /// Whether this process is in the foreground of the terminal on `fileDescriptor`; nil when that
    /// is not a terminal (or says nothing).
    public static func isForeground(_ fileDescriptor: Int32 = 0) -> Bool? {
        guard isatty(fileDescriptor) == 1 else { return nil }
        let group = tcgetpgrp(fileDescriptor)
        return group < 0 ? nil : group == getpgrp()
    }

    /// Never stopped by its terminal from now on: SIGTTOU and SIGTTIN are ignored (a write or a
    /// change of modes from the background goes ahead; a read fails). Call it before anything can
    /// touch the terminal.
    public static func neverStopForTheTerminal() {
        signal(SIGTTOU, SIG_IGN)
        signal(SIGTTIN, SIG_IGN)
    }

    public func start(releaseGap: Duration?, deliver: @escaping @Sendable (KeyInput) -> Void) {
        Self.neverStopForTheTerminal()
        let watcher = SignalWatcher(signals: [SIGCONT, SIGTSTP]) { [weak self] number in
            if number == SIGTSTP { self?.said(.suspendRefused) } else { self?.look() }
        }
        state.withLock { state in
            state.releaseGap = releaseGap
            state.deliver = deliver
            state.signals = watcher
            state.stopped = false
        }
        look(starting: true)
    }

    public func stop() {
        let (reading, signals) = state.withLock { state in
            defer {
                state.reading = false
                state.stopped = true
                state.signals = nil
                state.deliver = nil
            }
            return (state.reading, state.signals)
        }
        withExtendedLifetime(signals) {}
        endBackgroundWait()
        // The modes are put back only where they are still this process's to put back.
        if reading { reader.stop(restoringModes: Self.isForeground(fileDescriptor) == true) }
    }

    /// Reads keys in the foreground, and not in the background; says when that changes.
    private func look(starting: Bool = false) {
        let foreground = Self.isForeground(fileDescriptor) ?? false
        typealias Start = (gap: Duration?, deliver: @Sendable (KeyInput) -> Void, number: UInt64)
        let change: (start: Start?, stopReading: Bool, news: JobControlNews?) = state.withLock { state in
            guard !state.stopped, let deliver = state.deliver else { return (nil, false, nil) }
            if foreground, !state.reading {
                state.reading = true
                state.readerStarts += 1
                return ((state.releaseGap, deliver, state.readerStarts), false, starting ? nil : .foreground)
            }
            if !foreground, state.reading {
                state.reading = false
                return (nil, true, .background(startedThere: false))
            }
            return (nil, false, starting && !foreground ? .background(startedThere: true) : nil)
        }
        if change.stopReading { reader.stop(restoringModes: false) }
        // In the foreground a running wait ends by itself within 2 s, finding it so: a look that
        // was held up (a SIGSTOP between its test and here) cannot end the wait that a later one,
        // in the background, needs.
        if !foreground { waitInTheBackground() }
        if let (gap, deliver, number) = change.start {
            reader.start(releaseGap: gap) { [weak self] input in
                if input == .closed, let self {
                    // The end of a reader that a newer one replaced (it failed in the background,
                    // then `bg` and `fg` came first): nothing to do with the terminal now.
                    if self.state.withLock({ $0.readerStarts != number }) { return }
                    // In the background a read fails (SIGTTIN is ignored): that is not the
                    // terminal going away, only the nap going to the background. The reader has
                    // ended: it is stopped, so that `fg` can start it again.
                    if Self.isForeground(self.fileDescriptor) == false {
                        self.reader.stop(restoringModes: false)
                        self.look()
                        return
                    }
                }
                deliver(input)
            }
            // A stop() that came meanwhile found no reader to stop yet.
            if state.withLock({ $0.stopped }) { reader.stop(restoringModes: Self.isForeground(fileDescriptor) == true) }
        }
        if let news = change.news { said(news) }
    }

    /// Waits on a thread of its own for input on the terminal while in the background, then looks
    /// again (one wait at a time; ``endBackgroundWait()`` ends it). Only that end, the terminal
    /// hanging up, or the nap found in the foreground ends the wait: an interrupted or failed poll,
    /// or a wake pipe that breaks, leaves it looking every 2 s, since a wait that ended by itself
    /// would leave the nap deaf to `fg` for good.
    private func waitInTheBackground() {
        // Without a pipe the wait is ended by the state alone, within 2 s.
        let pipe = makePipe() ?? (read: -1, write: -1)
        let number = state.withLock { state -> UInt64? in
            guard !state.stopped, state.wait == nil else { return nil }
            state.waits += 1
            state.wait = (state.waits, pipe.write)
            return state.waits
        }
        guard let number else {
            if pipe.read >= 0 { close(pipe.read) }
            if pipe.write >= 0 { close(pipe.write) }
            return
        }
        let input = fileDescriptor
        let launched = SystemThread.start(named: "snoozefuse-bg") { [weak self] in
            defer { if pipe.read >= 0 { close(pipe.read) } }
            let running = { [weak self] in self?.state.withLock { !$0.stopped && $0.wait?.number == number } ?? false }
            let found = Self.waitForForeground(input: input, wake: pipe.read, while: running)
            // Over (the terminal hung up, or found in the foreground): no longer registered.
            guard let self, self.endBackgroundWait(number: number), found else { return }
            self.look()
        }
        if !launched {
            // No thread (the process has too many): only a SIGCONT looks again.
            if pipe.read >= 0 { close(pipe.read) }
            endBackgroundWait(number: number)
        }
    }

    /// Blocks until this process is in the foreground of `input` (true), or `running` says the
    /// wait has ended, or the terminal hung up (false).
    private static func waitForForeground(input: Int32, wake: Int32, while running: () -> Bool) -> Bool {
        var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while running() {
            if Self.isForeground(input) == true { return true }
            let ready = poll(&fds, 2, 2_000)
            guard ready > 0 else { continue } // timed out, interrupted or failed: look again
            if fds[1].revents != 0 {
                // Ended (a byte), or its write end is gone: the state says which.
                if fds[1].revents & Int16(POLLIN) == 0 { fds[1].fd = -1 }
                continue
            }
            // The terminal hung up: the nap goes on without it, nothing to look for.
            if fds[0].revents & Int16(POLLHUP | POLLNVAL) != 0 { return false }
            if Self.isForeground(input) == true { return true }
            // The shell's own typing: look again in a second, not at every byte.
            var pause = fds[1]
            _ = poll(&pause, 1, 1_000)
        }
        return false
    }

    /// Ends the background wait (`number`, or whichever runs); whether it was running.
    @discardableResult
    private func endBackgroundWait(number: UInt64? = nil) -> Bool {
        state.withLock { state in
            guard let wait = state.wait, number == nil || wait.number == number else { return false }
            if wait.wake >= 0 {
                var byte: UInt8 = 0
                _ = write(wait.wake, &byte, 1)
                close(wait.wake)
            }
            state.wait = nil
            return true
        }
    }
}

/// What a nap's terminal does to it under job control, for the nap to say.
public enum JobControlNews: Sendable, Hashable {
    /// The nap is in the background (`&`, or `bg` after a stop); `startedThere` when it started so.
    case background(startedThere: Bool)
    /// `fg` brought it to the foreground: its keys work again.
    case foreground
    /// Ctrl-Z was pressed and ignored.
    case suspendRefused

    public var message: String {
        switch self {
        case .background(true):
            "in the background: no key of this terminal holds the nap, so its release starts now (as with --no-hold); it rings by itself; "
                + "`fg` brings it to this terminal, and `snoozefuse status`, `stop`, `snooze` and `add` reach it from anywhere"
        case .background(false):
            "in the background now: this terminal's keys are not read until `fg`; the nap goes on and rings by itself"
        case .foreground:
            "in the foreground again: this terminal's keys work"
        case .suspendRefused:
            "Ctrl-Z does not pause a nap (its alarm would not ring): it goes on. Ctrl-C cancels it; `snoozefuse stop` stops it from another terminal"
        }
    }
}

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
///   keys work within 2 s of `fg`. In the foreground it never wakes for this;
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
        /// The write end of the pipe that ends the background wait (-1 when none runs).
        var waitWake: Int32 = -1
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
        let change: (start: (Duration?, @Sendable (KeyInput) -> Void)?, stopReading: Bool, news: JobControlNews?) = state.withLock { state in
            guard !state.stopped, let deliver = state.deliver else { return (nil, false, nil) }
            if foreground, !state.reading {
                state.reading = true
                return ((state.releaseGap, deliver), false, starting ? nil : .foreground)
            }
            if !foreground, state.reading {
                state.reading = false
                return (nil, true, .background(startedThere: false))
            }
            return (nil, false, starting && !foreground ? .background(startedThere: true) : nil)
        }
        if change.stopReading { reader.stop(restoringModes: false) }
        if !foreground { waitInTheBackground() } else { endBackgroundWait() }
        if let (gap, deliver) = change.start {
            reader.start(releaseGap: gap) { [weak self] input in
                // In the background a read fails (SIGTTIN is ignored): that is not the terminal
                // going away, only the nap going to the background.
                if input == .closed, let self, Self.isForeground(self.fileDescriptor) == false {
                    self.look()
                    return
                }
                deliver(input)
            }
        }
        if let news = change.news { said(news) }
    }

    /// Waits on a thread of its own for input on the terminal while in the background, then looks
    /// again (one wait at a time; ``endBackgroundWait()`` ends it).
    private func waitInTheBackground() {
        guard let pipe = makePipe() else { return }
        let started = state.withLock { state -> Bool in
            guard !state.stopped, state.waitWake < 0 else { return false }
            state.waitWake = pipe.write
            return true
        }
        guard started else {
            close(pipe.read)
            close(pipe.write)
            return
        }
        let input = fileDescriptor
        SystemThread.start(named: "snoozefuse-bg") { [weak self] in
            defer { close(pipe.read) }
            var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)]
            while true {
                let ready = poll(&fds, 2, 2_000)
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 {
                    if Self.isForeground(input) == true { break }
                    continue
                }
                // Ended, or the terminal hung up (the nap goes on without it): nothing to look for.
                guard ready > 0, fds[1].revents == 0, fds[0].revents & Int16(POLLIN) != 0 else { return }
                if Self.isForeground(input) == true { break }
                // The shell's own typing: look again in a second, not at every byte.
                if poll(&fds[1], 1, 1_000) != 0 { return }
            }
            guard let self else { return }
            let mine = self.state.withLock { state -> Bool in
                guard state.waitWake == pipe.write else { return false }
                close(state.waitWake)
                state.waitWake = -1
                return true
            }
            if mine { self.look() }
        }
    }

    private func endBackgroundWait() {
        state.withLock { state in
            guard state.waitWake >= 0 else { return }
            var byte: UInt8 = 0
            _ = write(state.waitWake, &byte, 1)
            close(state.waitWake)
            state.waitWake = -1
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

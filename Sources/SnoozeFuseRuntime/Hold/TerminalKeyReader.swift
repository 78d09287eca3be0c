import Dispatch
import Glibc
public import SnoozeFuseCore
import SnoozeFuseSystem

/// Reads single keys from a terminal on a thread of its own and reports them as ``KeyInput``; the
/// nap decides what they mean (``NapKeys``: a hold while drifting off, a minute more or less while
/// napping, the word that stops the alarm). Ctrl-C still raises SIGINT.
///
/// While running, the terminal is in non-canonical, no-echo mode; `stop()` restores it, and so
/// does every exit path of the CLI. Safe to share: the mutable state lives behind `state`.
public final class TerminalKeyReader: Sendable {
    private let fileDescriptor: Int32
    private let state = Locked(State())

    private struct State {
        var saved: termios?
        var wakeWriter: Int32 = -1
        var running = false
    }

    /// `nil` when `fileDescriptor` is not a terminal (a pipe, a file, `/dev/null`).
    public init?(fileDescriptor: Int32 = 0) {
        guard isatty(fileDescriptor) == 1 else { return nil }
        self.fileDescriptor = fileDescriptor
    }

    deinit { stop() }

    /// Switches the terminal to single-key mode and starts delivering what it reports. With a
    /// `releaseGap` (hold mode), `quiet` follows each burst of keys after that long without a byte:
    /// it must be longer than the autorepeat delay (250–660 ms on common desktops).
    public func start(releaseGap: Duration?, deliver: @escaping @Sendable (KeyInput) -> Void) {
        let started = state.withLock { state -> (wake: Int32, gapMilliseconds: Int32)? in
            guard !state.running else { return nil }
            var attributes = termios()
            guard tcgetattr(fileDescriptor, &attributes) == 0 else { return nil }
            guard let pipe = makePipe() else { return nil }
            let fds = [pipe.read, pipe.write]
            state.saved = attributes
            attributes.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(fileDescriptor, TCSANOW, &attributes)
            state.wakeWriter = fds[1]
            state.running = true
            let gap = releaseGap.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
            return (fds[0], gap)
        }
        guard let started else { return }
        let input = fileDescriptor
        SystemThread.start(named: "snoozefuse-keys") {
            Self.readKeys(from: input, wake: started.wake, gapMilliseconds: started.gapMilliseconds, deliver: deliver)
        }
    }

    /// Waits, on the calling thread, for a key held down for ``NapKeys/dismissHold`` (its
    /// autorepeat without a pause), at most `limit`. True when it was held long enough; false when
    /// the time ran out or the terminal went away. The terminal is restored either way.
    public func waitForHold(limit: Duration) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let held = Locked(false)
        let interpreter = Locked(NapKeys<BootInstant>(holdMode: false, dismissal: .hold))
        start(releaseGap: .milliseconds(750)) { input in
            let events = interpreter.withLock { $0.events(for: input, in: .ringing, at: BootInstant.now) }
            if events.contains(.dismiss) {
                held.withLock { $0 = true }
                done.signal()
            } else if input == .closed {
                done.signal()
            }
        }
        let milliseconds = Int(limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000)
        _ = done.wait(timeout: .now() + .milliseconds(milliseconds))
        stop()
        return held.withLock { $0 }
    }

    /// Stops reading and restores the terminal as it was.
    public func stop() {
        stop(restoringModes: true)
    }

    /// Stops reading; puts the terminal's modes back only with `restoringModes` (not from the
    /// background, where they are the shell's now).
    public func stop(restoringModes: Bool) {
        state.withLock { state in
            if restoringModes, var saved = state.saved {
                tcsetattr(fileDescriptor, TCSANOW, &saved)
            }
            state.saved = nil
            if state.wakeWriter >= 0 {
                var byte: UInt8 = 0
                _ = write(state.wakeWriter, &byte, 1)
                close(state.wakeWriter)
                state.wakeWriter = -1
            }
            state.running = false
        }
    }

    private static func readKeys(from input: Int32, wake: Int32, gapMilliseconds: Int32,
                                 deliver: @Sendable (KeyInput) -> Void) {
        defer { close(wake) }
        var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 64)
        var burst = false
        while true {
            // Waits for ever, except after a key in hold mode: then only as long as the release gap.
            let ready = poll(&fds, 2, burst ? gapMilliseconds : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                deliver(.closed)
                return
            }
            if ready == 0 {
                burst = false
                deliver(.quiet)
                continue
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else {
                // Hang-up or error on the terminal: nothing more will come.
                if fds[0].revents != 0 {
                    deliver(.closed)
                    return
                }
                continue
            }
            let count = read(input, &buffer, buffer.count)
            if count <= 0 {
                if count < 0 && errno == EINTR { continue }
                deliver(.closed)
                return
            }
            burst = gapMilliseconds >= 0
            deliver(.bytes(Array(buffer[0 ..< count])))
        }
    }
}

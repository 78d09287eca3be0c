import Foundation
public import SnoozeFuseCore

/// Reads single keys from a terminal on a thread of its own and turns them into session events:
/// Enter, space or `d` dismiss; `s` snoozes; `q` cancels. Ctrl-C still raises SIGINT. Escape
/// does nothing: arrow and function keys send escape sequences, and a sleeper bumping one must not
/// cancel the alarm.
///
/// While running, the terminal is in non-canonical, no-echo mode; `stop()` restores it, and so
/// does every exit path of the CLI. Safe to share: the mutable state lives behind `lock`.
public final class TerminalKeyReader: @unchecked Sendable {
    private let fileDescriptor: Int32
    private let lock = NSLock()
    private var saved: termios?
    private var wakePipe: [Int32] = [-1, -1]
    private var thread: Thread?

    /// `nil` when `fileDescriptor` is not a terminal (a pipe, a file, `/dev/null`).
    public init?(fileDescriptor: Int32 = 0) {
        guard isatty(fileDescriptor) == 1 else { return nil }
        self.fileDescriptor = fileDescriptor
    }

    deinit { stop() }

    /// The event a key stands for, if any.
    public static func event(for byte: UInt8) -> SessionEvent? {
        switch byte {
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "d"), UInt8(ascii: "D"):
            .dismiss
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            .snooze(nil)
        case UInt8(ascii: "q"), UInt8(ascii: "Q"):
            .cancel
        default:
            nil
        }
    }

    /// Switches the terminal to single-key mode and starts delivering events to `deliver`.
    public func start(deliver: @escaping @Sendable (SessionEvent) -> Void) {
        start(holdTracking: nil, deliver: deliver)
    }

    /// How hold mode reads a terminal, which reports key presses but no key releases: while a key
    /// is held the terminal's autorepeat keeps sending it, so the hold ends when no byte has come
    /// for `releaseGap`, which must be longer than the autorepeat delay (250–660 ms on common
    /// desktops). `isHoldPhase` says whether a key now means "hold" (ready, holding, releasing) or
    /// its usual binding (dismiss, snooze, cancel).
    public struct HoldTracking: Sendable {
        public var releaseGap: Duration
        public var isHoldPhase: @Sendable () -> Bool

        public init(releaseGap: Duration = .milliseconds(750), isHoldPhase: @escaping @Sendable () -> Bool) {
            self.releaseGap = releaseGap
            self.isHoldPhase = isHoldPhase
        }
    }

    /// Starts delivering events; with `holdTracking`, any key held in a hold phase becomes
    /// `holdBegan`, and the end of its autorepeat `holdEnded`.
    public func start(holdTracking: HoldTracking?, deliver: @escaping @Sendable (SessionEvent) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard thread == nil else { return }
        var attributes = termios()
        guard tcgetattr(fileDescriptor, &attributes) == 0 else { return }
        saved = attributes
        attributes.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(fileDescriptor, TCSANOW, &attributes)
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        wakePipe = fds
        let input = fileDescriptor, wake = fds[0]
        let thread = Thread {
            Self.readKeys(from: input, wake: wake, holdTracking: holdTracking, deliver: deliver)
        }
        thread.name = "snoozefuse-keys"
        self.thread = thread
        thread.start()
    }

    /// Stops reading and restores the terminal as it was.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        if var saved {
            tcsetattr(fileDescriptor, TCSANOW, &saved)
            self.saved = nil
        }
        if wakePipe[1] >= 0 {
            var byte: UInt8 = 0
            _ = write(wakePipe[1], &byte, 1)
            close(wakePipe[1])
            wakePipe[1] = -1
        }
        thread = nil
    }

    private static func readKeys(
        from input: Int32, wake: Int32, holdTracking: HoldTracking?, deliver: @Sendable (SessionEvent) -> Void
    ) {
        defer { close(wake) }
        var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 64)
        var holding = false
        let gapMilliseconds = holdTracking.map { Int32(clamping: $0.releaseGap.components.seconds * 1000 + $0.releaseGap.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        while true {
            // Waits forever, except while a key is held: then only as long as the release gap.
            let ready = poll(&fds, 2, holding ? gapMilliseconds : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if ready == 0 {
                // No autorepeat byte for the release gap: the key was let go.
                holding = false
                deliver(.holdEnded)
                continue
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else {
                // Hang-up or error on the terminal: nothing more will come.
                if fds[0].revents != 0 { return }
                continue
            }
            let count = read(input, &buffer, buffer.count)
            if count <= 0 {
                if count < 0 && errno == EINTR { continue }
                return
            }
            if let holdTracking, holding || holdTracking.isHoldPhase() {
                // Any key holds; its autorepeat keeps the hold going.
                if !holding {
                    holding = true
                    deliver(.holdBegan)
                }
                continue
            }
            for byte in buffer[0..<count] {
                if let event = event(for: byte) { deliver(event) }
            }
        }
    }
}

/// Turns SIGINT, SIGTERM and SIGHUP into calls of a handler on a dispatch queue, so a signal
/// cancels the session through the normal path (alarm stopped, terminal restored).
///
/// `@unchecked Sendable`: `sources` is set once in `init` and only cancelled in `deinit`; dispatch
/// sources are themselves thread-safe.
public final class SignalWatcher: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    /// Watches SIGINT, SIGTERM and SIGHUP.
    public convenience init(handler: @escaping @Sendable (Int32) -> Void) {
        self.init(signals: [SIGINT, SIGTERM, SIGHUP], handler: handler)
    }

    /// Watches `signals`; each one calls `handler` with its number.
    public init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "snoozefuse.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

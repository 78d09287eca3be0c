public import SnoozeFuseSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where the standard error of a nap's plugin children goes: `plugins.log` in the state folder,
/// at most ``limit`` bytes per instance, and the warnings and errors the host program itself
/// writes there (`host->log`, its own failures) also as the nap's warnings, at most
/// ``warningLimit`` per instance. A plugin that writes without end fills neither the terminal
/// nor the disk.
public struct PluginErrorLog: Sendable, Hashable {
    public let log: AppendOnlyLog
    /// What one instance's output may put in the log.
    public let limit: Int
    /// How many of one instance's warnings become the nap's warnings; the rest are only logged.
    public let warningLimit: Int

    public init(path: String, limit: Int = 64 * 1024, warningLimit: Int = 10) {
        log = AppendOnlyLog(path: path)
        self.limit = limit
        self.warningLimit = warningLimit
    }
}

/// One plugin child's standard error on its way to the ``PluginErrorLog``: read from a pipe on a
/// thread of its own, each line written to the log as `plugin ID [PID]: line` while the
/// instance's allowance lasts (then one line saying how much was dropped). Lines the host program
/// writes as `snoozefuse: warning: …` or `snoozefuse: error: …` have an allowance of their own,
/// and the first few are also handed to `warn`.
///
/// It reads until every writer has closed the pipe; once ``childEnded()`` is called it reads only
/// what is already waiting, for a moment (a process the child left behind that keeps the pipe
/// open does not keep the thread).
final class PluginErrorOutput: Sendable {
    private let ended = Atomic<Bool>(false)
    /// Rung when the child ends: the reading thread sleeps on it and the pipe, never on a timer.
    private let bell = EventBell()

    /// How long what waits in the pipe is still read once the child has ended.
    static let drainLimit = Duration.milliseconds(200)
    /// A line longer than this is written in pieces of this size.
    static let longestLine = 4096

    /// Starts reading `pipe` (its read end, which this takes over and closes); `instance` names
    /// each line. False when no thread could be started (the pipe is closed then, and a child
    /// writing to it gets EPIPE).
    func start(reading pipe: Int32, instance: String, to destination: PluginErrorLog,
               warn: @escaping @Sendable (String) -> Void) -> Bool {
        let started = SystemThread.start(named: "snoozefuse-perr") { [self] in
            pump(pipe, instance: instance, destination: destination, warn: warn)
            close(pipe)
        }
        if !started { close(pipe) }
        return started
    }

    /// The child has ended (it may be called before ``start(reading:instance:to:warn:)``): what
    /// is waiting is read, then the thread ends.
    func childEnded() {
        ended.store(true, ordering: .releasing)
        bell?.ring()
    }

    private func pump(_ pipe: Int32, instance: String, destination: PluginErrorLog, warn: @Sendable (String) -> Void) {
        var log: Int32 = -1
        defer { if log >= 0 { close(log) } }
        // What the plugin writes, and what the host program says of it (kept apart: a plugin
        // that floods its output does not push the host's warnings out of the log).
        var allowance = OutputAllowance(limit: destination.limit)
        var hostAllowance = OutputAllowance(limit: destination.limit)
        var warnings = 0
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var drainUntil: BootInstant?

        func finish(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            let text = String(decoding: bytes, as: UTF8.self)
            let warning = Self.hostWarning(text)
            if let warning {
                if warnings < destination.warningLimit {
                    warn(warning)
                } else if warnings == destination.warningLimit {
                    warn("\(instance) said more; the rest is in \(destination.log.path)")
                }
                warnings += 1
            }
            let keep = warning == nil ? allowance.take(bytes.count + 1) : hostAllowance.take(bytes.count + 1)
            guard keep > 0 else { return }
            if log < 0 { log = destination.log.open() }
            AppendOnlyLog.append(line: "\(instance): \(String(decoding: bytes.prefix(max(keep - 1, 0)), as: UTF8.self))", to: log)
        }

        while true {
            if drainUntil == nil, ended.load(ordering: .acquiring) {
                drainUntil = BootInstant.now.advanced(by: Self.drainLimit)
                _ = fcntl(pipe, F_SETFL, fcntl(pipe, F_GETFL) | O_NONBLOCK)
            }
            if let drainUntil {
                // The child has ended: only what is already waiting is read.
                guard BootInstant.now < drainUntil else { break }
                var entry = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, 50)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { break }
            } else if let bell {
                // Asleep until the child writes or ends: no wake-up of its own.
                if bell.wait(orReadable: pipe) { continue }
            } else {
                var entry = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
                if poll(&entry, 1, -1) < 0 && errno == EINTR { continue }
            }
            let count = buffer.withUnsafeMutableBytes { read(pipe, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            for byte in buffer[0 ..< count] {
                if byte == UInt8(ascii: "\n") {
                    finish(line)
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(byte)
                    if line.count >= Self.longestLine {
                        finish(line)
                        line.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        finish(line)
        for dropped in [allowance.droppedLine(instance, each: "an instance"),
                        hostAllowance.droppedLine("the host program of \(instance)", each: "an instance")].compactMap({ $0 }) {
            if log < 0 { log = destination.log.open() }
            AppendOnlyLog.append(line: "snoozefuse: \(dropped)", to: log)
        }
    }

    /// What the host program said as a warning or an error (`snoozefuse: warning: plugin x: …`),
    /// without its prefix; nil for anything else the plugin wrote.
    static func hostWarning(_ line: String) -> String? {
        for prefix in ["snoozefuse: warning: ", "snoozefuse: error: "] where line.hasPrefix(prefix) {
            return String(line.dropFirst(prefix.count))
        }
        return nil
    }
}

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

    /// What one instance's output may put in the log unless told otherwise.
    public static let instanceLimit = 64 * 1024

    public init(path: String, limit: Int = instanceLimit, warningLimit: Int = 10) {
        log = AppendOnlyLog(path: path)
        self.limit = limit
        self.warningLimit = warningLimit
    }
}

/// What becomes of the lines a plugin child writes to standard error: called on the reading
/// thread only, in order.
protocol PluginErrorSink: Sendable {
    /// One line without its newline, and whether a newline ended it (a line longer than
    /// ``PluginErrorOutput/longestLine`` comes in pieces; the last line may have none).
    mutating func take(_ line: [UInt8], ended: Bool)
    /// Nothing more will come.
    mutating func finish()
}

/// One plugin child's standard error read from a pipe on a thread of its own, each line handed to
/// a ``PluginErrorSink``: ``PluginErrorLogWriter`` for a nap's instances, ``PluginErrorExcerpt``
/// for `plugins check`.
///
/// It reads until every writer has closed the pipe; once ``childEnded()`` is called it reads only
/// what is already waiting, for a moment (a process the child left behind that keeps the pipe
/// open does not keep the thread).
final class PluginErrorOutput: Sendable {
    private let ended = Atomic<Bool>(false)
    /// Rung when the child ends: the reading thread sleeps on it and the pipe, never on a timer.
    private let bell = EventBell()
    private let read = Atomic<Bool>(false)
    /// Rung when the sink has had its last line.
    private let finished = EventBell()

    /// How long what waits in the pipe is still read once the child has ended.
    static let drainLimit = Duration.milliseconds(200)
    /// A line longer than this is handed on in pieces of this size.
    static let longestLine = 4096

    /// Starts reading `pipe` (its read end, which this takes over and closes) into `sink`. False
    /// when no thread could be started (the pipe is closed then, and a child writing to it gets
    /// EPIPE).
    func start(reading pipe: Int32, into sink: some PluginErrorSink) -> Bool {
        let started = SystemThread.start(named: "snoozefuse-perr") { [self] in
            var sink = sink
            pump(pipe, into: &sink)
            close(pipe)
            sink.finish()
            read.store(true, ordering: .releasing)
            finished?.ring()
        }
        if !started {
            close(pipe)
            read.store(true, ordering: .releasing)
        }
        return started
    }

    /// The child has ended (it may be called before ``start(reading:into:)``): what is waiting is
    /// read, then the thread ends.
    func childEnded() {
        ended.store(true, ordering: .releasing)
        bell?.ring()
    }

    /// Waits until the sink has had its last line, at most until `deadline`; whether it has.
    /// Call ``childEnded()`` first, or a writer that keeps the pipe open keeps this waiting.
    func waitUntilRead(deadline: BootInstant) -> Bool {
        while !read.load(ordering: .acquiring) {
            guard let finished, BootInstant.now < deadline else { return read.load(ordering: .acquiring) }
            _ = finished.wait(until: deadline)
        }
        return true
    }

    private func pump(_ pipe: Int32, into sink: inout some PluginErrorSink) {
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var drainUntil: BootInstant?
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
            let count = buffer.withUnsafeMutableBytes { Glibc.read(pipe, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            // Whole lines are found with memchr and handed on in one piece each (a flood of
            // short lines is read as fast as it is written).
            buffer.withUnsafeBufferPointer { bytes in
                var start = 0
                while start < count {
                    let rest = count - start
                    let newline = memchr(bytes.baseAddress! + start, Int32(UInt8(ascii: "\n")), rest)
                    let end = newline.map { start + (UnsafeRawPointer($0) - UnsafeRawPointer(bytes.baseAddress! + start)) } ?? count
                    let room = Self.longestLine - line.count
                    if end - start > room || (end - start == room && newline == nil) {
                        line.append(contentsOf: bytes[start ..< start + room])
                        sink.take(line, ended: false)
                        line.removeAll(keepingCapacity: true)
                        start += room
                        continue
                    }
                    line.append(contentsOf: bytes[start ..< end])
                    guard newline != nil else { break }
                    sink.take(line, ended: true)
                    line.removeAll(keepingCapacity: true)
                    start = end + 1
                }
            }
        }
        if !line.isEmpty { sink.take(line, ended: false) }
    }

    /// The prefixes of what the host program says as a warning or an error.
    private static let hostPrefixes = ["snoozefuse: warning: ", "snoozefuse: error: "].map { Array($0.utf8) }

    /// What the host program said as a warning or an error (`snoozefuse: warning: plugin x: …`),
    /// without its prefix; nil for anything else the plugin wrote.
    static func hostWarning(_ line: [UInt8]) -> String? {
        for prefix in hostPrefixes where line.starts(with: prefix) {
            return String(decoding: line.dropFirst(prefix.count), as: UTF8.self)
        }
        return nil
    }
}

/// A nap instance's standard error into the ``PluginErrorLog``: each line written to the log as
/// `plugin ID [PID]: line` while the instance's allowance lasts (then one line saying how much was
/// dropped). Lines the host program writes as `snoozefuse: warning: …` or `snoozefuse: error: …`
/// have an allowance of their own, and the first few are also handed to `warn`.
struct PluginErrorLogWriter: PluginErrorSink {
    let instance: String
    let destination: PluginErrorLog
    let warn: @Sendable (String) -> Void
    // What the plugin writes, and what the host program says of it (kept apart: a plugin that
    // floods its output does not push the host's warnings out of the log).
    private var allowance: OutputAllowance
    private var hostAllowance: OutputAllowance
    private var warnings = 0
    /// The log, opened at the first line kept.
    private var log: Int32 = -1

    init(instance: String, destination: PluginErrorLog, warn: @escaping @Sendable (String) -> Void) {
        self.instance = instance
        self.destination = destination
        self.warn = warn
        allowance = OutputAllowance(limit: destination.limit)
        hostAllowance = OutputAllowance(limit: destination.limit)
    }

    mutating func take(_ bytes: [UInt8], ended: Bool) {
        guard !bytes.isEmpty else { return }
        let warning = PluginErrorOutput.hostWarning(bytes)
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
        append("\(instance): \(String(decoding: bytes.prefix(max(keep - 1, 0)), as: UTF8.self))")
    }

    mutating func finish() {
        for dropped in [allowance.droppedLine(instance, each: "an instance"),
                        hostAllowance.droppedLine("the host program of \(instance)", each: "an instance")].compactMap({ $0 }) {
            append("snoozefuse: \(dropped)")
        }
        if log >= 0 { close(log) }
        log = -1
    }

    private mutating func append(_ line: String) {
        if log < 0 { log = destination.log.open() }
        AppendOnlyLog.append(line: line, to: log)
    }
}

/// What a `plugins check` child wrote to standard error, for the check's details: how much, its
/// first few lines (shortened), and the first few warnings of its host program (`host->log`, kept
/// apart so that a flood before them does not hide them). The plugin author sees what the plugin
/// said without the terminal taking all of it.
struct PluginErrorExcerpt: PluginErrorSink {
    /// How many lines of each kind are kept, and how much of each.
    static let lineLimit = 5
    static let lineLength = 160

    struct Summary: Sendable, Hashable {
        var bytes = 0
        var lines = 0
        /// The first lines, the plugin's own and the host program's warnings, in order.
        var first: [String] = []
        var plugin = 0, host = 0

        /// `it wrote N bytes to standard error (L lines) …`, then the first lines as `| line`;
        /// nothing when it wrote nothing.
        var details: [String] {
            guard bytes > 0 else { return [] }
            let kept = "a nap keeps \(PluginErrorLog.instanceLimit / 1024) KiB of each instance's in plugins.log in the state folder"
            let shown = first.count == lines ? ":"
                : host == 0 ? "; the first \(plugin):"
                : "; the first \(plugin), and of the warnings logged through host->log the first \(host):"
            return ["it wrote \(bytes) bytes to standard error (\(lines) line\(lines == 1 ? "" : "s"); \(kept))\(shown)"]
                + first.map { "| \($0)" }
        }
    }

    /// Where the summary is left once the last line is in.
    final class Result: Sendable {
        let summary = Locked(Summary())
    }

    let result: Result
    private var summary = Summary()

    init(into result: Result) {
        self.result = result
    }

    mutating func take(_ line: [UInt8], ended: Bool) {
        summary.bytes += line.count + (ended ? 1 : 0)
        summary.lines += 1
        let fromHost = PluginErrorOutput.hostWarning(line) != nil
        guard (fromHost ? summary.host : summary.plugin) < Self.lineLimit else { return }
        if fromHost { summary.host += 1 } else { summary.plugin += 1 }
        let text = String(decoding: line.prefix(Self.lineLength), as: UTF8.self)
        summary.first.append(line.count > Self.lineLength ? text + "…" : text)
    }

    mutating func finish() {
        result.summary.withLock { [summary] in $0 = summary }
    }
}

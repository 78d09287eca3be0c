public import Foundation
import SnoozeFuseSystem

// Running programs from tests: the package's built products (`BuiltProducts`, `runProcess`) and the
// external tools the tests compare against or build with (`runTool`, `runMergingOutput`).

/// The folder that holds the package's built products (the `snoozefuse` binary among them): the
/// folder of the running test executable.
public enum BuiltProducts {
    public static var folder: URL {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On some layouts the test executable sits inside a `.xctest` bundle folder.
        while url.pathExtension == "xctest" || url.lastPathComponent == "Contents" || url.lastPathComponent == "MacOS" {
            url.deleteLastPathComponent()
        }
        return url
    }

    /// The path of the built product called `name`.
    public static func executable(_ name: String) -> URL {
        folder.appendingPathComponent(name)
    }
}

/// The result of running a program to its end.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String

    /// Standard output split into lines, without empty ones.
    public var outputLines: [String] { standardOutput.split(separator: "\n").map(String.init) }
}

/// Runs `executable` with `arguments` and returns its exit status and output. Standard input is
/// `/dev/null`, so the program sees no terminal. The program's nap state, settings and history
/// are its own (see ``isolatingNapState(_:)``) unless `environment` names their folders.
public func runProcess(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String]? = nil
) async throws -> ProcessResult {
    // The wait blocks: on a thread of its own, never one of Swift's few shared ones, which tests
    // running side by side would otherwise use up.
    try await onOwnThread { try runProcessBlocking(executable, arguments, environment: environment) }
}

/// ``runProcess(_:_:environment:)`` for code that runs on a thread of its own (a test's timed
/// script): blocks until the program has ended.
public func runProcessBlocking(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let output = try CaptureFile(), errors = try CaptureFile()
    defer {
        output.remove()
        errors.remove()
    }
    let status = try runToEnd(executable, arguments, environment: environment, standardOutput: output, standardError: errors)
    return ProcessResult(status: status, standardOutput: output.text, standardError: errors.text)
}

/// `environment` (this process's when nil) with folders of its own, and the folder that holds
/// them, to keep for as long as the program runs:
///
/// - a state folder and a runtime folder (`XDG_STATE_HOME`, `XDG_RUNTIME_DIR`), unless it names a
///   state folder already: a nap takes a per-user lock and keeps its live state and control socket
///   there, and naps of tests that run side by side must not meet;
/// - a data and a config folder (`XDG_DATA_HOME`, `XDG_CONFIG_HOME`), each unless it names one:
///   a nap reads the user's settings and presets there and records itself in the history, and a
///   test's nap must neither follow the settings of whoever runs the tests nor fill their history.
///
/// With no `environment` given, the `SNOOZEFUSE_*` variables of the nap's settings are left out
/// too (`SNOOZEFUSE_PLUGIN_PATH` stays): they would override the test's own flags' defaults.
public func isolatingNapState(_ environment: [String: String]?) throws -> (environment: [String: String], folder: TemporaryFolder?) {
    let own = ProcessInfo.processInfo.environment
    var chosen = environment ?? own
    if environment == nil {
        chosen = chosen.filter { !$0.key.hasPrefix("SNOOZEFUSE_") || $0.key == "SNOOZEFUSE_PLUGIN_PATH" }
    }
    let folders = [("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config")].filter { variable, _ in
        chosen[variable] == nil || chosen[variable] == own[variable]
    }
    guard !folders.isEmpty else { return (chosen, nil) }
    let folder = try TemporaryFolder(prefix: "snoozefuse-state")
    for (variable, name) in folders {
        chosen[variable] = folder.path(name)
        if variable == "XDG_STATE_HOME" { chosen["XDG_RUNTIME_DIR"] = folder.url.path }
    }
    return (chosen, folder)
}

/// The program called `name` on `PATH` (as a shell would find it), or `name` itself when it is not
/// found, so the test fails with the name in its error rather than an unrelated one.
public func executableInPath(_ name: String) -> URL {
    searchPath(for: name) ?? URL(fileURLWithPath: name)
}

/// The program called `name` in a folder of `PATH`, or `nil`.
private func searchPath(for name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// An external tool that is missing or failed, with its command line and what it said.
public struct ToolFailure: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) { self.description = description }
}

/// Runs an external tool (sox, ffmpeg, sndfile-convert, sqlite3, …) found on `PATH` and returns its
/// standard output, or writes that output to the file at `stdout` (then it returns ""). A missing
/// tool or a failing run throws `ToolFailure` with the tool's standard error, so the test fails
/// instead of skipping.
@discardableResult
public func runTool(_ name: String, _ arguments: [String], stdout: String? = nil) throws -> String {
    guard let executable = searchPath(for: name) else {
        throw ToolFailure(description: "'\(name)' is not installed (Scripts/apt-packages.txt lists what the tests need)")
    }
    let output = try CaptureFile(at: stdout)
    defer { if stdout == nil { output.remove() } }
    let errors = try CaptureFile()
    defer { errors.remove() }
    let status = try runToEnd(executable, arguments, environment: nil, standardOutput: output, standardError: errors)
    guard status == 0 else {
        throw ToolFailure(description: "\(name) \(arguments.joined(separator: " ")) failed (\(status)): \(errors.text)")
    }
    return stdout == nil ? output.text : ""
}

/// Runs a program to its end, its standard output and error merged into one text, and returns its
/// status, that text and whether a signal ended it. Never throws for the program's own failure:
/// for tests that check how a program fails.
public func runMergingOutput(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String]? = nil
) throws -> (status: Int32, output: String, signalled: Bool) {
    let log = try CaptureFile()
    defer { log.remove() }
    let status = try runToEnd(URL(fileURLWithPath: executable), arguments, environment: environment,
                              standardOutput: log, standardError: log)
    return (status > 128 ? status - 128 : status, log.text, status > 128)
}

/// Runs `executable` to its end with standard input `/dev/null` and its output into files, and
/// returns its exit status (128 + the signal when a signal ended it).
///
/// Files rather than pipes: there is nothing to drain while the program runs, and no read to be
/// interrupted. And `posix_spawn` with `waitpid` rather than Foundation's `Process`, whose
/// `waitUntilExit` can miss a child's end when the program under test leaves processes of its own
/// behind (a guardian, a tmux server) and wait for ever.
private func runToEnd(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String]?,
    standardOutput: CaptureFile,
    standardError: CaptureFile
) throws -> Int32 {
    let (environment, stateFolder) = try isolatingNapState(environment)
    defer { withExtendedLifetime(stateFolder) {} }
    standardOutput.close()
    if standardError.path != standardOutput.path { standardError.close() }
    let process = try BackgroundProcess(executable, arguments, environment: environment,
                                        standardOutput: standardOutput.path, standardError: standardError.path)
    return process.wait()
}

/// A file a program writes its output into: a given path, or a fresh one in the temporary directory.
private struct CaptureFile {
    let path: String
    let handle: FileHandle

    init(at path: String? = nil) throws {
        self.path = path ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("snoozefuse-output-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: self.path, contents: nil),
              let handle = FileHandle(forWritingAtPath: self.path) else {
            throw ToolFailure(description: "cannot create \(self.path) for a program's output")
        }
        self.handle = handle
    }

    /// What was written, as UTF-8 (invalid bytes replaced).
    var text: String { String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }

    /// Closes the handle the program was given.
    func close() { try? handle.close() }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A program started in the background whose end the test waits for itself (`waitpid`), with its
/// standard output and error in files: for programs a test kills or signals. (Foundation's
/// `Process` can miss the end of a child killed with SIGKILL and wait for ever.)
public final class BackgroundProcess: Sendable {
    public let pid: Int32
    private let ended = Locked<Int32?>(nil)

    /// Starts `executable arguments…` with `environment`, standard input `/dev/null`, output and
    /// errors appended to the files at `standardOutput` and `standardError`.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String],
                standardOutput: String, standardError: String) throws {
        let output = open(standardOutput, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let errors = open(standardError, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer {
            if output >= 0 { close(output) }
            if errors >= 0 { close(errors) }
        }
        guard output >= 0, errors >= 0 else { throw ToolFailure(description: "cannot open \(standardOutput) or \(standardError) for a program's output") }
        do {
            pid = try ProcessSpawn.start(executable.path, arguments, descriptors: [0: .devNull, 1: .inherit(output), 2: .inherit(errors)],
                                         environment: environment)
        } catch {
            throw ToolFailure(description: error.description)
        }
    }

    /// Whether it has not ended (reaping it when it has).
    public var isRunning: Bool {
        if ended.withLock({ $0 }) != nil { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return true }
        ended.withLock { $0 = status }
        return false
    }

    /// Waits for its end and returns its exit status (128 + the signal when a signal ended it).
    @discardableResult
    public func wait() -> Int32 {
        if let status = ended.withLock({ $0 }) { return Self.exitCode(status) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        ended.withLock { $0 = status }
        return Self.exitCode(status)
    }

    /// Waits for its end; returns its exit status and the CPU time it used (user and system, in
    /// seconds, its own threads only).
    public func waitWithUsage() -> (status: Int32, cpuSeconds: Double) {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        ended.withLock { $0 = status }
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (Self.exitCode(status), cpu)
    }

    /// Sends `signal`.
    public func signal(_ signal: Int32) {
        _ = kill(pid, signal)
    }

    private static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}

/// Processes that keep one CPU busy, for tests of what a busy machine does: `count` shell loops
/// pinned to the first CPU this process may use, at the lowest priority (nice 19), so that the
/// other tests running meanwhile take the CPU before them. Run the program under test with
/// ``prefix`` to put it on the same CPU at the same priority. Ended with ``stop()``.
public final class BusyCPU: Sendable {
    /// `taskset -c CPU nice -n 19`, to run a program beside the spinners.
    public let prefix: [String]
    private let spinners: [BackgroundProcess]

    public init(spinners count: Int) throws {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let allowed = status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
        let cpu = allowed.flatMap { $0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces).split(whereSeparator: { $0 == "-" || $0 == "," }).first }
            .map(String.init) ?? "0"
        let prefix = [executableInPath("taskset").path, "-c", cpu, executableInPath("nice").path, "-n", "19"]
        self.prefix = prefix
        spinners = try (0 ..< count).map { _ in
            try BackgroundProcess(URL(fileURLWithPath: prefix[0]), Array(prefix.dropFirst()) + ["sh", "-c", "while :; do :; done"],
                                  environment: ProcessInfo.processInfo.environment, standardOutput: "/dev/null", standardError: "/dev/null")
        }
    }

    /// Kills and reaps the spinners.
    public func stop() {
        for spinner in spinners {
            spinner.signal(SIGKILL)
            spinner.wait()
        }
    }
}

/// The whole of a file of /proc (Foundation's `String(contentsOfFile:)` reads one page of them:
/// their size is 0); empty when it cannot be opened.
public func wholeProcFile(_ path: String) -> String {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return "" }
    defer { close(descriptor) }
    var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65_536)
    while case let count = read(descriptor, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
    return String(decoding: bytes, as: UTF8.self)
}

/// Whether `pid` is a process that has not ended (a zombie waiting for its reaper has).
public func isRunning(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
}

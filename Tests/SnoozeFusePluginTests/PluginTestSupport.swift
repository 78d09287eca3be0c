import Foundation
import Logging
import SnoozeFusePluginHost
import SnoozeFuseTestSupport

/// The repository root (tests build plugins from its sources).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let abiInclude = repositoryRoot.appendingPathComponent("Sources/SnoozeFusePluginABI/include").path
let testPluginSource = repositoryRoot.appendingPathComponent("Tests/SnoozeFusePluginTests/Fixtures/test_plugin.c").path

/// The built plugin host program (the only program that loads plugins).
let hostProgram = BuiltProducts.executable(PluginHostProgram.name).path

/// A private folder (0700) for plugins built by one test, removed by `cleanUp`.
struct PluginFolder {
    let path: String

    init() throws {
        path = try makeTemporaryDirectory().path
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }

    /// Compiles C `source` into `name` with `cc -shared -fPIC` and returns its path.
    @discardableResult
    func buildC(_ name: String, source: String = testPluginSource, defines: [String] = []) throws -> String {
        try compile(name, ["-shared", "-fPIC", "-I", abiInclude] + defines.map { "-D" + $0 } + [source, "-lm", "-lpthread"])
    }

    /// Compiles the built-in plugin `Plugins/NAME/NAME.c` as `libsnoozefuse-NAME.so`; returns its path.
    func buildBuiltIn(_ name: String) throws -> String {
        try buildC("libsnoozefuse-\(name).so", source: repositoryRoot.appendingPathComponent("Plugins/\(name)/\(name).c").path)
    }

    /// Compiles the C program `source` into `name`, warnings as errors, and returns its path.
    func buildProgram(_ name: String, source: String) throws -> String {
        try compile(name, ["-Wall", "-Wextra", "-Werror", source])
    }

    private func compile(_ name: String, _ arguments: [String]) throws -> String {
        let output = path + "/" + name
        let result = try runMergingOutput("/usr/bin/env", ["cc", "-std=c11", "-O1"] + arguments + ["-o", output])
        guard result.status == 0 else { throw BuildFailure(output: result.output) }
        return output
    }
}

struct BuildFailure: Error, CustomStringConvertible {
    var output: String
    var description: String { "build failed: \(output)" }
}

/// The built-in plugin NAME where the build puts it (beside the binaries: its reserved id is
/// allowed there, as in the install folder).
func builtPlugin(_ name: String) -> String {
    BuiltProducts.folder.appendingPathComponent("libsnoozefuse-\(name).so").path
}

/// A logger that keeps what it is given, to assert on.
/// (Stays in this target: a swift-log handler, and SnoozeFuseTestSupport imports no logging library.)
final class LogRecorder: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    var recorded: [String] { lock.withLock { lines } }

    func append(_ line: String) { lock.withLock { lines.append(line) } }

    var logger: Logger {
        Logger(label: "test") { _ in RecordingHandler(recorder: self) }
    }

    struct RecordingHandler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { recorder.append("\(event.level): \(event.message)") }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            recorder.append("\(level): \(message)")
        }
    }
}

/// An environment for running snoozefuse over the plugins of `folder` (on SNOOZEFUSE_PLUGIN_PATH),
/// with a scan cache of its own in `cache` (a fresh one starts cold).
func pluginEnvironment(_ folder: PluginFolder, cache: TemporaryFolder) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["SNOOZEFUSE_PLUGIN_PATH"] = folder.path
    environment["XDG_CACHE_HOME"] = cache.url.path
    return environment
}

/// The processes whose command line mentions `text`, from every /proc/PID/cmdline (a plugin's
/// child names its file: the scanner, a serving or a checking child), as `PID command line`.
func processes(mentioning text: String) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> String? in
        guard Int32(entry) != nil, Int32(entry) != getpid(),
              let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !data.isEmpty else { return nil }
        let command = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        return command.contains(text) ? "\(entry) \(command)" : nil
    }
}

/// The children of `pid`, as `pgrep -P` lists them.
func children(of pid: Int32) throws -> [String] {
    try runMergingOutput("/usr/bin/env", ["pgrep", "-a", "-P", "\(pid)"]).output.split(separator: "\n").map(String.init)
}

/// The JSON objects of a program's output, one a line (other lines are left out).
func jsonLines(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}

/// Seconds of CLOCK_BOOTTIME that `body` took.
func secondsTaken<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try body()
    let taken = start.duration(to: .now)
    return (value, Double(taken.components.seconds) + Double(taken.components.attoseconds) / 1e18)
}

/// A program run to its end while its children were watched.
struct WatchedRun {
    var status: Int32
    var output: String
    /// The command lines of every child `pgrep -P` saw while it ran.
    var childrenSeen: Set<String>
    /// The names (as the kernel keeps them, 15 bytes at most) of children seen while they ended or
    /// after, before they were reaped: such a child has no command line left to read.
    var endedChildrenSeen: Set<String>
    /// How long it ran, in seconds.
    var seconds: Double
}

/// Runs `executable arguments…` (its nap state its own, output and errors merged) to its end,
/// listing its children with `pgrep -P` every 200 ms meanwhile. Killed after `limit` seconds (a
/// guard against a hang: the test then fails on its status).
func runWatchingChildren(_ executable: String, _ arguments: [String], environment: [String: String],
                         limit: Double = 120) throws -> WatchedRun {
    let (environment, state) = try isolatingNapState(environment)
    let scratch = try TemporaryFolder(prefix: "snoozefuse-watched")
    let log = scratch.path("output")
    let ((status, seen, ended), seconds) = try secondsTaken { () throws -> (Int32, Set<String>, Set<String>) in
        let process = try BackgroundProcess(URL(fileURLWithPath: executable), arguments, environment: environment,
                                            standardOutput: log, standardError: log)
        var seen = Set<String>(), ended = Set<String>()
        let start = ContinuousClock.now
        while process.isRunning {
            for line in try children(of: process.pid) {
                let command = String(line.drop { $0 != " " }.dropFirst())
                // pgrep shows a child that has ended but is not reaped yet as `[name] <defunct>`,
                // and one caught while it ends (its memory, command line included, already given
                // back, not yet a zombie) as `[name]`.
                if let name = command.wholeMatch(of: /\[(.+)\](?: <defunct>)?/)?.1 {
                    ended.insert(String(name))
                } else {
                    seen.insert(command)
                }
            }
            if start.duration(to: .now) > .seconds(limit) { process.signal(SIGKILL) }
            usleep(200_000)
        }
        return (process.wait(), seen, ended)
    }
    withExtendedLifetime(state) {}
    let output = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
    return WatchedRun(status: status, output: output, childrenSeen: seen, endedChildrenSeen: ended, seconds: seconds)
}

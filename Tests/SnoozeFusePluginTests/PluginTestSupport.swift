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

public import Foundation

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
/// `/dev/null`, so the program sees no terminal. The program's nap state is its own (see
/// ``isolatingNapState(_:)``) unless `environment` names a state folder.
public func runProcess(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String]? = nil
) async throws -> ProcessResult {
    try await Task.detached {
        let output = try CaptureFile(), errors = try CaptureFile()
        defer {
            output.remove()
            errors.remove()
        }
        let process = try runToEnd(executable, arguments, environment: environment,
                                   standardOutput: output, standardError: errors)
        return ProcessResult(status: process.terminationStatus, standardOutput: output.text, standardError: errors.text)
    }.value
}

/// `environment` (this process's when nil) with a state folder and a runtime folder of its own
/// (`XDG_STATE_HOME`, `XDG_RUNTIME_DIR`), unless it names a state folder already, and the folder
/// that holds them, to keep for as long as the program runs. A nap takes a per-user lock and keeps
/// its live state and control socket there: naps of tests that run side by side must not meet.
public func isolatingNapState(_ environment: [String: String]?) throws -> (environment: [String: String], folder: TemporaryFolder?) {
    var environment = environment ?? ProcessInfo.processInfo.environment
    guard environment["XDG_STATE_HOME"] == nil || environment["XDG_STATE_HOME"] == ProcessInfo.processInfo.environment["XDG_STATE_HOME"] else {
        return (environment, nil)
    }
    let folder = try TemporaryFolder(prefix: "snoozefuse-state")
    environment["XDG_STATE_HOME"] = folder.path("state")
    environment["XDG_RUNTIME_DIR"] = folder.url.path
    return (environment, folder)
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
    let process = try runToEnd(executable, arguments, environment: nil, standardOutput: output, standardError: errors)
    guard process.terminationStatus == 0 else {
        throw ToolFailure(description: "\(name) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(errors.text)")
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
    let process = try runToEnd(URL(fileURLWithPath: executable), arguments, environment: environment,
                               standardOutput: log, standardError: log)
    return (process.terminationStatus, log.text, process.terminationReason == .uncaughtSignal)
}

/// Runs `executable` to its end with standard input `/dev/null` and its output into files.
///
/// Files rather than pipes: there is nothing to drain while the program runs, and no read to be
/// interrupted. (Programs under test start children, and the SIGCHLD they cause can interrupt
/// Foundation's pipe reads, which it does not retry.)
private func runToEnd(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String]?,
    standardOutput: CaptureFile,
    standardError: CaptureFile
) throws -> Process {
    let (environment, stateFolder) = try isolatingNapState(environment)
    defer { withExtendedLifetime(stateFolder) {} }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = standardOutput.handle
    process.standardError = standardError.handle
    defer {
        standardOutput.close()
        if standardError.handle !== standardOutput.handle { standardError.close() }
    }
    try process.run()
    process.waitUntilExit()
    return process
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

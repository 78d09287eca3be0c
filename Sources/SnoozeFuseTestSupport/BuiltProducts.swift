public import Foundation

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
/// `/dev/null`, so the program sees no terminal.
public func runProcess(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String]? = nil
) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes while the program runs, so a full pipe never blocks it.
    async let outData = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
    async let errData = Task.detached { error.fileHandleForReading.readDataToEndOfFile() }.value
    let (out, err) = await (outData, errData)
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        standardOutput: String(decoding: out, as: UTF8.self),
        standardError: String(decoding: err, as: UTF8.self)
    )
}

/// The program called `name` on `PATH` (as a shell would find it), or `name` itself when it is not
/// found, so the test fails with the name in its error rather than an unrelated one.
public func executableInPath(_ name: String) -> URL {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for folder in path.split(separator: ":") {
        let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return URL(fileURLWithPath: name)
}

import CSndFile
import Foundation
import Synchronization
import Testing

struct ToolFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs an external tool found on PATH. A missing tool or a failing run throws, so the test fails
/// loudly instead of skipping.
func runTool(_ tool: String, _ arguments: [String], stdout: URL? = nil) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    let errors = Pipe()
    process.standardError = errors
    var output: FileHandle?
    if let stdout {
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        output = try FileHandle(forWritingTo: stdout)
        process.standardOutput = output
    } else {
        process.standardOutput = FileHandle.nullDevice
    }
    try process.run()
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try output?.close()
    guard process.terminationStatus == 0 else {
        throw ToolFailure(description: "\(tool) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus): "
            + String(decoding: message, as: UTF8.self))
    }
}

func readBytes(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}

/// libsndfile's error state for failed opens is global, so opens are serialised.
private let sndfileLock = Mutex(())

/// What `sf_open` does with a file: 0 (`SF_ERR_NO_ERROR`) when it opens, otherwise the `SF_ERR_*` code.
func sndfileOpenResult(_ url: URL) -> Int32 {
    sndfileLock.withLock { _ in
        var info = SF_INFO()
        guard let handle = sf_open(url.path, Int32(SFM_READ), &info) else { return sf_error(nil) }
        sf_close(handle)
        return 0
    }
}

/// `SF_ERR_*` values used in expectations.
enum SndfileResult {
    static let opens = Int32(SF_ERR_NO_ERROR)
    static let unrecognised = Int32(SF_ERR_UNRECOGNISED_FORMAT)
    static let malformed = Int32(SF_ERR_MALFORMED_FILE)
    static let unsupportedEncoding = Int32(SF_ERR_UNSUPPORTED_ENCODING)
}

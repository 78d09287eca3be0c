import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseSoundLibrary
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

let snoozefuse = BuiltProducts.executable("snoozefuse")

/// A scratch folder holding one test's XDG folders and generated files, removed when the value goes away.
final class Scratch: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("snoozefuse-library-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    var paths: StorePaths {
        StorePaths(config: url.appendingPathComponent("config/snoozefuse"),
                   data: url.appendingPathComponent("data/snoozefuse"),
                   state: url.appendingPathComponent("state/snoozefuse"))
    }

    var soundsFolder: String { paths.soundsFolder.path }
    var database: String { paths.database.path }

    /// The environment the binary runs with: XDG folders in this scratch folder.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = url.appendingPathComponent("data").path
        environment["XDG_CONFIG_HOME"] = url.appendingPathComponent("config").path
        environment["XDG_STATE_HOME"] = url.appendingPathComponent("state").path
        return environment
    }

    func library(builtIns: [String: String] = [:]) throws -> SoundLibrary {
        try SoundLibrary(paths: paths, builtIns: builtIns)
    }

    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess(snoozefuse, arguments, environment: environment)
    }

    /// Runs the binary like ``run(_:)``, killed if it is still running after `limit` (a guard
    /// against a hang, not a measure of speed: assert on the exit status and the messages).
    /// `unprivileged`: when the tests run as root, without the capabilities that let root ignore
    /// file modes (`setpriv`), so a read-only folder or file is read-only to the binary too.
    func runBounded(_ arguments: [String], limit: Duration = .seconds(30), unprivileged: Bool = false) async throws -> BoundedRun {
        var executable = snoozefuse, all = arguments
        if unprivileged && geteuid() == 0 {
            executable = executableInPath("setpriv")
            all = ["--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all", snoozefuse.path] + arguments
        }
        let capture = url.appendingPathComponent("run-\(UUID().uuidString)")
        let outputPath = capture.path + ".out", errorPath = capture.path + ".err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        let process = Process()
        process.executableURL = executable
        process.arguments = all
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = ContinuousClock.now.advanced(by: limit)
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                timedOut = true
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        try output.close()
        try errors.close()
        return BoundedRun(status: process.terminationStatus,
                          standardOutput: try String(contentsOfFile: outputPath, encoding: .utf8),
                          standardError: try String(contentsOfFile: errorPath, encoding: .utf8),
                          timedOut: timedOut)
    }

    /// Files in the sounds folder (the lock file aside).
    func storedFiles() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: soundsFolder)).subtracting([".lock"])
    }
}

/// A stereo test signal, a chirp left and a tone right: `sox` writes it in the given encoding.
func makeSignal(_ path: String, seconds: Double = 1, rate: Int = 44_100, channels: Int = 2, soxOptions: [String] = ["-b", "16"]) throws {
    let synth = channels == 2 ? ["sine", "300-3000", "sine", "440"] : ["sine", "300-3000"]
    try runTool("sox", ["-n", "-r", "\(rate)", "-c", "\(channels)"] + soxOptions + [path, "synth", "\(seconds)"] + synth + ["gain", "-3"])
}

/// Every sample as libsndfile's left-justified 32-bit integers: bit-exact for integer PCM and ALAC.
func intSamples(_ path: String) throws -> (info: SoundFileInfo, samples: [Int32]) {
    var file = try SoundFile(readingAtPath: path)
    return (file.info, try readAll(&file, zero: Int32.zero) { (f, b) throws(SoundFileError) in try f.read(into: b) })
}

func floatSamples(_ path: String) throws -> [Float] {
    var file = try SoundFile(readingAtPath: path)
    return try readAll(&file, zero: Float.zero) { (f, b) throws(SoundFileError) in try f.read(into: b) }
}

func doubleSamples(_ path: String) throws -> [Double] {
    var file = try SoundFile(readingAtPath: path)
    return try readAll(&file, zero: Double.zero) { (f, b) throws(SoundFileError) in try f.read(into: b) }
}

func readAll<Sample>(_ file: inout SoundFile, zero: Sample,
                     _ read: (inout SoundFile, UnsafeMutableBufferPointer<Sample>) throws(SoundFileError) -> Int) throws -> [Sample] {
    var samples: [Sample] = []
    var buffer = [Sample](repeating: zero, count: 4096 * file.info.channels)
    let channels = file.info.channels
    while true {
        let frames = try buffer.withUnsafeMutableBufferPointer { pointer throws(SoundFileError) in try read(&file, pointer) }
        if frames == 0 { break }
        samples += buffer[0..<(frames * channels)]
    }
    return samples
}

/// The largest difference between two sample runs (the shared `maxAbsoluteDifference`, under the
/// name these tests' expectations use).
func maxDifference(_ a: [Float], _ b: [Float]) -> Float {
    maxAbsoluteDifference(a, b)
}

/// The stored file of an imported sound.
func storedPath(_ scratch: Scratch, _ sound: StoredSound) -> String {
    scratch.paths.soundsFolder.appendingPathComponent(sound.storedFileName).path
}

/// Rows of the index as the `sqlite3` shell sees them: `name|storedFileName|sha256`.
func indexRows(_ scratch: Scratch) throws -> [String] {
    try runTool("sqlite3", [scratch.database, "SELECT name || '|' || storedFileName || '|' || sha256 FROM sounds ORDER BY name"])
        .split(separator: "\n").map(String.init)
}

/// A run of the binary under a time limit.
struct BoundedRun {
    var status: Int32
    var standardOutput: String
    var standardError: String
    /// The limit passed and the process was killed (it hung).
    var timedOut: Bool

    var outputLines: [String] { standardOutput.split(separator: "\n").map(String.init) }
}

/// The bytes of every file in `folder` (the lock file aside), by name.
func fileContents(_ folder: String) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name != ".lock" {
        contents[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
    }
    return contents
}

/// An `sqlite3` shell that holds the write lock of `database` (`BEGIN EXCLUSIVE` and an uncommitted
/// insert) until ``release()``; created only once the shell says it has the lock, and checked from a
/// third process: another writer is refused with "database is locked".
final class SQLiteWriteLock {
    private let process = Process()
    private let input = Pipe()

    init(_ database: String) throws {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("snoozefuse-sqlite-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.executableURL = executableInPath("sqlite3")
        process.arguments = [database]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try output.close()
        let script = """
            BEGIN EXCLUSIVE;
            INSERT INTO sounds (name, originalFileName, frames, sampleRate, channels, durationSeconds, format,
                                sourceFormat, sha256, importedAt, storedFileName)
                VALUES ('held', 'held.wav', 1, 1, 1, 1, 'x', 'x', 'held', 'x', 'held.caf');
            .print locked

            """
        input.fileHandleForWriting.write(Data(script.utf8))
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").contains("locked") {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw ToolFailure(description: "sqlite3 did not take the write lock: \((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")")
            }
            usleep(10_000)
        }
        do {
            try runTool("sqlite3", [database, "PRAGMA busy_timeout = 0; BEGIN IMMEDIATE; ROLLBACK;"])
            throw ToolFailure(description: "another sqlite3 could still write \(database): the lock is not held")
        } catch let failure as ToolFailure where failure.description.contains("database is locked") {
            // As it should be: the write lock is held.
        }
    }

    /// Ends the shell (its transaction is rolled back) and waits for it.
    func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { if process.isRunning { release() } }
}

/// The sounds folder's lock (`flock` on `.lock`), held by this test process, which to the binary is
/// another process, until ``release()``.
final class FolderLock {
    private var fd: Int32

    init(_ scratch: Scratch) throws {
        fd = open(scratch.soundsFolder + "/.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            throw ToolFailure(description: "cannot lock \(scratch.soundsFolder)/.lock: errno \(errno)")
        }
    }

    func release() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { release() }
}

import Foundation
import SnoozeFuseTestSupport
import Synchronization
import Testing

/// Real-time playback through a private PulseAudio daemon with a null sink, captured with `pacat`.
///
/// alsa-lib reads its configuration once per process, so the alarm runs in a child process (the built
/// `snoozefuse`) whose environment points libpulse at the private daemon.
@Suite("Audio alarm through PulseAudio (daemon killed and restarted mid-alarm)", .serialized)
struct AudioAlarmPulseTests {
    @Test func deviceLostFallsBackToTheBellAndReconnects() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let firstCapture = try pulse.startCapture(name: "before.raw")

        let alarm = try pulse.launch(BuiltProducts.executable("snoozefuse"), [
            "nap", "--preset", "quick-test", "--no-hold", "--device", "pulse", "--fade-in", "1",
            "--volume", "80", "--ring-limit", "16", "--events", "jsonl", "--quiet",
        ])
        let events = LineCollector(alarm.standardOutput)
        let messages = LineCollector(alarm.standardError)

        let started = try await events.wait(for: "the alarm on pulse") { $0["event"] as? String == "alarm" }
        #expect(started["output"] as? String == "ALSA pulse", "\(started); stderr: \(messages.text)")
        try await Task.sleep(for: .seconds(1.5))

        // Kill the daemon mid-alarm: the alarm moves to the bell at once.
        pulse.killDaemon()
        let lost = try await events.wait(for: "the output change to the bell") {
            $0["event"] as? String == "output" && $0["output"] as? String == "terminal bell"
        }
        #expect((lost["message"] as? String)?.contains("ALSA pulse was lost") == true, "\(lost)")
        #expect((lost["message"] as? String)?.contains("EIO") == true, "\(lost)")
        _ = try await messages.wait(for: "the bell after the loss") { _ in
            messages.text.components(separatedBy: "was lost").last?.contains("ALARM") == true
        }
        pulse.stop(firstCapture)

        // Restart the daemon: the alarm comes back on its backoff schedule (first attempt after 2 s).
        try pulse.startDaemon()
        let secondCapture = try pulse.startCapture(name: "after.raw")
        let restored = try await events.wait(for: "the output change back to pulse") {
            $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
        }
        let lostAt = try #require(lost["t"] as? Double)
        let restoredAt = try #require(restored["t"] as? Double)
        #expect(restoredAt - lostAt >= 1.99, "reconnected \(restoredAt - lostAt) s after the loss")
        try await Task.sleep(for: .seconds(1.5))
        pulse.stop(secondCapture)

        let end = try await events.wait(for: "the end of the session") { $0["event"] as? String == "end" }
        #expect(end["outcome"] as? String == "ring_limit")
        PrivatePulse.waitForExit(alarm)
        #expect(alarm.terminationStatus == 0, "stderr: \(messages.text)")

        // Both captures hold the alarm (the built-in tone at 80 %), not silence.
        let before = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("before.raw"))
        let after = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("after.raw"))
        #expect(before > 0.05, "capture before the loss: RMS \(before)")
        #expect(after > 0.05, "capture after reconnecting: RMS \(after)")
    }
}

/// A PulseAudio daemon in a private runtime folder, and every process the test starts, stopped by
/// PID on every path.
final class PrivatePulse: Sendable {
    let directory: URL
    private let processes = Mutex<[Process]>([])
    private let daemonPID = Mutex<Int32?>(nil)

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        directory = try makeTemporaryDirectory()
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory.path
        environment["HOME"] = directory.path
        environment["PULSE_SERVER"] = "unix:" + directory.appendingPathComponent("pulse/native").path
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        return environment
    }

    func startDaemon() throws {
        let daemon = Process()
        daemon.executableURL = executableInPath("pulseaudio")
        daemon.arguments = ["--daemonize=yes", "--exit-idle-time=-1", "-n",
                            "--load=module-null-sink sink_name=nullsink", "--load=module-native-protocol-unix"]
        daemon.environment = environment
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        daemon.waitUntilExit()
        let pidFile = directory.appendingPathComponent("pulse/pid")
        guard daemon.terminationStatus == 0,
              let text = try? String(contentsOf: pidFile, encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(description: "pulseaudio did not start (exit \(daemon.terminationStatus))")
        }
        daemonPID.withLock { $0 = pid }
    }

    /// Freezes the daemon (SIGSTOP): its socket stays, but it answers nothing, like a hung server.
    /// Writes to it block once the buffer is full, and opens hang in the handshake.
    func pauseDaemon() {
        if let pid = daemonPID.withLock({ $0 }) { kill(pid, SIGSTOP) }
    }

    /// Lets a paused daemon run again (SIGCONT).
    func resumeDaemon() {
        if let pid = daemonPID.withLock({ $0 }) { kill(pid, SIGCONT) }
    }

    func killDaemon() {
        let pid = daemonPID.withLock { pid in
            defer { pid = nil }
            return pid
        }
        guard let pid else { return }
        kill(pid, SIGKILL)
        // Wait until it is gone (it is not our child: poll).
        while kill(pid, 0) == 0 { usleep(10_000) }
    }

    /// Starts `pacat --record` from the null sink's monitor into `name` (raw S16LE, 48 kHz, stereo).
    func startCapture(name: String) throws -> Process {
        let path = directory.appendingPathComponent(name).path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        return try launch(executableInPath("pacat"),
                          ["--record", "-d", "nullsink.monitor", "--raw", "--format=s16le", "--rate=48000",
                           "--channels=2", "--latency-msec=50"], standardOutput: handle)
    }

    func launch(_ executable: URL, _ arguments: [String], standardOutput: FileHandle? = nil) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = standardOutput ?? Pipe()
        process.standardError = standardOutput == nil ? Pipe() : FileHandle.nullDevice
        try process.run()
        processes.withLock { $0.append(process) }
        return process
    }

    /// Stops `process` (SIGTERM, then SIGKILL if it lingers) and waits until it has exited.
    func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        for _ in 0 ..< 100 where process.isRunning { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        Self.waitForExit(process)
    }

    /// Polls instead of `waitUntilExit`, which busy-spins a run loop on this platform.
    static func waitForExit(_ process: Process) {
        while process.isRunning { usleep(20_000) }
    }

    /// Stops every process this test started (by its own PID) and the daemon, and removes the folder.
    func cleanUp() {
        for process in processes.withLock({ $0 }) where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Self.waitForExit(process)
        }
        killDaemon()
        try? FileManager.default.removeItem(at: directory)
    }

    static func rms(ofS16Stereo url: URL) throws -> Double {
        let data = try Data(contentsOf: url)
        guard data.count >= 4 else { return 0 }
        var sum = 0.0
        var count = 0
        data.withUnsafeBytes { raw in
            for index in stride(from: 0, to: raw.count - 1, by: 2) {
                let value = Int16(bitPattern: UInt16(raw[index]) | UInt16(raw[index + 1]) << 8)
                let sample = Double(value) / 32768
                sum += sample * sample
                count += 1
            }
        }
        return (sum / Double(max(count, 1))).squareRoot()
    }
}

/// Reads a pipe's lines on a thread of its own and lets the test wait for one that matches.
final class LineCollector: Sendable {
    private final class Store: Sendable {
        let lines = Mutex<[String]>([])
    }

    private let store = Store()

    init(_ output: Any?) {
        guard let pipe = output as? Pipe else { return }
        let handle = pipe.fileHandleForReading
        let store = store
        let thread = Thread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex ..< newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex ... newline)
                    store.lines.withLock { $0.append(line) }
                }
            }
            if !pending.isEmpty {
                store.lines.withLock { $0.append(String(decoding: pending, as: UTF8.self)) }
            }
        }
        thread.start()
    }

    var text: String { store.lines.withLock { $0.joined(separator: "\n") } }

    /// Waits (polling every 50 ms, giving up after a minute so a broken build fails instead of
    /// hanging) for a JSON line that satisfies `condition`.
    func wait(for what: String, _ condition: ([String: Any]) -> Bool) async throws -> [String: Any] {
        for _ in 0 ..< 1_200 {
            let objects = store.lines.withLock { $0 }.compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
            if let match = objects.first(where: condition) { return match }
            if objects.isEmpty, condition([:]) { return [:] }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PrivatePulse.Failure(description: "gave up waiting for \(what); lines so far:\n\(text)")
    }
}

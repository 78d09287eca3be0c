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
        // The script runs on a thread of its own (see AudioAlarmStallTests).
        let seen = try await onOwnThread { () throws -> Seen in
            var seen = Seen()
            try pulse.startDaemon()
            let firstCapture = try pulse.startCapture(name: "before.raw")
            let nap = try PulseNap(on: pulse, ringLimit: 16)
            let started = try nap.events.waitBlocking(for: "the alarm on pulse") { $0["event"] as? String == "alarm" }
            seen.startedOn = started["output"] as? String ?? ""
            usleep(1_500_000)

            // Kill the daemon mid-alarm: the alarm moves to the bell at once.
            pulse.killDaemon()
            let lost = try nap.events.waitBlocking(for: "the output change to the bell") {
                $0["event"] as? String == "output" && $0["output"] as? String == "terminal bell"
            }
            seen.lost = lost["message"] as? String ?? ""
            _ = try nap.messages.waitBlocking(for: "the bell after the loss") { _ in
                nap.messages.text.components(separatedBy: "was lost").last?.contains("ALARM") == true
            }
            pulse.stop(firstCapture)

            // Restart the daemon: the alarm comes back on its backoff schedule (first attempt after 2 s).
            try pulse.startDaemon()
            let secondCapture = try pulse.startCapture(name: "after.raw")
            let restored = try nap.events.waitBlocking(for: "the output change back to pulse") {
                $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
            }
            seen.backAfter = (restored["t"] as? Double ?? 0) - (lost["t"] as? Double ?? 0)
            usleep(1_500_000)
            pulse.stop(secondCapture)
            try nap.waitForTheEnd(into: &seen)
            // Both captures hold the alarm (the built-in tone at 80 %), not silence.
            seen.rmsBefore = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("before.raw"))
            seen.rms = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("after.raw"))
            return seen
        }
        #expect(seen.startedOn == "ALSA pulse", "stderr: \(seen.stderr)")
        #expect(seen.lost.contains("ALSA pulse was lost"), "\(seen.lost)")
        #expect(seen.lost.contains("EIO"), "\(seen.lost)")
        let backAfter = try #require(seen.backAfter)
        #expect(backAfter >= 1.99, "reconnected \(backAfter) s after the loss")
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "stderr: \(seen.stderr)")
        #expect(seen.rmsBefore > 0.05, "capture before the loss: RMS \(seen.rmsBefore)")
        #expect(seen.rms > 0.05, "capture after reconnecting: RMS \(seen.rms)")
    }
}

@Suite("Sleep sound through PulseAudio", .serialized)
struct SleepSoundPulseTests {
    /// `nap --sleep-sound noise` on a real-time sink: white noise from the start of the release
    /// through the nap, faded out and silent 3 s before the alarm (so its stream is closed before
    /// the alarm's device is opened, 2 s ahead), then the alarm.
    @Test func noisePlaysWhileReleasingAndNappingAndEndsBeforeTheAlarm() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        // The script runs on a thread of its own (see AudioAlarmStallTests).
        let (status, events, messages) = try await onOwnThread { () throws -> (Int32, String, String) in
            try pulse.startDaemon()
            let capture = try pulse.startCapture(name: "session.raw")
            // Let pacat connect before the nap starts, so the capture holds the whole session.
            usleep(500_000)
            let nap = try pulse.launch(BuiltProducts.executable("snoozefuse"), [
                "nap", "--preset", "quick-test", "--no-hold", "--device", "pulse", "--fade-in", "0",
                "--volume", "80", "--ring-limit", "2", "--sleep-sound", "noise:color=white,volume=1",
                "--sleep-volume", "50", "--events", "jsonl", "--quiet",
            ])
            let events = LineCollector(nap.standardOutput)
            let messages = LineCollector(nap.standardError)
            _ = try events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
            PrivatePulse.waitForExit(nap)
            usleep(300_000)
            pulse.stop(capture)
            return (nap.terminationStatus, events.text, messages.text)
        }
        #expect(status == 0, "stderr: \(messages)")
        #expect(events.contains(#""outcome":"ring_limit""#), "\(events)")
        #expect(events.contains(#""output":"ALSA pulse""#), "the alarm on pulse: \(events); stderr: \(messages)")
        #expect(!events.contains(#""warning""#), "no sleep-sound problem: \(events)")

        // 10 ms RMS windows of the capture. The null sink's monitor does not keep time while no
        // stream plays (the silence between the sleep sound and the alarm comes out shorter than
        // it was), so this checks what was heard, in order; the timing is the driver's (tested on
        // a manual clock) and the length of the stream (tested through the `file` PCM).
        let levels = try PrivatePulse.windowRMS(ofS16Stereo: pulse.directory.appendingPathComponent("session.raw"), windowFrames: 480)
        let trace = levels.enumerated().filter { $0.offset % 10 == 0 }.map { String(format: "%.1f:%.3f", Double($0.offset) / 100, $0.element) }.joined(separator: " ")
        let noiseStart = try #require(levels.firstIndex { $0 > 0.01 }, "the capture never left silence: \(trace)")
        let silenceStart = try #require(levels[noiseStart...].firstIndex { $0 < 0.001 }, "the sleep sound never ended: \(trace)")
        let alarmStart = try #require(levels[silenceStart...].firstIndex { $0 > 0.01 }, "no alarm after the sleep sound: \(trace)")
        // Noise, never a silent 10 ms window (unlike the beeping tone), for over 3 s: the release
        // (2 s) and into the nap; at full level (white noise at 50 %: RMS 0.29) in its middle.
        #expect(silenceStart - noiseStart > 300, "the sleep sound lasted \(Double(silenceStart - noiseStart) / 100) s: \(trace)")
        #expect(levels[(noiseStart + 100) ..< (noiseStart + 200)].allSatisfy { $0 > 0.25 && $0 < 0.33 }, "full level: \(trace)")
        // It fades out: each 200 ms step of its last second is quieter than the one before.
        let fade = stride(from: silenceStart - 100, to: silenceStart, by: 20).map { levels[$0] }
        #expect(zip(fade, fade.dropFirst()).allSatisfy { $0 > $1 }, "fade-out \(fade)")
        // Then silence, then the alarm: the built-in tone at 80 % (beeps of 100 ms with gaps).
        #expect(alarmStart - silenceStart > 50, "silence before the alarm: \(trace)")
        let ringing = levels[alarmStart ..< min(alarmStart + 100, levels.count)]
        #expect(ringing.filter { $0 > 0.4 }.count > 20 && ringing.filter { $0 < 0.001 }.count > 20, "the beeping alarm: \(trace)")
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

    func launch(_ executable: URL, _ arguments: [String], standardOutput: FileHandle? = nil,
                extraEnvironment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(extraEnvironment) { _, extra in extra }
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

    /// The RMS of the left channel of a raw S16LE stereo capture, per window of `windowFrames`.
    static func windowRMS(ofS16Stereo url: URL, windowFrames: Int) throws -> [Double] {
        let data = try Data(contentsOf: url)
        return data.withUnsafeBytes { raw in
            let frames = raw.count / 4
            return stride(from: 0, to: frames - windowFrames + 1, by: windowFrames).map { first in
                var sum = 0.0
                for frame in first ..< first + windowFrames {
                    let value = Int16(bitPattern: UInt16(raw[frame * 4]) | UInt16(raw[frame * 4 + 1]) << 8)
                    sum += (Double(value) / 32768) * (Double(value) / 32768)
                }
                return (sum / Double(windowFrames)).squareRoot()
            }
        }
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
    /// hanging) for a JSON line that satisfies `condition`. Blocks the calling thread: for test
    /// scripts on a thread of their own (`onOwnThread`).
    func waitBlocking(for what: String, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        for _ in 0 ..< 1_200 {
            if let match = firstMatch(condition) { return match }
            usleep(50_000)
        }
        throw PrivatePulse.Failure(description: "gave up waiting for \(what); lines so far:\n\(text)")
    }

    /// The first JSON line so far that satisfies `condition`; when no line is JSON, `[:]` if the
    /// condition (one on `text`) holds for it.
    private func firstMatch(_ condition: ([String: Any]) -> Bool) -> [String: Any]? {
        let objects = store.lines.withLock { $0 }.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        if let match = objects.first(where: condition) { return match }
        if objects.isEmpty, condition([:]) { return [:] }
        return nil
    }
}

/// What a test script saw, handed from its thread to the test's assertions.
struct Seen: Sendable {
    var startedOn = ""
    var lateness: Double?
    var lost = ""
    var handOver: Double?
    var retry = ""
    var retryAfterLoss = 0.0
    var restored = ""
    var backAfter: Double?
    var endedAfter: Double?
    var rmsBefore = 0.0
    var rms = 0.0
    var outcome = ""
    var status: Int32 = -1
    var stderr = ""
}

/// `snoozefuse nap` with its alarm on the private daemon's `pulse` device (run directly, or through
/// a driver program given its command line), its events and messages collected. Its waits block:
/// use it from a script on its own thread (`onOwnThread`).
struct PulseNap {
    let process: Process
    let events: LineCollector
    let messages: LineCollector

    init(on pulse: PrivatePulse, ringLimit: Int, through driver: [String] = [], options: [String] = []) throws {
        let nap = [BuiltProducts.executable("snoozefuse").path, "nap", "--preset", "quick-test", "--no-hold",
                   "--device", "pulse", "--fade-in", "1", "--volume", "80", "--ring-limit", "\(ringLimit)",
                   "--events", "jsonl", "--quiet"] + options
        let command = driver + nap
        process = try pulse.launch(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        events = LineCollector(process.standardOutput)
        messages = LineCollector(process.standardError)
    }

    /// Waits until the alarm starts, then past the null sink's start-up (it holds a new stream's
    /// writes for up to 1.7 s), so a stream on pulse is in its steady state. Returns the output.
    func waitUntilPlayingOnPulse() throws -> String {
        let started = try events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }
        usleep(2_500_000)
        return started["output"] as? String ?? ""
    }

    /// Waits for the session's end record and the process's exit (at most 20 s, then it is
    /// stopped, so a hang fails the test instead of hanging it).
    func waitForTheEnd(into seen: inout Seen) throws {
        let end = try events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
        seen.outcome = end["outcome"] as? String ?? ""
        for _ in 0 ..< 1_000 where process.isRunning { usleep(20_000) }
        seen.status = process.isRunning ? -1 : process.terminationStatus
        seen.stderr = messages.text
    }
}

/// Runs `body` on a thread of its own (not Swift's shared pool) and returns what it returns.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// An event's `wall` time.
func wallTime(_ event: [String: Any]) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return (event["wall"] as? String).flatMap { formatter.date(from: $0) }
}

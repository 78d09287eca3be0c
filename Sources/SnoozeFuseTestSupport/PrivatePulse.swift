public import Foundation
import SnoozeFuseSystem

// Real-time playback tests against a PulseAudio daemon of the test's own: a null sink, captured
// with `pacat`, and the built `snoozefuse` started on it. alsa-lib reads its configuration once per
// process, so whatever plays through the daemon runs in a child process whose environment points
// libpulse at it.
//
// The waits here block their thread: run a test's script on a thread of its own (`onOwnThread`),
// so that suites running in parallel, which can hold up Swift's shared pool for seconds, move
// neither its signals nor its measurements.

/// The sound servers a test can start: PulseAudio itself, or PipeWire with its session manager
/// (WirePlumber) and its PulseAudio-protocol server (pipewire-pulse), as current desktops run it.
public enum SoundServer: String, Sendable, CaseIterable, CustomStringConvertible {
    case pulseAudio = "PulseAudio"
    case pipeWire = "PipeWire"

    public var description: String { rawValue }
}

/// A sound server in a private runtime folder (with a null sink, `nullsink`, the default sink),
/// and every process the test starts, stopped by PID on every path (`cleanUp`). Either server
/// speaks the PulseAudio protocol on `pulse/native` in the folder, so `pactl`, `pacat` and the nap
/// reach both the same way.
public final class PrivatePulse: Sendable {
    /// The daemon's runtime and home folder; captures are written here too.
    public let directory: URL
    /// Which server `startDaemon` starts.
    public let server: SoundServer
    private let processes = Locked<[Process]>([])
    private let daemonPID = Locked<Int32?>(nil)
    /// PipeWire's processes (pipewire, wireplumber, pipewire-pulse), in the order they started.
    private let pipeWireProcesses = Locked<[Process]>([])

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Makes the folder; the daemon starts with `startDaemon`.
    public init(server: SoundServer = .pulseAudio) throws {
        directory = try makeTemporaryDirectory()
        self.server = server
    }

    /// This process's environment with libpulse pointed at the private daemon: away from any
    /// session bus for PulseAudio, on the test's own session bus for PipeWire (WirePlumber needs one).
    public var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory.path
        environment["HOME"] = directory.path
        environment["PULSE_SERVER"] = "unix:" + directory.appendingPathComponent("pulse/native").path
        for name in ["DBUS_SESSION_BUS_ADDRESS", "PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"] {
            environment.removeValue(forKey: name)
        }
        if server == .pipeWire {
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + directory.appendingPathComponent("bus").path
        }
        return environment
    }

    /// Starts the server (again, after `killDaemon`) and waits until it answers.
    public func startDaemon() throws {
        switch server {
        case .pulseAudio: try startPulseAudio()
        case .pipeWire: try startPipeWire()
        }
    }

    /// Starts PulseAudio and waits until it has written its PID.
    private func startPulseAudio() throws {
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

    /// Starts a private session bus (once), then pipewire, wireplumber and pipewire-pulse, and
    /// waits until the PulseAudio protocol answers; then adds `nullsink` and makes it the default.
    private func startPipeWire() throws {
        let bus = directory.appendingPathComponent("bus")
        if !FileManager.default.fileExists(atPath: bus.path) {
            _ = try launch(executableInPath("dbus-daemon"), ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(bus.path)"])
            try waitFor("the private session bus at \(bus.path)") { FileManager.default.fileExists(atPath: bus.path) }
        }
        let pipewire = try launch(executableInPath("pipewire"), [])
        pipeWireProcesses.withLock { $0 = [pipewire] }
        try waitFor("pipewire's socket") { FileManager.default.fileExists(atPath: self.directory.appendingPathComponent("pipewire-0").path) }
        let sessionManager = try launch(executableInPath("wireplumber"), [])
        let pulseServer = try launch(executableInPath("pipewire-pulse"), [])
        pipeWireProcesses.withLock { $0 += [sessionManager, pulseServer] }
        daemonPID.withLock { $0 = pulseServer.processIdentifier }
        try waitFor("pipewire-pulse to answer") { (try? self.pactl(["info"], output: true))?.contains("PipeWire") == true }
        try pactl(["load-module", "module-null-sink", "sink_name=nullsink"])
        try waitFor("the null sink on PipeWire") { (try? self.pactl(["list", "short", "sinks"], output: true))?.contains("nullsink") == true }
        // The default is the session manager's (its `default` metadata): until wireplumber has
        // made it, pipewire-pulse answers "Not supported". In full runs a wireplumber started
        // again after a kill sometimes never made it; then it is started once more.
        var last = ""
        for attempt in 1 ... 3 {
            do {
                try waitFor("the null sink as PipeWire's default", seconds: 6) {
                    do {
                        try self.pactl(["set-default-sink", "nullsink"])
                        last = try self.pactl(["get-default-sink"], output: true).trimmingCharacters(in: .whitespacesAndNewlines)
                        return last == "nullsink"
                    } catch {
                        last = "\(error)"
                        return false
                    }
                }
                return
            } catch where attempt < 3 {
                let stale = pipeWireProcesses.withLock { $0.count > 1 ? $0[1] : nil }
                if let stale, stale.isRunning {
                    kill(stale.processIdentifier, SIGKILL)
                    Self.waitForExit(stale)
                }
                let again = try launch(executableInPath("wireplumber"), [])
                pipeWireProcesses.withLock { if $0.count > 1 { $0[1] = again } }
            } catch {
                let sinks = (try? pactl(["list", "short", "sinks"], output: true)) ?? "?"
                throw Failure(description: "\(error); last: \(last); sinks: \(sinks)")
            }
        }
    }

    /// Polls `condition` every 50 ms for up to `seconds`.
    private func waitFor(_ what: String, seconds: Int = 15, _ condition: () -> Bool) throws {
        for _ in 0 ..< seconds * 20 {
            if condition() { return }
            usleep(50_000)
        }
        throw Failure(description: "\(server) in \(directory.path): gave up waiting for \(what)")
    }

    /// Freezes the daemon (SIGSTOP): its socket stays, but it answers nothing, like a hung server.
    /// Writes to it block once the buffer is full, and opens hang in the handshake.
    public func pauseDaemon() {
        if let pid = daemonPID.withLock({ $0 }) { kill(pid, SIGSTOP) }
    }

    /// Lets a paused daemon run again (SIGCONT).
    public func resumeDaemon() {
        if let pid = daemonPID.withLock({ $0 }) { kill(pid, SIGCONT) }
    }

    /// Kills the daemon (SIGKILL) and waits until it is gone: for PipeWire, pipewire-pulse,
    /// wireplumber and pipewire itself, as when the whole server crashes.
    public func killDaemon() {
        if server == .pipeWire {
            daemonPID.withLock { $0 = nil }
            for process in pipeWireProcesses.withLock({ $0 }).reversed() where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                Self.waitForExit(process)
            }
            return
        }
        let pid = daemonPID.withLock { pid in
            defer { pid = nil }
            return pid
        }
        guard let pid else { return }
        kill(pid, SIGKILL)
        // Wait until it is gone (it is not our child: poll).
        while kill(pid, 0) == 0 { usleep(10_000) }
    }

    /// Starts `pacat --record` from the null sink's monitor into `name` in `directory` (raw S16LE,
    /// 48 kHz, stereo: read it with `rms(ofS16Stereo:)` or `windowRMS(ofS16Stereo:windowFrames:)`).
    public func startCapture(name: String, sink: String = "nullsink") throws -> Process {
        let path = directory.appendingPathComponent(name).path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        return try launch(executableInPath("pacat"),
                          ["--record", "-d", "\(sink).monitor", "--raw", "--format=s16le", "--rate=48000",
                           "--channels=2", "--latency-msec=50"], standardOutput: handle)
    }

    /// Starts `executable` with the daemon's environment (and `extraEnvironment`), standard input
    /// `/dev/null`. Its standard output goes to `standardOutput` (then its errors are dropped) or
    /// to a pipe, and so do its errors: read the pipes with `LineCollector`. `cleanUp` stops it.
    public func launch(_ executable: URL, _ arguments: [String], standardOutput: FileHandle? = nil,
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
    public func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        for _ in 0 ..< 100 where process.isRunning { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        Self.waitForExit(process)
    }

    /// Polls instead of `waitUntilExit`, which busy-spins a run loop on this platform.
    public static func waitForExit(_ process: Process) {
        while process.isRunning { usleep(20_000) }
    }

    /// Stops every process this test started (by its own PID) and the daemon, and removes the folder.
    public func cleanUp() {
        for process in processes.withLock({ $0 }) where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Self.waitForExit(process)
        }
        killDaemon()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `pactl` against the private daemon; returns its standard output when `output` is set.
    @discardableResult
    public func pactl(_ arguments: [String], output wanted: Bool = false) throws -> String {
        let process = try launch(executableInPath("pactl"), arguments)
        let output = LineCollector(process.standardOutput)
        let errors = LineCollector(process.standardError)
        PrivatePulse.waitForExit(process)
        guard process.terminationStatus == 0 else {
            for _ in 0 ..< 50 where errors.text.isEmpty { usleep(10_000) }
            throw Failure(description: "pactl \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(errors.text)")
        }
        // The collector's thread reads until end of file; the process has exited, so that comes.
        for _ in 0 ..< 200 where wanted && output.text.isEmpty { usleep(10_000) }
        return output.text
    }

    /// Adds a null sink named `name` with `properties` (`device.form_factor=headset
    /// device.bus=bluetooth` stands in for a Bluetooth headset).
    /// Returns the module's index, for `unload-module`.
    @discardableResult
    public func addSink(_ name: String, properties: String? = nil) throws -> String {
        var arguments = ["load-module", "module-null-sink", "sink_name=\(name)"]
        if let properties { arguments.append("sink_properties=\(properties)") }
        let module = try pactl(arguments, output: true).trimmingCharacters(in: .whitespacesAndNewlines)
        try waitFor("sink '\(name)'") { (try? self.pactl(["list", "short", "sinks"], output: true))?.contains(name) == true }
        return module
    }

    /// Whether `sink` is muted, as `pactl get-sink-mute` reports it.
    public func sinkMuted(_ sink: String = "nullsink") throws -> Bool {
        try pactl(["get-sink-mute", sink], output: true).contains("yes")
    }

    /// The null sink's volume in percent (its first channel), as `pactl get-sink-volume` reports it.
    public func sinkVolumePercent(_ sink: String = "nullsink") throws -> Int? {
        let text = try pactl(["get-sink-volume", sink], output: true)
        guard let percent = text.firstMatch(of: /(\d+)%/) else { return nil }
        return Int(percent.1)
    }

    /// The RMS of both channels of a raw S16LE stereo capture.
    public static func rms(ofS16Stereo url: URL) throws -> Double {
        let data = try Data(contentsOf: url)
        guard data.count >= 4 else { return 0 }
        return SnoozeFuseTestSupport.rms(rawS16AsFloats(in: data))
    }

    /// The RMS of the left channel of a raw S16LE stereo capture, per window of `windowFrames`.
    public static func windowRMS(ofS16Stereo url: URL, windowFrames: Int) throws -> [Double] {
        let samples = rawS16AsFloats(in: try Data(contentsOf: url))
        let left = (0 ..< samples.count / 2).map { samples[$0 * 2] }
        return stride(from: 0, to: left.count - windowFrames + 1, by: windowFrames).map { first in
            SnoozeFuseTestSupport.rms(left[first ..< first + windowFrames])
        }
    }
}

/// Reads a pipe's lines on a thread of its own and lets the test wait for one that matches.
public final class LineCollector: Sendable {
    private final class Store: Sendable {
        let lines = Locked<[String]>([])
    }

    private let store = Store()

    /// Starts reading `output` (a `Process`'s `standardOutput` or `standardError`) when it is a
    /// `Pipe`; collects nothing otherwise.
    public init(_ output: Any?) {
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

    /// The lines so far, joined by newlines.
    public var text: String { store.lines.withLock { $0.joined(separator: "\n") } }

    /// Waits (polling every 50 ms, giving up after a minute so a broken build fails instead of
    /// hanging) for a JSON line that satisfies `condition`. Blocks the calling thread: for test
    /// scripts on a thread of their own (`onOwnThread`).
    public func waitBlocking(for what: String, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
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

/// What a test script saw of a `PulseNap`, handed from its thread to the test's assertions.
public struct Seen: Sendable {
    public var startedOn = ""
    public var lateness: Double?
    public var lost = ""
    public var handOver: Double?
    public var retry = ""
    public var retryAfterLoss = 0.0
    public var restored = ""
    public var backAfter: Double?
    public var endedAfter: Double?
    public var rmsBefore = 0.0
    public var rms = 0.0
    public var outcome = ""
    public var status: Int32 = -1
    public var stderr = ""

    public init() {}
}

/// `snoozefuse nap` with its alarm on the private daemon's `pulse` device (run directly, or through
/// a driver program given its command line), its events and messages collected. Its waits block:
/// use it from a script on its own thread (`onOwnThread`).
public struct PulseNap {
    public let process: Process
    /// The nap's `--events jsonl` records.
    public let events: LineCollector
    /// The nap's standard error.
    public let messages: LineCollector

    /// Starts `nap --preset quick-test --no-hold --device pulse --fade-in 1 --volume 80` with
    /// `--ring-limit ringLimit` and `options` (later options win).
    public init(on pulse: PrivatePulse, ringLimit: Int, through driver: [String] = [], options: [String] = []) throws {
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
    public func waitUntilPlayingOnPulse() throws -> String {
        let started = try events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }
        usleep(2_500_000)
        return started["output"] as? String ?? ""
    }

    /// Waits for the session's end record and the process's exit (at most 20 s, then it is
    /// stopped, so a hang fails the test instead of hanging it).
    public func waitForTheEnd(into seen: inout Seen) throws {
        let end = try events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
        seen.outcome = end["outcome"] as? String ?? ""
        for _ in 0 ..< 1_000 where process.isRunning { usleep(20_000) }
        seen.status = process.isRunning ? -1 : process.terminationStatus
        seen.stderr = messages.text
    }
}

/// A `PulseNap` holds its `Process`, which Foundation does not make `Sendable`: it stays on the
/// script's thread.
@available(*, unavailable)
extension PulseNap: Sendable {}

/// Runs `body` on a thread of its own (not Swift's shared pool) and returns what it returns.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// An event's `wall` time (ISO 8601 with fractional seconds), or `nil`.
public func wallTime(_ event: [String: Any]) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return (event["wall"] as? String).flatMap { formatter.date(from: $0) }
}

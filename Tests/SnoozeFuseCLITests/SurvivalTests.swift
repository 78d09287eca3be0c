import Foundation
import Glibc
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// One user's nap files in a folder of their own (state, runtime, data), and the built binary run
/// with them: naps of tests that run side by side never meet.
final class NapHome: Sendable {
    let folder: TemporaryFolder
    let environment: [String: String]

    init() throws {
        folder = try TemporaryFolder(prefix: "snoozefuse-survival")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = folder.path("state")
        environment["XDG_RUNTIME_DIR"] = folder.url.path
        environment["XDG_DATA_HOME"] = folder.path("data")
        environment["XDG_CONFIG_HOME"] = folder.path("config")
        environment["NO_COLOR"] = "1"
        self.environment = environment
    }

    var sessionFile: String { folder.path("state/snoozefuse/session.json") }

    /// What a failed expectation should show: the live state and the nap's messages.
    var diagnosis: String {
        let messages = (try? String(contentsOfFile: folder.path("events.jsonl.err"), encoding: .utf8)) ?? ""
        let events = (try? String(contentsOfFile: folder.path("events.jsonl"), encoding: .utf8)) ?? ""
        return "state: \(state().map { "\($0)" } ?? "none"); messages: \(messages); events: \(events)"
    }
    var guardianLog: String { folder.path("state/snoozefuse/guardian.jsonl") }
    var socket: String { folder.path("snoozefuse/control.sock") }

    /// Runs `snoozefuse arguments…` to its end (blocking: for the tests' scripts on threads of their own).
    func run(_ arguments: [String]) throws -> ProcessResult {
        try runProcessBlocking(BuiltProducts.executable("snoozefuse"), arguments, environment: environment)
    }

    /// Starts `snoozefuse arguments…` in the background, its output into `events` (a file of the folder).
    func launch(_ arguments: [String], events: String = "events.jsonl", program: URL? = nil) throws -> BackgroundProcess {
        try BackgroundProcess(program ?? BuiltProducts.executable("snoozefuse"), arguments, environment: environment,
                              standardOutput: folder.path(events), standardError: folder.path(events + ".err"))
    }

    /// The live state, when there is one.
    func state() -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: sessionFile) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    /// JSON objects, one per line, of a file of the folder (or the guardian's log).
    func lines(_ path: String) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// What `snoozefuse status` says every 100 ms until `done` holds for it, at most `count` times.
    func status(atMost count: Int, until done: (String) -> Bool) throws -> [String] {
        var said: [String] = []
        for _ in 0 ..< count {
            let text = try run(["status"]).standardOutput
            said.append(text)
            if done(text) { break }
            usleep(100_000)
        }
        return said
    }

    /// SIGSTOPs the nap `pid` and its guardian, keeps what `status` says until it calls the nap late
    /// (its alarm due half a second ago), lets the guardian go on (it wakes the nap, SIGCONT), and
    /// keeps what `status` says until the alarm rings. With the guardian running, the nap is late
    /// only from half a second to a second past its alarm: a loaded machine's `status` can miss it.
    func stoppedThenLateThenWoken(nap pid: Int32) throws -> [String] {
        guard let guardian = (state()?["guardianPid"] as? NSNumber)?.int32Value else { return ["no guardian in the live state"] }
        kill(pid, SIGSTOP)
        kill(guardian, SIGSTOP)
        var said = try status(atMost: 300) { $0.hasPrefix("late:") }
        kill(guardian, SIGCONT)
        said += try status(atMost: 300) { $0.hasPrefix("ringing") }
        return said
    }

    /// What `snoozefuse status --json` says the nap is (`none`, `running`, `guarded`…).
    func status() -> String {
        guard let result = try? run(["status", "--json"]),
              let object = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] else { return "?" }
        return object["status"] as? String ?? "?"
    }
}

/// Waits until `condition` holds, looking every 20 ms, for at most `limit` (a guard against a hang:
/// the test then fails on what it found). Blocking: for scripts on threads of their own, which the
/// tests that run side by side cannot hold up.
func waitFor(_ limit: Duration = .seconds(60), _ condition: () -> Bool) -> Bool {
    let end = ContinuousClock.now.advanced(by: limit)
    while ContinuousClock.now < end {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// The due instant of the live state's alarm, in seconds since 1970.
func alarmDue(_ state: [String: Any]?) -> Double? {
    ((state?["alarm"] as? [String: Any])?["due"] as? [String: Any])?["wallSeconds"] as? Double
}

/// The loudness of a recorded WAV.
func recordedRMS(_ path: String) throws -> Double {
    let wav = try WAVFile(contentsOf: URL(fileURLWithPath: path))
    return rms(wav.formatTag == 3 ? rawFloats(in: wav.data) : rawS16AsFloats(in: wav.data))
}

/// What a test's script saw, for its expectations (made in the test, not on the script's thread).
struct Observed: Sendable {
    var steps: [String: Bool] = [:]
    var numbers: [String: Double] = [:]
    var texts: [String: String] = [:]

    subscript(step: String) -> Bool { steps[step] ?? false }
}

/// The `NapHome` and `Observed` of a script run on a thread of its own.
func script(_ body: @escaping @Sendable (NapHome, inout Observed) throws -> Void) async throws -> Observed {
    let home = try NapHome()
    return try await onOwnThread {
        var seen = Observed()
        do {
            try body(home, &seen)
        } catch {
            seen.texts["error"] = "\(error)"
        }
        seen.texts["diagnosis"] = home.diagnosis
        return seen
    }
}

/// The name of the program process `pid` runs (its executable's file name).
private func programName(_ pid: Int32) -> String? {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")).map { URL(fileURLWithPath: $0).lastPathComponent }
}

/// Whether descriptor `fd` of process `pid` is the state folder's guardian lock.
func isGuardianLock(_ pid: Int32, _ fd: Int32) -> Bool {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"))?.hasSuffix("/guardian.lock") == true
}

@Suite("A nap that nothing silences: guardian, hang-up, control, status, resume", .serialized)
struct SurvivalTests {
    @Test func aNapKilledWhileNappingIsRungByItsGuardianAtItsDeadline() async throws {
        let seen = try await script { home, seen in
            let capture = home.folder.path("alarm.wav")
            // --dismiss key: a script stops the alarm with `snoozefuse stop` (the guardian keeps the choice).
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "5", "--max", "60", "--fade-in", "0",
                                       "--device", "file:FILE=\(capture),FORMAT=wav", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil }
            guard let live = home.state(), let due = alarmDue(live), let guardian = (live["guardianPid"] as? NSNumber)?.int32Value else { return }
            // While the nap lives, its guardian waits as the small watcher program, holding the
            // guardian's lock on descriptor 4 (the nap starts it and goes on: the watcher takes
            // its lock moments later).
            seen.texts["guardian waits as"] = programName(guardian)
            seen.steps["the watcher holds the lock"] = waitFor(.seconds(10)) { isGuardianLock(guardian, 4) }
            nap.signal(SIGKILL)
            nap.wait()
            seen.steps["guarded before the alarm"] = waitFor { home.status() == "guarded" }
            // Then it is the whole program (the same process), with a lock of its own: the
            // watcher's descriptor is closed, so no child of the guardian can keep it.
            seen.steps["became snoozefuse"] = waitFor { programName(guardian) == "snoozefuse" }
            seen.steps["the watcher's descriptor is closed"] = waitFor { !isGuardianLock(guardian, 4) }
            // The guardian rings at the original deadline, and says so in its events.
            seen.steps["guardian rang"] = waitFor { home.lines(home.guardianLog).contains { $0["event"] as? String == "alarm" } }
            if let alarm = home.lines(home.guardianLog).first(where: { $0["event"] as? String == "alarm" }) {
                seen.numbers["from the deadline"] = (wallTime(alarm)?.timeIntervalSince1970 ?? 0) - due
                seen.numbers["lateness ms"] = alarm["lateness_ms"] as? Double ?? 1000
            }
            seen.steps["guarded while ringing"] = home.status() == "guarded"
            // It rings on the nap's device, and `stop` ends it.
            seen.steps["heard"] = waitFor { (try? recordedRMS(capture)) ?? 0 > 0.05 }
            let stop = try home.run(["stop"])
            seen.numbers["stop status"] = Double(stop.status)
            seen.steps["guardian ended"] = waitFor { !isRunning(guardian) }
            seen.texts["status after"] = home.status()
            seen.steps["dismissed"] = home.lines(home.guardianLog).contains { $0["event"] as? String == "end" && $0["outcome"] as? String == "dismissed" }
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen.texts["guardian waits as"] == "snoozefuse-guardian")
        #expect(seen["the watcher holds the lock"])
        #expect(seen["guarded before the alarm"])
        #expect(seen["became snoozefuse"])
        #expect(seen["the watcher's descriptor is closed"])
        #expect(seen["guardian rang"], "\(seen.texts)")
        let offset = try #require(seen.numbers["from the deadline"])
        #expect(abs(offset) < 0.1, "rang \(offset) s from the deadline")
        #expect(seen.numbers["lateness ms"] ?? 1000 < 100)
        #expect(seen["guarded while ringing"])
        #expect(seen["heard"])
        #expect(seen.numbers["stop status"] == 0)
        #expect(seen["guardian ended"])
        #expect(seen.texts["status after"] == "none")
        #expect(seen["dismissed"], "\(seen.texts)")
    }

    /// A double fault: the guardian SIGKILLed mid-nap, then the nap. The nap reaps the dead
    /// guardian at once (no zombie), starts a new one, says so in a `guardian` event and names it
    /// in the live state; the new guardian rings the alarm at its deadline, on the recording.
    @Test func aGuardianKilledMidNapIsReplacedAndTheNewOneRingsWhenTheNapDiesToo() async throws {
        let seen = try await script { home, seen in
            let capture = home.folder.path("alarm.wav")
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "6", "--max", "60", "--fade-in", "0",
                                       "--ring-limit", "2", "--device", "file:FILE=\(capture),FORMAT=wav", "--events", "jsonl", "--quiet"])
            func guardianPid() -> Int32? { (home.state()?["guardianPid"] as? NSNumber)?.int32Value }
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" && guardianPid() != nil }
            guard let live = home.state(), let due = alarmDue(live), let first = guardianPid() else { return }
            seen.steps["the first watcher holds the lock"] = waitFor(.seconds(10)) { isGuardianLock(first, 4) }
            // The moment between the guardian's death and its replacement, drawn out by stopping the
            // nap: status says the nap is unguarded.
            nap.signal(SIGSTOP)
            kill(first, SIGKILL)
            seen.steps["the first died"] = waitFor { !isRunning(first) }
            if let result = try? home.run(["status", "--json"]),
               let object = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] {
                seen.texts["unguarded"] = (object["unguarded"] as? Bool).map { "\($0)" } ?? "absent"
            }
            if let result = try? home.run(["status"]) { seen.texts["unguarded text"] = result.standardOutput }
            nap.signal(SIGCONT)
            seen.steps["replaced"] = waitFor {
                home.lines(home.folder.path("events.jsonl")).contains { $0["event"] as? String == "guardian" && $0["what"] as? String == "replaced" }
            }
            let event = home.lines(home.folder.path("events.jsonl")).first { $0["event"] as? String == "guardian" }
            seen.texts["event"] = event?["message"] as? String
            // Reaped: no `<defunct>` left behind.
            seen.steps["the first is reaped"] = waitFor { !FileManager.default.fileExists(atPath: "/proc/\(first)") }
            seen.steps["the state names another"] = waitFor { guardianPid().map { $0 != first } == true }
            guard let second = guardianPid() else { return }
            seen.texts["second"] = "\(second)"
            seen.steps["the new watcher holds the lock"] = waitFor(.seconds(10)) { isGuardianLock(second, 4) }
            seen.texts["status"] = home.status()
            if let result = try? home.run(["status"]) { seen.texts["status text"] = result.standardOutput }
            nap.signal(SIGKILL)
            nap.wait()
            seen.steps["guarded"] = waitFor { home.status() == "guarded" }
            seen.steps["the new guardian rang"] = waitFor { home.lines(home.guardianLog).contains { $0["event"] as? String == "alarm" } }
            if let alarm = home.lines(home.guardianLog).first(where: { $0["event"] as? String == "alarm" }) {
                seen.numbers["from the deadline"] = (wallTime(alarm)?.timeIntervalSince1970 ?? 0) - due
            }
            seen.steps["heard"] = waitFor { (try? recordedRMS(capture)) ?? 0 > 0.05 }
            seen.steps["the guardian ended"] = waitFor { !isRunning(second) }
            seen.texts["outcome"] = home.lines(home.guardianLog).last { $0["event"] as? String == "end" }?["outcome"] as? String
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen["the first watcher holds the lock"])
        #expect(seen["the first died"])
        #expect(seen.texts["unguarded"] == "true", "\(seen.texts)")
        #expect(seen.texts["unguarded text"]?.contains("unguarded: no guardian watches the nap now") == true, "\(seen.texts)")
        #expect(seen["replaced"], "\(seen.texts)")
        #expect(seen.texts["event"]?.contains("killed by signal 9") == true, "\(seen.texts)")
        #expect(seen.texts["event"]?.contains("a new one (pid \(seen.texts["second"] ?? "?")) rings the alarm if this process dies") == true,
                "\(seen.texts)")
        #expect(seen["the first is reaped"])
        #expect(seen["the state names another"])
        #expect(seen["the new watcher holds the lock"])
        #expect(seen.texts["status"] == "running")
        #expect(seen.texts["status text"]?.contains("unguarded") == false, "\(seen.texts)")
        #expect(seen["guarded"], "\(seen.texts)")
        #expect(seen["the new guardian rang"], "\(seen.texts)")
        let offset = try #require(seen.numbers["from the deadline"])
        #expect(abs(offset) < 0.1, "rang \(offset) s from the deadline")
        #expect(seen["heard"])
        #expect(seen["the guardian ended"])
        #expect(seen.texts["outcome"] == "ring_limit", "\(seen.texts)")
    }

    /// The watcher's standard error is /dev/null: what keeps it from becoming the whole guardian
    /// is written to the guardian's events, never lost. Here the program it should become cannot
    /// be opened at the start (it then tries at once, as the whole guardian would wait itself)
    /// nor run: both are said, and it ends with 70.
    @Test func aWatcherThatCannotBecomeTheGuardianSaysWhyInTheGuardiansEvents() async throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-watcher")
        let lock = folder.path("guardian.lock"), log = folder.path("guardian.jsonl")
        let missing = folder.path("no-such-snoozefuse")
        let pipe = try #require(makePipe())
        let pid = try ProcessSpawn.start(BuiltProducts.executable("snoozefuse-guardian").path,
                                         [lock, log, "--", missing, "guardian", "--nap", "1"],
                                         descriptors: [0: .devNull, 1: .devNull, 2: .devNull, 3: .inherit(pipe.read)], grouping: .ownSession)
        close(pipe.read)
        close(pipe.write)
        let status = try await onOwnThread { ProcessSpawn.wait(for: pid, atMost: .seconds(20)) }
        #expect(status.map(ProcessSpawn.describe) == "exited with status 70", "\(status.map(ProcessSpawn.describe) ?? "still running")")
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        let messages = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["message"] as? String
        }
        #expect(messages.count == 2, "\(lines)")
        #expect(messages.first?.contains("cannot open \(missing) (No such file or directory): the whole guardian waits instead") == true, "\(messages)")
        #expect(messages.last?.contains("cannot run \(missing) to take the nap over (No such file or directory): nothing rings its alarm") == true,
                "\(messages)")
        // Each line is a guardian event as the others are.
        #expect(lines.allSatisfy { $0.contains(#""event":"warning""#) && $0.contains(#""output":"guardian""#) }, "\(lines)")
    }

    @Test func aNapWhoseGuardianIsGoneTooIsInterruptedAndResumeRingsItOnTime() async throws {
        let seen = try await script { home, seen in
            let capture = home.folder.path("alarm.wav")
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "5", "--max", "60", "--fade-in", "0",
                                       "--ring-limit", "1", "--device", "file:FILE=\(capture),FORMAT=wav", "--quiet"])
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil }
            guard let live = home.state(), let due = alarmDue(live), let guardian = (live["guardianPid"] as? NSNumber)?.int32Value else { return }
            // A stand-in for a reboot: the guardian first, then the nap. The nap is stopped first:
            // a running nap would replace its dead guardian at once.
            nap.signal(SIGSTOP)
            kill(guardian, SIGKILL)
            nap.signal(SIGKILL)
            nap.wait()
            seen.steps["interrupted"] = waitFor { home.status() == "interrupted" }
            let resumed = try home.run(["resume", "--events", "jsonl"])
            seen.numbers["resume status"] = Double(resumed.status)
            let events = resumed.outputLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            if let alarm = events.first(where: { $0["event"] as? String == "alarm" }) {
                seen.numbers["from the deadline"] = (wallTime(alarm)?.timeIntervalSince1970 ?? 0) - due
            }
            seen.texts["outcome"] = events.last?["outcome"] as? String
            // The alarm is nearer than the wake alarm's 5 s head start: the machine wakes with it,
            // not at once for nothing, and the record says so (it said "5s before", and fired at once).
            if let wake = events.first(where: { $0["event"] as? String == "wake_alarm" }) {
                seen.numbers["wake alarm fires in"] = (wake["until"] as? NSNumber)?.doubleValue
                seen.texts["wake alarm"] = wake["message"] as? String
            }
            seen.numbers["rms"] = try recordedRMS(capture)
            seen.texts["status after"] = home.status()
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen["interrupted"])
        #expect(seen.numbers["resume status"] == 0, "\(seen.texts)")
        let offset = try #require(seen.numbers["from the deadline"], "\(seen.texts)")
        #expect(abs(offset) < 0.1, "rang \(offset) s from the deadline")
        #expect(seen.texts["outcome"] == "ring_limit")
        #expect(seen.numbers["wake alarm fires in"] ?? 0 > 0.1, "\(seen.texts)")
        #expect(seen.texts["wake alarm"]?.contains("with the alarm (it was less than 5s away when armed)") == true, "\(seen.texts)")
        #expect(seen.numbers["rms"] ?? 0 > 0.05)
        #expect(seen.texts["status after"] == "none")
    }

    @Test func anAlarmPastMaxLateIsReportedAndRecordedNotRung() async throws {
        let seen = try await script { home, seen in
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "60", "--device", "null", "--quiet"])
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil }
            guard let guardian = (home.state()?["guardianPid"] as? NSNumber)?.int32Value else { return }
            // The nap stopped first: between the two kills it would start a new guardian (a CI
            // run saw that one take the alarm over and ring it).
            nap.signal(SIGSTOP)
            kill(guardian, SIGKILL)
            nap.signal(SIGKILL)
            nap.wait()
            // Late by more than a second, then resumed with --max-late 1s.
            usleep(2_500_000)
            let resumed = try home.run(["resume", "--max-late", "1s", "--events", "jsonl"])
            seen.numbers["resume status"] = Double(resumed.status)
            seen.texts["resume messages"] = resumed.standardError
            seen.steps["rang"] = resumed.standardOutput.contains("\"alarm\"")
            seen.steps["recorded"] = home.lines(home.guardianLog).contains { $0["event"] as? String == "missed" }
            seen.texts["status after"] = home.status()
            let again = try home.run(["resume", "--if-interrupted"])
            seen.steps["quiet when nothing is left"] = again.status == 0 && again.standardError.isEmpty
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen.numbers["resume status"] == 0, "\(seen.texts)")
        #expect(seen.texts["resume messages"]?.contains("missed: the alarm was due at") == true, "\(seen.texts)")
        #expect(!seen["rang"], "not rung")
        #expect(seen["recorded"])
        #expect(seen.texts["status after"] == "none")
        #expect(seen["quiet when nothing is left"])
    }

    @Test("a closed terminal (tmux kill-session: SIGHUP) is not a cancel: the alarm still sounds at its deadline",
          arguments: ["releasing", "napping"])
    func aHangUpIsNotACancel(phase: String) async throws {
        let seen = try await script { home, seen in
            let capture = home.folder.path("alarm.wav")
            let events = home.folder.path("events.jsonl")
            let socket = "tmux-\(UUID().uuidString.prefix(8))"
            let variables = ["XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"].map { "\($0)=\(home.environment[$0]!)" }
            let command = (["env"] + variables + [BuiltProducts.executable("snoozefuse").path, "nap", "--no-hold", "--release", "3",
                            "--nap", "4", "--max", "60", "--fade-in", "0", "--device", "file:FILE=\(capture),FORMAT=wav",
                            "--events", "jsonl", "--dismiss", "key"]).joined(separator: " ") + " > \(events)"
            try runTool("tmux", ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "nap", "-x", "80", "-y", "24", command])
            defer { _ = try? runTool("tmux", ["-L", socket, "kill-server"]) }
            seen.steps["in phase"] = waitFor { home.state()?["phase"] as? String == phase }
            guard let due = alarmDue(home.state()), let pid = (home.state()?["pid"] as? NSNumber)?.int32Value else { return }
            try runTool("tmux", ["-L", socket, "kill-session", "-t", "nap"])
            // The nap goes on without its terminal, says so, and rings at its deadline on its device.
            seen.steps["rang"] = waitFor { home.lines(events).contains { $0["event"] as? String == "alarm" } }
            let lines = home.lines(events)
            seen.steps["detached"] = lines.contains { $0["event"] as? String == "detached" }
            if let alarm = lines.first(where: { $0["event"] as? String == "alarm" }) {
                seen.numbers["from the deadline"] = (wallTime(alarm)?.timeIntervalSince1970 ?? 0) - due
            }
            seen.steps["heard"] = waitFor { (try? recordedRMS(capture)) ?? 0 > 0.05 }
            seen.steps["still running"] = isRunning(pid)
            seen.numbers["stop status"] = Double(try home.run(["stop"]).status)
            seen.steps["ended"] = waitFor { !isRunning(pid) }
            seen.texts["outcome"] = home.lines(events).last?["outcome"] as? String
        }
        #expect(seen["in phase"], "\(seen.texts)")
        #expect(seen["rang"], "\(seen.texts)")
        #expect(seen["detached"], "\(seen.texts)")
        let offset = try #require(seen.numbers["from the deadline"])
        #expect(abs(offset) < 0.1, "rang \(offset) s from the deadline")
        #expect(seen["heard"])
        #expect(seen["still running"])
        #expect(seen.numbers["stop status"] == 0)
        #expect(seen["ended"])
        #expect(seen.texts["outcome"] == "dismissed")
    }

    @Test func aSecondNapIsRefusedWith75AndTheFirstGoesOn() async throws {
        let seen = try await script { home, seen in
            let first = try home.launch(["nap", "--no-hold", "--release", "1", "--nap", "60", "--max", "90", "--device", "null", "--quiet"])
            seen.steps["releasing"] = waitFor { home.state()?["phase"] as? String == "releasing" }
            let second = try home.run(["nap", "--no-hold", "--device", "null", "--quiet"])
            seen.numbers["second status"] = Double(second.status)
            seen.texts["second messages"] = second.standardError
            seen.texts["alarm at"] = alarmDue(home.state()).map { String(WakeAtTimeCommandTests.clockText($0).prefix(5)) }
            seen.texts["first pid"] = "\(first.pid)"
            seen.steps["first runs"] = first.isRunning
            seen.steps["first goes on"] = waitFor { home.state()?["phase"] as? String == "napping" }
            _ = try home.run(["stop", "--yes"])
            seen.numbers["first status"] = Double(first.wait())
        }
        #expect(seen["releasing"], "\(seen.texts)")
        #expect(seen.numbers["second status"] == 75)
        #expect(seen.texts["second messages"]?.contains("another nap is running (pid \(seen.texts["first pid"] ?? "?")") == true, "\(seen.texts)")
        // Its alarm on the local clock, as `status` says it, not in UTC.
        let at = try #require(seen.texts["alarm at"])
        #expect(seen.texts["second messages"]?.contains("releasing, alarm at ") == true, "\(seen.texts)")
        #expect(seen.texts["second messages"]?.contains("\(at)): `snoozefuse status` shows it") == true, "\(seen.texts)")
        #expect(seen["first runs"])
        #expect(seen["first goes on"], "the first one goes on")
        #expect(seen.numbers["first status"] == 1, "cancelled by stop")
    }

    @Test func anotherTerminalSnoozesMovesAndStopsTheNapAndAnotherUserIsRefused() async throws {
        let seen = try await script { home, seen in
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "2", "--max", "90", "--snooze", "20",
                                       "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            let events = home.folder.path("events.jsonl")
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" }
            // Another user cannot reach it, even where the files would let them.
            let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", "env"]
                + ["XDG_STATE_HOME", "XDG_RUNTIME_DIR"].map { "\($0)=\(home.environment[$0]!)" } + [BuiltProducts.executable("snoozefuse").path, "stop"]
            let denied = try runMergingOutput(executableInPath("setpriv").path, nobody)
            seen.numbers["denied status"] = Double(denied.status)
            chmod(home.folder.url.path, 0o755)
            chmod(home.folder.path("snoozefuse"), 0o755)
            chmod(home.socket, 0o666)
            let refused = try runMergingOutput(executableInPath("setpriv").path, nobody)
            seen.numbers["refused status"] = Double(refused.status)
            seen.texts["refused"] = refused.output
            // The owner: move the alarm, then snooze it, then stop it.
            seen.numbers["add status"] = Double(try home.run(["add", "1m"]).status)
            seen.steps["adjusted"] = waitFor { home.lines(events).contains { $0["event"] as? String == "adjusted" } }
            seen.numbers["shorten status"] = Double(try home.run(["add", "--", "-2m"]).status)
            seen.steps["rang"] = waitFor { home.lines(events).contains { $0["event"] as? String == "alarm" } }
            seen.numbers["snooze status"] = Double(try home.run(["snooze", "20s"]).status)
            seen.steps["snoozed"] = waitFor { home.lines(events).contains { $0["phase"] as? String == "snoozed" } }
            seen.numbers["stop status"] = Double(try home.run(["stop"]).status)
            seen.numbers["nap status"] = Double(nap.wait())
            let kinds = home.lines(events).map { ($0["event"] as? String ?? "") + ":" + ($0["phase"] as? String ?? "") }
            seen.texts["kinds"] = kinds.joined(separator: " ")
            seen.texts["outcome"] = home.lines(events).last?["outcome"] as? String
            // Nobody listens any more.
            let late = try home.run(["stop"])
            seen.numbers["late status"] = Double(late.status)
            seen.texts["late"] = late.standardError
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen.numbers["denied status"] != 0)
        #expect(seen.numbers["refused status"] != 0)
        #expect(seen.texts["refused"]?.contains("refused: this nap belongs to another user") == true, "\(seen.texts)")
        #expect(seen.numbers["add status"] == 0)
        #expect(seen["adjusted"])
        #expect(seen.numbers["shorten status"] == 0)
        #expect(seen["rang"])
        #expect(seen.numbers["snooze status"] == 0)
        #expect(seen["snoozed"])
        #expect(seen.numbers["stop status"] == 0)
        #expect(seen.numbers["nap status"] == 0)
        let kinds = seen.texts["kinds"] ?? ""
        #expect(kinds.contains("adjusted:napping") && kinds.contains("phase:snoozed") && kinds.contains("end:finished"), "\(kinds)")
        #expect(seen.texts["outcome"] == "dismissed")
        #expect(seen.numbers["late status"] == 69 && seen.texts["late"]?.contains("no nap is running") == true, "\(seen.texts)")
    }

    @Test func statusNeverSeesAPartialStateAndFollowsInJSON() async throws {
        let seen = try await script { home, seen in
            let nap = try home.launch(["nap", "--no-hold", "--release", "1", "--nap", "2", "--max", "90", "--ring-limit", "2",
                                       "--device", "null", "--quiet"])
            let follower = try home.launch(["status", "--follow", "--format", "waybar"], events: "waybar.jsonl")
            defer { if follower.isRunning { follower.signal(SIGKILL) } }
            // A thousand reads of the live file while the nap goes through its phases: each a whole state.
            var phases: Set<String> = []
            var partial = 0
            for _ in 0 ..< 1_000 {
                if let data = FileManager.default.contents(atPath: home.sessionFile) {
                    if let state = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let phase = state["phase"] as? String,
                       state["updated"] != nil, state["setup"] != nil {
                        phases.insert(phase)
                    } else {
                        partial += 1
                    }
                }
                usleep(4_000)
            }
            nap.wait()
            seen.numbers["partial"] = Double(partial)
            seen.texts["phases"] = phases.sorted().joined(separator: " ")
            usleep(300_000)
            follower.signal(SIGTERM)
            follower.wait()
            seen.texts["waybar"] = try String(contentsOfFile: home.folder.path("waybar.jsonl"), encoding: .utf8)
        }
        #expect(seen.numbers["partial"] == 0)
        #expect((seen.texts["phases"] ?? "").split(separator: " ").count >= 2, "the reads saw the phases change: \(seen.texts)")
        let lines = (seen.texts["waybar"] ?? "").split(separator: "\n")
        #expect(lines.count >= 4, "\(lines)")
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["text"] != nil && object?["tooltip"] != nil && object?["class"] != nil && object?["percentage"] != nil, "\(line)")
        }
        #expect(lines.contains { $0.contains("\"class\":\"napping\"") } && lines.last?.contains("\"class\":\"none\"") == true, "\(lines)")
    }
}

import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// `snoozefuse nap --until`, as a person types it: the alarm rings at the time of day named,
/// `status` says that time, and a time that cannot be is refused before anything starts.
@Suite("nap --until: waking at a time of day (the built binary)", .serialized)
struct WakeAtTimeCommandTests {
    /// `seconds` since 1970 on this machine's clock, as `HH:MM:SS`.
    static func clockText(_ seconds: Double) -> String {
        var time = time_t(seconds)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    @Test func aNapUntilATimeRingsAtThatTimeAndStatusSaysIt() async throws {
        let seen = try await script { home, seen in
            // Nine whole seconds ahead: a release of 2 s and a nap of what is left.
            let target = (Date().timeIntervalSince1970 + 9).rounded(.down)
            seen.numbers["target"] = target
            let until = Self.clockText(target)
            let nap = try home.launch(["nap", "--until", until, "--release", "2s", "--no-hold", "--ring-limit", "1s", "--fade-in", "0",
                                       "--device", "null", "--events", "jsonl", "--dismiss", "key"])
            defer {
                if !waitFor(.seconds(30), { !nap.isRunning }) { _ = try? home.run(["stop", "--yes"]) }
                nap.wait()
            }
            seen.steps["napping"] = waitFor(.seconds(8)) { home.state()?["phase"] as? String == "napping" }
            let status = try home.run(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
            seen.texts["alarmAtLocal"] = object?["alarmAtLocal"] as? String
            seen.numbers["due"] = alarmDue(home.state())
            seen.texts["status"] = try home.run(["status"]).standardOutput
            seen.steps["ended"] = waitFor(.seconds(20)) { !nap.isRunning }
            let events = home.lines(home.folder.path("events.jsonl"))
            let alarm = events.first { $0["event"] as? String == "alarm" }
            seen.texts["reason"] = alarm?["reason"] as? String
            if let wall = alarm?["wall"] as? String, let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(wall) {
                seen.numbers["rang"] = date.timeIntervalSince1970
            }
            seen.texts["said"] = try String(contentsOfFile: home.folder.path("events.jsonl.err"), encoding: .utf8)
        }
        #expect(seen["napping"] && seen["ended"], "\(seen.texts)")
        let target = try #require(seen.numbers["target"])
        let minute = String(Self.clockText(target).prefix(5))
        // The saved alarm is the moment named, and status says its time of day.
        let due = try #require(seen.numbers["due"], "\(seen.texts)")
        #expect(abs(due - target) < 0.05, "due \(due), named \(target)")
        #expect(seen.texts["alarmAtLocal"] == minute)
        #expect(seen.texts["status"]?.contains("at \(minute)") == true, "\(seen.texts["status"] ?? "")")
        // It rang then (the alarm event is written as its first audio goes out).
        #expect(seen.texts["reason"] == "nap")
        let rang = try #require(seen.numbers["rang"], "\(seen.texts)")
        #expect(rang - target > -0.05 && rang - target < 0.5, "rang \(rang - target) s after the time named")
        // The opening line says when, not a nap's length.
        #expect(seen.texts["said"]?.contains("alarm at ") == true && seen.texts["said"]?.contains("\(minute) (in ") == true,
                "\(seen.texts["said"] ?? "")")
        #expect(seen.texts["said"]?.contains("however long the hold lasts") == false, "no hold here: \(seen.texts["said"] ?? "")")
    }

    /// `nap --until` in hold mode on a terminal (the pty driver of HoldModeTests) whose key is
    /// never held, `quick-test`'s ring limit of 1 s. Returns what the script saw. Once its guardian
    /// holds its lock, before the time named, `.kill` SIGKILLs the nap, and `.stop` SIGSTOPs it
    /// and keeps what `status` says every 100 ms until it rings.
    private enum Interruption { case none, kill, stop }

    private func napNeverHeld(_ interruption: Interruption) async throws -> Observed {
        try await script { home, seen in
            let pty = try PtyRun()
            defer { pty.cleanUp() }
            // Far enough ahead for a loaded machine to start the nap and its guardian first.
            let target = (Date().timeIntervalSince1970 + 15).rounded(.down)
            seen.numbers["target"] = target
            seen.texts["minute"] = String(Self.clockText(target).prefix(5))
            let driver = try BackgroundProcess(URL(fileURLWithPath: "/usr/bin/python3"), [
                pty.driver.path, pty.events.path, "wait:0.1", "--transcript=\(pty.transcript.path)", "--",
                snoozefuse.path, "nap", "--preset", "quick-test", "--ring-limit", "1", "--device", "null", "--events", "jsonl",
                "--fade-in", "0", "--until", Self.clockText(target),
            ], environment: home.environment, standardOutput: home.folder.path("driver.out"), standardError: home.folder.path("driver.err"))
            defer {
                if !waitFor(.seconds(30), { !driver.isRunning }) { _ = try? home.run(["stop", "--yes"]) }
                driver.wait()
            }
            seen.steps["ready, guarded"] = waitFor(.seconds(12)) {
                home.state()?["phase"] as? String == "ready" && (home.state()?["guardianPid"] as? NSNumber).map { isGuardianLock($0.int32Value, 4) } == true
            }
            seen.numbers["due"] = alarmDue(home.state())
            seen.texts["status"] = try home.run(["status"]).standardOutput
            let pid = (home.state()?["pid"] as? NSNumber)?.int32Value ?? 0
            switch interruption {
            case .none: break
            case .kill:
                kill(pid, SIGKILL)
                seen.steps["guarded"] = waitFor(.seconds(5)) { home.status() == "guarded" }
            case .stop:
                seen.texts["said while stopped"] = try home.stoppedThenLateThenWoken(nap: pid).joined(separator: "\n")
            }
            let log = interruption == .kill ? home.guardianLog : pty.events.path
            seen.steps["rang"] = waitFor(.seconds(20)) { home.lines(log).contains { $0["event"] as? String == "alarm" } }
            if let alarm = home.lines(log).first(where: { $0["event"] as? String == "alarm" }) {
                seen.texts["reason"] = alarm["reason"] as? String
                seen.numbers["rang"] = wallTime(alarm)?.timeIntervalSince1970
            }
            seen.steps["ended"] = waitFor(.seconds(20)) { home.lines(log).contains { $0["event"] as? String == "end" } }
            seen.texts["phases"] = home.lines(log).filter { $0["event"] as? String == "phase" }.compactMap { $0["phase"] as? String }.joined(separator: " ")
            seen.texts["driver"] = (try? String(contentsOfFile: home.folder.path("driver.err"), encoding: .utf8)) ?? ""
            seen.texts["terminal"] = String(decoding: (try? Data(contentsOf: pty.transcript)) ?? Data(), as: UTF8.self)
        }
    }

    /// A person who lies down without holding the key is woken at the time named all the same (a
    /// time named is an alarm from the start), and `status` says so while the nap waits.
    @Test func withNoHoldAtAllItRingsAtTheTimeNamed() async throws {
        let seen = try await napNeverHeld(.none)
        #expect(seen["ready, guarded"], "\(seen.texts)")
        let target = try #require(seen.numbers["target"])
        #expect(abs((seen.numbers["due"] ?? 0) - target) < 0.05, "the saved alarm is the time named: \(seen.texts)")
        let minute = seen.texts["minute"] ?? "?"
        // (After midnight the time has its date before it.)
        #expect(seen.texts["status"]?.hasPrefix("ready: waiting for the first hold; it rings at ") == true, "\(seen.texts["status"] ?? "")")
        #expect(seen.texts["status"]?.contains("\(minute) all the same") == true, "\(seen.texts["status"] ?? "")")
        #expect(seen.texts["terminal"]?.contains("alarm at ") == true && seen.texts["terminal"]?.contains("\(minute) (in ") == true,
                "\(seen.texts["terminal"] ?? "")")
        #expect(seen.texts["terminal"]?.contains("however long the hold lasts, held or not") == true, "\(seen.texts["terminal"] ?? "")")
        #expect(seen["rang"] && seen["ended"], "\(seen.texts)")
        #expect(seen.texts["phases"] == "ringing finished", "\(seen.texts)")
        #expect(seen.texts["reason"] == "nap")
        let rang = try #require(seen.numbers["rang"], "\(seen.texts)")
        #expect(rang - target > -0.05 && rang - target < 0.5, "rang \(rang - target) s after the time named")
    }

    /// The same nap killed before the time (SIGKILL): its guardian rings the time named.
    @Test func withNoHoldAtAllItsGuardianRingsTheTimeNamedWhenTheNapDies() async throws {
        let seen = try await napNeverHeld(.kill)
        #expect(seen["ready, guarded"], "\(seen.texts)")
        #expect(seen["guarded"], "\(seen.texts)")
        #expect(seen["rang"] && seen["ended"], "\(seen.texts)")
        #expect(seen.texts["reason"] == "nap", "\(seen.texts)")
        let target = try #require(seen.numbers["target"])
        let rang = try #require(seen.numbers["rang"], "\(seen.texts)")
        #expect(rang - target > -0.05 && rang - target < 0.5, "the guardian rang \(rang - target) s after the time named")
    }

    /// The same nap stopped (SIGSTOP) before the time: `status` says it is stopped, then late once
    /// the time has passed; its guardian wakes it and it rings, for the nap.
    @Test func withNoHoldAtAllAStoppedNapIsLateThenWokenAndRings() async throws {
        let seen = try await napNeverHeld(.stop)
        #expect(seen["ready, guarded"], "\(seen.texts)")
        let said = seen.texts["said while stopped"] ?? ""
        #expect(said.hasPrefix("stopped (Ctrl-Z or SIGSTOP)"), "\(said)")
        #expect(said.contains("late: the alarm was due"), "\(said)")
        #expect(seen["rang"] && seen["ended"], "\(seen.texts)")
        #expect(seen.texts["reason"] == "nap", "\(seen.texts)")
    }

    @Test("a time that cannot be is refused before anything starts (exit 64), saying why", arguments: [
        (["--until", "14"], "is a number, not a time of day"),
        (["--until", "25:00"], "is not a time on a clock"),
        (["--until", "14:30", "--nap", "5m"], "leave out --nap"),
        (["--until", "14:30", "--max", "1h"], "leave out --max"),
    ])
    func refused(_ arguments: [String], _ said: String) async throws {
        let (environment, folder) = try isolatingNapState(nil)
        defer { withExtendedLifetime(folder) {} }
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--device", "null"] + arguments, environment: environment)
        #expect(result.status == 64)
        #expect(result.standardError.contains(said), "\(result.standardError)")
    }

    @Test func aTimeWithinTheReleaseIsRefused() async throws {
        let (environment, folder) = try isolatingNapState(nil)
        defer { withExtendedLifetime(folder) {} }
        let until = Self.clockText((Date().timeIntervalSince1970 + 20).rounded(.down))
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "1m", "--device", "null", "--until", until],
                                          environment: environment)
        #expect(result.status == 64)
        #expect(result.standardError.contains("--until \(until) is "), "\(result.standardError)")
        #expect(result.standardError.contains("within the 1m release"), "\(result.standardError)")
        // The dry run says the same, and shows the time and the nap it makes otherwise.
        let later = Self.clockText((Date().timeIntervalSince1970 + 3_600).rounded(.down))
        let dry = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "1m", "--until", later, "--dry-run"], environment: environment)
        #expect(dry.status == 0, "\(dry.standardError)")
        let napLine = dry.standardOutput.split(separator: "\n").first { $0.hasPrefix("nap ") }
        #expect(napLine?.contains("--until \(later)") == true && (napLine?.contains("58m") == true || napLine?.contains("59m") == true), "\(dry.standardOutput)")
        #expect(dry.standardOutput.contains("until ") && dry.standardOutput.contains("the alarm rings then"))
    }
}

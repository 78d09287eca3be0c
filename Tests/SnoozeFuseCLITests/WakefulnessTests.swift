import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// The built binary with the buses a test chose: a private system bus (`DBUS_SYSTEM_BUS_ADDRESS`),
/// a private session bus (`DBUS_SESSION_BUS_ADDRESS`), or none (an address where no bus listens).
struct BusNap {
    let home: NapHome
    var environment: [String: String]

    init(_ home: NapHome, system: PrivateBus? = nil, session: PrivateBus? = nil) {
        self.home = home
        var environment = home.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = system?.address ?? "unix:path=\(home.folder.path("no-system-bus.sock"))"
        if let session {
            environment["DBUS_SESSION_BUS_ADDRESS"] = session.address
        } else {
            environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        }
        self.environment = environment
    }

    /// Starts `snoozefuse arguments…` (or `wrapper… snoozefuse arguments…`) in the background, its
    /// events into `events.jsonl` of the home folder.
    func launch(_ arguments: [String], under wrapper: [String] = []) throws -> BackgroundProcess {
        let binary = BuiltProducts.executable("snoozefuse")
        let (executable, all) = wrapper.isEmpty ? (binary, arguments)
            : (executableInPath(wrapper[0]), Array(wrapper.dropFirst()) + [binary.path] + arguments)
        return try BackgroundProcess(executable, all, environment: environment,
                                     standardOutput: home.folder.path("events.jsonl"), standardError: home.folder.path("events.jsonl.err"))
    }

    /// The events written so far.
    var events: [[String: Any]] { home.lines(home.folder.path("events.jsonl")) }

    func events(_ kind: String) -> [[String: Any]] { events.filter { $0["event"] as? String == kind } }

    /// What the nap wrote to standard error.
    var messages: String { (try? String(contentsOfFile: home.folder.path("events.jsonl.err"), encoding: .utf8)) ?? "" }
}

/// The login1 stand-in's `inhibit N …` line of call `number`, and the inode of the pipe it handed out.
func inhibitCall(_ bus: PrivateBus, _ number: Int) -> (line: String, pipe: String)? {
    guard let line = bus.log(of: .login1).first(where: { $0.hasPrefix("inhibit \(number) ") }),
          let pipe = line.split(separator: " ").first(where: { $0.hasPrefix("pipe=") }) else { return nil }
    return (line, String(pipe.dropFirst(5)))
}

/// Whether the stand-in saw the descriptor of call `number` closed (every copy of it).
func released(_ bus: PrivateBus, _ number: Int) -> Bool {
    bus.log(of: .login1).contains("released \(number)")
}

/// Whether process `pid` holds the pipe with inode `inode` (from `/proc/PID/fd`).
func holdsPipe(_ pid: Int32, inode: String) -> Bool {
    !descriptors(of: pid, pipe: inode).isEmpty
}

/// The descriptors of process `pid` that are the pipe with inode `inode`, each with whether it is
/// close-on-exec (O_CLOEXEC, 02000000, in the `flags` of `/proc/PID/fdinfo`).
func descriptors(of pid: Int32, pipe inode: String) -> [(fd: String, closeOnExec: Bool)] {
    let folder = "/proc/\(pid)/fd"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")) == "pipe:[\(inode)]" }.map { fd in
        let info = (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)) ?? ""
        let flags = info.split(separator: "\n").first { $0.hasPrefix("flags:") }
            .flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0
        return (fd, flags & 0o2000000 != 0)
    }
}

/// The notification stand-in's calls, as JSON objects.
func notificationCalls(_ bus: PrivateBus, _ standIn: PrivateBus.StandIn = .notifications) -> [[String: Any]] {
    bus.log(of: standIn).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}

/// CLOCK_BOOTTIME now, in seconds.
func bootSecondsNow() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_BOOTTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The CLOCK_BOOTTIME_ALARM timerfds of process `pid` (`clockid: 9` in `/proc/PID/fdinfo`), each
/// with the instant it fires: CLOCK_BOOTTIME now plus the `it_value` the kernel shows (time left).
func wakeAlarmTimers(of pid: Int32) -> [(fd: String, firesAt: Double)] {
    let folder = "/proc/\(pid)/fdinfo"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return entries.compactMap { fd -> (String, Double)? in
        guard let info = try? String(contentsOfFile: "\(folder)/\(fd)", encoding: .utf8) else { return nil }
        let now = bootSecondsNow()
        let lines = info.split(separator: "\n")
        guard lines.contains(where: { $0.replacingOccurrences(of: " ", with: "") == "clockid:9" }),
              let value = lines.first(where: { $0.hasPrefix("it_value:") }) else { return nil }
        // it_value: (SECONDS, NANOSECONDS)
        let numbers = value.split(whereSeparator: { !$0.isNumber }).compactMap { Double($0) }
        guard numbers.count == 2 else { return nil }
        return (fd, now + numbers[0] + numbers[1] / 1e9)
    }
}

/// Whether this process has CAP_WAKE_ALARM (bit 35 of CapEff in `/proc/self/status`).
func hasWakeAlarmCapability() -> Bool {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
          let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
    return mask & (1 << 35) != 0
}

@Suite("Keep-awake (a logind inhibitor on a private system bus), the wake alarm and the desktop notification", .serialized)
struct WakefulnessTests {
    // MARK: Keep-awake

    @Test func theNapTakesASleepIdleBlockInhibitorAndItsDescriptorIsClosedWhenTheNapEnds() async throws {
        let seen = try await script { home, seen in
            let system = try PrivateBus()
            try system.publish(.login1)
            let run = BusNap(home, system: system)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "2", "--max", "1m", "--ring-limit", "1",
                                      "--device", "null", "--events", "jsonl", "--quiet"])
            seen.steps["inhibited"] = waitFor(.seconds(20)) { inhibitCall(system, 1) != nil && home.state()?["guardianPid"] != nil }
            guard let (line, pipe) = inhibitCall(system, 1),
                  let guardian = (home.state()?["guardianPid"] as? NSNumber)?.int32Value else { return }
            seen.texts["call"] = line
            // The stand-in logs the call as it answers; the descriptor reaches the nap a moment later.
            _ = waitFor(.seconds(5)) { !descriptors(of: nap.pid, pipe: pipe).isEmpty }
            let held = descriptors(of: nap.pid, pipe: pipe)
            seen.numbers["copies held"] = Double(held.count)
            seen.steps["close-on-exec"] = !held.isEmpty && held.allSatisfy(\.closeOnExec)
            seen.steps["its guardian does not"] = !holdsPipe(guardian, inode: pipe)
            seen.steps["held while napping"] = !released(system, 1)
            seen.numbers["status"] = Double(nap.wait())
            seen.steps["released"] = waitFor(.seconds(5)) { released(system, 1) }
            seen.texts["outcome"] = run.events("end").first?["outcome"] as? String
            seen.numbers["calls"] = Double(system.log(of: .login1).filter { $0.hasPrefix("inhibit ") }.count)
            seen.numbers["warnings"] = Double(run.events("warning").count)
            seen.texts["stand-in"] = system.diagnosis
        }
        #expect(seen["inhibited"], "\(seen.texts)")
        let call = try #require(seen.texts["call"])
        #expect(call.contains(" what=sleep:idle who=snoozefuse why=nap mode=block "), "\(call)")
        #expect(seen.numbers["copies held"] == 1, "the nap holds the descriptor once: \(seen.numbers)")
        #expect(seen["close-on-exec"], "a program the nap starts must never inherit the inhibitor")
        #expect(seen["its guardian does not"], "the inhibitor's descriptor leaked into the guardian (not close-on-exec)")
        #expect(seen["held while napping"])
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "ring_limit")
        #expect(seen["released"], "\(seen.texts)")
        #expect(seen.numbers["calls"] == 1)
        #expect(seen.numbers["warnings"] == 0, "\(seen.texts)")
    }

    @Test(arguments: ["SIGTERM", "snoozefuse stop"])
    func aCancelledNapReleasesTheInhibitor(_ cancel: String) async throws {
        let seen = try await script { home, seen in
            let system = try PrivateBus()
            try system.publish(.login1)
            let nap = try BusNap(home, system: system).launch(["nap", "--no-hold", "--release", "0", "--nap", "30", "--max", "1m",
                                                                "--device", "null", "--events", "jsonl", "--quiet"])
            seen.steps["inhibited"] = waitFor(.seconds(20)) { inhibitCall(system, 1) != nil && home.state()?["phase"] as? String == "napping" }
            seen.steps["held"] = !released(system, 1)
            if cancel == "SIGTERM" {
                nap.signal(SIGTERM)
            } else {
                seen.numbers["stop"] = Double(try home.run(["stop", "--yes"]).status)
            }
            seen.numbers["status"] = Double(nap.wait())
            seen.steps["released"] = waitFor(.seconds(5)) { released(system, 1) }
        }
        #expect(seen["inhibited"], "\(seen.texts)")
        #expect(seen["held"])
        #expect(seen.numbers["stop"] ?? 0 == 0)
        #expect(seen.numbers["status"] == 1, "cancelled: \(seen.texts)")
        #expect(seen["released"], "\(seen.texts)")
    }

    @Test func aKilledNapsInhibitorIsClosedByTheKernelAndTheGuardianTakesItsOwn() async throws {
        let seen = try await script { home, seen in
            let system = try PrivateBus()
            try system.publish(.login1)
            let nap = try BusNap(home, system: system).launch(["nap", "--no-hold", "--release", "0", "--nap", "3", "--max", "1m",
                                                                "--ring-limit", "2", "--device", "null", "--quiet"])
            seen.steps["inhibited"] = waitFor(.seconds(20)) {
                inhibitCall(system, 1) != nil && home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil
            }
            guard let guardian = (home.state()?["guardianPid"] as? NSNumber)?.int32Value else { return }
            nap.signal(SIGKILL)
            nap.wait()
            seen.steps["released by the kernel"] = waitFor(.seconds(5)) { released(system, 1) }
            // The guardian holds the alarm now, and keeps the machine awake with an inhibitor of its own.
            seen.steps["the guardian's"] = waitFor(.seconds(20)) { inhibitCall(system, 2) != nil }
            if let (line, pipe) = inhibitCall(system, 2) {
                seen.texts["guardian's call"] = line
                // The stand-in logs the call as it answers; the descriptor reaches the guardian a
                // moment later.
                seen.steps["held by the guardian"] = waitFor(.seconds(5)) { holdsPipe(guardian, inode: pipe) }
            }
            seen.steps["guardian rang"] = waitFor(.seconds(20)) { home.lines(home.guardianLog).contains { $0["event"] as? String == "end" } }
            seen.steps["guardian ended"] = waitFor(.seconds(10)) { !isRunning(guardian) }
            seen.steps["the guardian's released"] = waitFor(.seconds(5)) { released(system, 2) }
        }
        #expect(seen["inhibited"], "\(seen.texts)")
        #expect(seen["released by the kernel"], "\(seen.texts)")
        #expect(seen["the guardian's"], "\(seen.texts)")
        #expect(seen.texts["guardian's call"]?.contains(" what=sleep:idle who=snoozefuse why=nap mode=block ") == true, "\(seen.texts)")
        #expect(seen["held by the guardian"])
        #expect(seen["guardian rang"], "\(seen.texts)")
        #expect(seen["guardian ended"])
        #expect(seen["the guardian's released"])
    }

    @Test(arguments: ["ring limit", "dismissed"])
    func withoutASystemBusTheNapSaysSoOnceAndWorks(_ ending: String) async throws {
        let seen = try await script { home, seen in
            var run = BusNap(home)
            // ALSA's `null` alone: Debian's configuration asks PulseAudio whether it runs (its
            // `pulse` hook), and libpulse brings libsystemd in with it.
            let alsa = home.folder.path("alsa.conf")
            try "pcm.null { type null }\n".write(toFile: alsa, atomically: true, encoding: .utf8)
            run.environment["ALSA_CONFIG_PATH"] = alsa
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m",
                                      "--ring-limit", ending == "ring limit" ? "1" : "30", "--device", "null", "--events", "jsonl", "--dismiss", "key"])
            if ending == "dismissed" {
                seen.steps["ringing"] = waitFor(.seconds(20)) { !run.events("alarm").isEmpty }
                // No bus at either address: sd-bus was never loaded, for the alarm's notification
                // neither (a failed connect alone faulted in 0.6 MiB of libsystemd).
                let maps = wholeProcFile("/proc/\(nap.pid)/maps")
                seen.texts["libsystemd mapped"] = maps.split(separator: "\n").first { $0.contains("libsystemd") }.map(String.init)
                seen.steps["maps read"] = maps.contains("[stack]")
                seen.numbers["stop"] = Double(try home.run(["stop"]).status)
            }
            seen.numbers["status"] = Double(nap.wait())
            seen.texts["outcome"] = run.events("end").first?["outcome"] as? String
            let warnings = run.events("warning").compactMap { $0["message"] as? String }
            seen.numbers["keep-awake warnings"] = Double(warnings.filter { $0.contains("nothing keeps this machine awake") }.count)
            // Run without CAP_WAKE_ALARM, a nap says that too; nothing else.
            seen.numbers["other warnings"] = Double(warnings.filter { !$0.contains("nothing keeps this machine awake") && !$0.contains("CAP_WAKE_ALARM") }.count)
            seen.texts["warning"] = warnings.first { $0.contains("nothing keeps this machine awake") }
            seen.numbers["said on the terminal"] = Double(run.messages.components(separatedBy: "nothing keeps this machine awake").count - 1)
        }
        if ending == "dismissed" {
            #expect(seen["ringing"], "\(seen.texts)")
            #expect(seen["maps read"])
            #expect(seen.texts["libsystemd mapped"] == nil, "no bus, no sd-bus")
            #expect(seen.numbers["stop"] == 0)
        }
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == (ending == "ring limit" ? "ring_limit" : "dismissed"))
        #expect(seen.numbers["keep-awake warnings"] == 1, "\(seen.texts)")
        #expect(seen.numbers["other warnings"] == 0, "\(seen.texts)")
        #expect(seen.numbers["said on the terminal"] == 1)
        let warning = try #require(seen.texts["warning"])
        #expect(warning.contains("system bus"), "\(warning)")
        #expect(warning.contains("DBUS_SYSTEM_BUS_ADDRESS"), "says where it looked and the fix: \(warning)")
    }

    // MARK: The wake alarm

    @Test func theWakeAlarmIsArmedForTheAlarmLessItsHeadStartAndMovesWithAdd() async throws {
        try #require(hasWakeAlarmCapability(), "this test needs CAP_WAKE_ALARM: run the tests as root")
        let seen = try await script { home, seen in
            let run = BusNap(home)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "30", "--max", "5m",
                                      "--device", "null", "--events", "jsonl", "--quiet"])
            seen.steps["armed"] = waitFor(.seconds(20)) { !run.events("wake_alarm").isEmpty && home.state()?["phase"] as? String == "napping" }
            guard let armed = run.events("wake_alarm").last, let napping = run.events("phase").last(where: { $0["phase"] as? String == "napping" }),
                  let due = ((home.state()?["alarm"] as? [String: Any])?["due"] as? [String: Any])?["bootSeconds"] as? Double else { return }
            let timers = wakeAlarmTimers(of: nap.pid)
            seen.numbers["timers"] = Double(timers.count)
            seen.numbers["kernel - (due - 5)"] = (timers.first?.firesAt ?? 0) - (due - 5)
            seen.numbers["event - kernel"] = (armed["boottime"] as? Double ?? 0) - (timers.first?.firesAt ?? 0)
            seen.numbers["until - (alarm - 5)"] = (armed["until"] as? Double ?? 0) - ((napping["until"] as? Double ?? 0) - 5)
            seen.texts["message"] = armed["message"] as? String
            // `add 1m` moves the alarm, and the wake alarm with it.
            let before = run.events("wake_alarm").count
            seen.numbers["add"] = Double(try home.run(["add", "1m"]).status)
            seen.steps["moved"] = waitFor(.seconds(10)) { run.events("wake_alarm").count > before }
            let moved = run.events("wake_alarm").last
            let timersAfter = wakeAlarmTimers(of: nap.pid)
            seen.numbers["timers after"] = Double(timersAfter.count)
            seen.numbers["kernel moved by"] = (timersAfter.first?.firesAt ?? 0) - (timers.first?.firesAt ?? 0)
            seen.numbers["event moved by"] = (moved?["boottime"] as? Double ?? 0) - (armed["boottime"] as? Double ?? 0)
            seen.numbers["until moved by"] = (moved?["until"] as? Double ?? 0) - (armed["until"] as? Double ?? 0)
            seen.numbers["stop"] = Double(try home.run(["stop", "--yes"]).status)
            seen.numbers["status"] = Double(nap.wait())
        }
        #expect(seen["armed"], "\(seen.texts)")
        #expect(seen.numbers["timers"] == 1, "one CLOCK_BOOTTIME_ALARM timerfd in /proc/PID/fdinfo: \(seen.texts)")
        #expect(abs(seen.numbers["kernel - (due - 5)"] ?? 99) < 0.1, "\(seen.numbers)")
        #expect(abs(seen.numbers["event - kernel"] ?? 99) < 0.1, "\(seen.numbers)")
        #expect(abs(seen.numbers["until - (alarm - 5)"] ?? 99) < 0.05, "\(seen.numbers)")
        #expect(seen.texts["message"]?.contains("CLOCK_BOOTTIME_ALARM") == true)
        if !FileManager.default.fileExists(atPath: "/sys/class/rtc/rtc0") {
            #expect(seen.texts["message"]?.contains("no real-time clock") == true, "\(seen.texts)")
        }
        #expect(seen.numbers["add"] == 0)
        #expect(seen["moved"], "\(seen.texts)")
        #expect(seen.numbers["timers after"] == 1)
        #expect(abs((seen.numbers["kernel moved by"] ?? 0) - 60) < 0.1, "\(seen.numbers)")
        #expect(abs((seen.numbers["event moved by"] ?? 0) - 60) < 0.05, "\(seen.numbers)")
        #expect(abs((seen.numbers["until moved by"] ?? 0) - 60) < 0.05, "\(seen.numbers)")
        #expect(seen.numbers["stop"] == 0)
        #expect(seen.numbers["status"] == 1, "stop cancels a nap that has not rung")
    }

    @Test func withoutCapWakeAlarmTheNapSaysWhatIsMissingAndStillKeepsTheMachineAwake() async throws {
        let seen = try await script { home, seen in
            let system = try PrivateBus()
            try system.publish(.login1)
            let run = BusNap(home, system: system)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--ring-limit", "1",
                                      "--device", "null", "--events", "jsonl", "--quiet"],
                                     under: ["setpriv", "--inh-caps=-wake_alarm", "--bounding-set=-wake_alarm", "--"])
            seen.numbers["status"] = Double(nap.wait())
            seen.texts["outcome"] = run.events("end").first?["outcome"] as? String
            let warnings = run.events("warning").compactMap { $0["message"] as? String }
            seen.numbers["warnings"] = Double(warnings.count)
            seen.texts["warning"] = warnings.first
            seen.numbers["armed"] = Double(run.events("wake_alarm").count)
            seen.steps["inhibited"] = inhibitCall(system, 1) != nil
            seen.steps["released"] = waitFor(.seconds(5)) { released(system, 1) }
            seen.texts["messages"] = run.messages
        }
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "ring_limit")
        #expect(seen.numbers["warnings"] == 1, "\(seen.texts)")
        let warning = try #require(seen.texts["warning"])
        #expect(warning.contains("CAP_WAKE_ALARM"), "\(warning)")
        #expect(warning.contains("a suspend will delay the alarm until the machine resumes"), "\(warning)")
        #expect(warning.contains("run as root or on a local session with systemd 254"), "\(warning)")
        if !FileManager.default.fileExists(atPath: "/sys/class/rtc/rtc0") {
            #expect(warning.contains("no real-time clock"), "\(warning)")
        }
        #expect(seen.numbers["armed"] == 0)
        #expect(seen["inhibited"], "the inhibitor is kept: \(seen.texts)")
        #expect(seen["released"])
    }

    // MARK: The desktop notification

    /// One notification, never stacked (issue 39): critical while it rings, with its actions;
    /// replaced by one that says it is snoozed, replaced again as it rings again, closed at the end.
    @Test func aCriticalNotificationIsShownWhileTheAlarmRingsReplacedOnSnoozeAndAgainAndClosedOnDismiss() async throws {
        let seen = try await script { home, seen in
            let session = try PrivateBus()
            try session.publish(.notifications)
            let run = BusNap(home, session: session)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--snooze", "2",
                                      "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            seen.steps["notified"] = waitFor(.seconds(20)) { notificationCalls(session).count == 1 }
            seen.texts["first"] = notificationCalls(session).first.map { "\($0)" }
            if let first = notificationCalls(session).first {
                seen.texts["app"] = first["app_name"] as? String
                seen.numbers["urgency"] = first["urgency"] as? Double
                seen.texts["urgency type"] = first["urgency_type"] as? String
                seen.numbers["expire"] = first["expire_timeout"] as? Double
                seen.numbers["replaces"] = first["replaces_id"] as? Double
            }
            seen.numbers["snooze"] = Double(try home.run(["snooze"]).status)
            seen.steps["replaced on snooze"] = waitFor(.seconds(10)) { notificationCalls(session).count == 2 }
            seen.steps["shown again"] = waitFor(.seconds(20)) { notificationCalls(session).count == 3 }
            seen.numbers["stop"] = Double(try home.run(["stop"]).status)
            seen.numbers["status"] = Double(nap.wait())
            seen.steps["closed on dismiss"] = waitFor(.seconds(5)) { notificationCalls(session).count == 4 }
            let calls = notificationCalls(session)
            seen.texts["calls"] = calls.map { "\($0["call"] ?? "?") \($0["id"] ?? "?")" }.joined(separator: ", ")
            seen.texts["replaces"] = calls.map { "\($0["replaces_id"] ?? "-")" }.joined(separator: ", ")
            seen.texts["summaries"] = calls.map { "\($0["summary"] ?? "-")" }.joined(separator: ", ")
            seen.texts["actions"] = (calls.first?["actions"] as? [String])?.joined(separator: ", ")
            seen.texts["snoozed actions"] = (calls.dropFirst().first?["actions"] as? [String])?.joined(separator: ", ")
            seen.texts["outcome"] = run.events("end").first?["outcome"] as? String
            seen.numbers["notification warnings"] = Double(run.events("warning").filter { ($0["message"] as? String)?.contains("notification") == true }.count)
        }
        #expect(seen["notified"], "\(seen.texts)")
        #expect(seen.texts["app"] == "snoozefuse")
        #expect(seen.numbers["urgency"] == 2, "critical: \(seen.texts)")
        #expect(seen.texts["urgency type"] == "Byte", "the urgency hint is a byte: \(seen.texts)")
        #expect(seen.numbers["expire"] == 0)
        #expect(seen.numbers["replaces"] == 0)
        #expect(seen.numbers["snooze"] == 0)
        #expect(seen["replaced on snooze"], "\(seen.texts)")
        #expect(seen["shown again"], "\(seen.texts)")
        #expect(seen.numbers["stop"] == 0)
        #expect(seen.numbers["status"] == 0)
        #expect(seen["closed on dismiss"], "\(seen.texts)")
        #expect(seen.texts["calls"] == "Notify 1, Notify 1, Notify 1, CloseNotification 1", "\(seen.texts)")
        #expect(seen.texts["replaces"] == "0, 1, 1, -", "\(seen.texts)")
        #expect(seen.texts["summaries"] == "Time to wake up, Snoozed, Time to wake up, -", "\(seen.texts)")
        // --dismiss key: snooze (also a click) and stop; snoozed, stop alone.
        #expect(seen.texts["actions"] == "default, Snooze 2s, snooze, Snooze 2s, stop, Stop", "\(seen.texts)")
        #expect(seen.texts["snoozed actions"] == "stop, Stop", "\(seen.texts)")
        #expect(seen.texts["outcome"] == "dismissed")
        #expect(seen.numbers["notification warnings"] == 0)
    }

    /// The notification's actions (issue 39): `snooze` snoozes, `stop` stops a `--dismiss key`
    /// alarm; with a word to type, `Stop` is not offered and a `stop` from the server does nothing.
    @Test(arguments: ["key", "word"])
    func theNotificationsActionsSnoozeAndStopAsTheDismissalAllows(_ dismissal: String) async throws {
        let seen = try await script { home, seen in
            let session = try PrivateBus()
            try session.publish(.notifications)
            let run = BusNap(home, session: session)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--snooze", "2", "--ring-limit", "12",
                                      "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", dismissal])
            defer {
                if !waitFor(.seconds(30), { !nap.isRunning }) { nap.signal(SIGTERM) }
                _ = nap.wait()
            }
            seen.steps["notified"] = waitFor(.seconds(20)) { notificationCalls(session).count == 1 }
            seen.texts["actions"] = (notificationCalls(session).first?["actions"] as? [String])?.joined(separator: ", ")
            seen.texts["body"] = notificationCalls(session).first?["body"] as? String
            // Listening starts right after the first Notify's answer.
            usleep(500_000)
            try session.invoke(.notifications, id: 1, action: "snooze")
            seen.steps["snoozed"] = waitFor(.seconds(5)) { home.state()?["phase"] as? String == "snoozed" }
            seen.steps["rang again"] = waitFor(.seconds(10)) { run.events("alarm").count == 2 }
            try session.invoke(.notifications, id: 1, action: "stop")
            seen.steps["stopped"] = waitFor(.seconds(5)) { !nap.isRunning }
            seen.texts["outcome"] = run.events("end").first?["outcome"] as? String
            seen.texts["phase"] = home.state()?["phase"] as? String
        }
        #expect(seen["notified"] && seen["snoozed"] && seen["rang again"], "\(seen.texts)")
        if dismissal == "key" {
            #expect(seen.texts["actions"] == "default, Snooze 2s, snooze, Snooze 2s, stop, Stop", "\(seen.texts)")
            #expect(seen["stopped"] && seen.texts["outcome"] == "dismissed", "\(seen.texts)")
        } else {
            #expect(seen.texts["actions"] == "default, Snooze 2s, snooze, Snooze 2s", "\(seen.texts)")
            #expect(seen.texts["body"]?.contains("type the word it shows in the nap's terminal, or run `snoozefuse stop`") == true, "\(seen.texts)")
            #expect(!seen["stopped"] && seen.texts["phase"] == "ringing", "a word alarm is not stopped by a click: \(seen.texts)")
        }
    }

    @Test func aHangingNotificationServerDelaysNothingAndIsReportedOnce() async throws {
        let seen = try await script { home, seen in
            let session = try PrivateBus()
            try session.publish(.hangingNotifications)
            let run = BusNap(home, session: session)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--ring-limit", "5",
                                      "--device", "null", "--events", "jsonl", "--quiet"])
            seen.steps["asked"] = waitFor(.seconds(20)) { notificationCalls(session, .hangingNotifications).count == 1 }
            let ended = nap.wait()
            seen.numbers["status"] = Double(ended)
            let alarm = run.events("alarm").first
            seen.numbers["lateness ms"] = alarm?["lateness_ms"] as? Double ?? 1000
            let end = run.events("end").first
            seen.texts["outcome"] = end?["outcome"] as? String
            seen.numbers["rang for"] = (end?["t"] as? Double ?? 0) - (alarm?["t"] as? Double ?? 0)
            let warnings = run.events("warning").compactMap { $0["message"] as? String }.filter { $0.contains("notification") }
            seen.numbers["warnings"] = Double(warnings.count)
            seen.texts["warning"] = warnings.first
        }
        #expect(seen["asked"], "\(seen.texts)")
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.numbers["lateness ms"] ?? 1000 < 100)
        #expect(seen.texts["outcome"] == "ring_limit")
        #expect(abs((seen.numbers["rang for"] ?? 0) - 5) < 0.2, "rang its whole limit and no longer: \(seen.numbers)")
        #expect(seen.numbers["warnings"] == 1, "\(seen.texts)")
        #expect(seen.texts["warning"]?.contains("Notify") == true && seen.texts["warning"]?.contains("no answer within") == true, "\(seen.texts)")
    }
}

import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// The user's hooks (`$XDG_CONFIG_HOME/snoozefuse/hooks/`) around a real nap of the built binary.
@Suite("Hooks: the user's programs at the moments of a nap")
struct HooksTests {
    /// Every moment's hook runs with its variables; a hook that sleeps 60 s during the nap delays
    /// nothing and is stopped after 10 s; a failing hook and one that others could change are said.
    @Test func hooksRunWithTheirVariablesAndNeitherAHangingNorAFailingOneDelaysTheAlarm() async throws {
        let seen = try await script { home, seen in
            let folder = try hooksFolder(home)
            func hook(_ name: String, _ body: String, mode: mode_t = 0o700) throws {
                try writeHook(folder + "/" + name, body, mode: mode)
            }
            let saved = { (name: String) in home.folder.path(name) }
            let variables = { (file: String) in "env | grep '^SNOOZEFUSE_' | sort > '\(saved(file))'" }
            try hook("start", variables("start.env"))
            // Group-writable: refused, never run.
            try hook("release", "touch '\(saved("release.ran"))'", mode: 0o770)
            // Sleeps through the alarm in a child of its own: killed at 10 s with its process group
            // (killing the hook alone would leave the sleep behind).
            try hook("nap", "sleep 60 & echo $! > '\(saved("nap.pid"))'; wait")
            try hook("alarm", "echo 'the alarm hook fails'; exit 3")
            try hook("dismiss", variables("dismiss.env"))
            try hook("end", variables("end.env"))

            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--ring-limit", "40",
                                       "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            seen.numbers["pid"] = Double(nap.pid)
            let events = { home.lines(home.folder.path("events.jsonl")) }
            let warnings = { events().filter { $0["event"] as? String == "warning" }.compactMap { $0["message"] as? String } }
            seen.steps["stopped the sleeper"] = waitFor(.seconds(30)) { warnings().contains { $0.contains("hook nap did not finish") } }
            // SIGKILL went to the whole group with the hook; the sleep ends as soon as the kernel
            // delivers it (killed alone, the hook would leave it sleeping for a minute).
            let sleeper = (try? String(contentsOfFile: saved("nap.pid"), encoding: .utf8))
                .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            seen.steps["sleeper gone"] = sleeper.map { pid in waitFor(.seconds(5)) { !isRunning(pid) } } ?? false
            seen.numbers["stop"] = Double(try home.run(["stop"]).status)
            seen.numbers["status"] = Double(nap.wait())
            seen.texts["warnings"] = warnings().joined(separator: "\n")
            let napping = events().first { $0["event"] as? String == "phase" && $0["phase"] as? String == "napping" }
            let alarm = events().first { $0["event"] as? String == "alarm" }
            seen.numbers["alarm t - due"] = ((alarm?["t"] as? Double) ?? 99) - ((napping?["until"] as? Double) ?? 0)
            seen.numbers["lateness"] = alarm?["lateness_ms"] as? Double
            seen.texts["outcome"] = events().last?["outcome"] as? String
            for name in ["start", "dismiss", "end"] {
                seen.texts[name] = try? String(contentsOfFile: saved("\(name).env"), encoding: .utf8)
            }
            seen.steps["release ran"] = FileManager.default.fileExists(atPath: saved("release.ran"))
            seen.texts["log"] = try? String(contentsOfFile: home.folder.path("state/snoozefuse/hooks.log"), encoding: .utf8)
        }
        let pid = Int(seen.numbers["pid"] ?? 0)
        // The nap's hook slept from t=0; the alarm still came at its deadline, on time.
        #expect(abs(seen.numbers["alarm t - due"] ?? 99) < 0.25, "\(seen.texts)")
        #expect((seen.numbers["lateness"] ?? 999) < 100, "\(seen.texts)")
        #expect(seen["stopped the sleeper"], "\(seen.texts)")
        #expect(seen["sleeper gone"], "the hook's child outlived its limit")
        #expect(seen.numbers["stop"] == 0 && seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "dismissed")
        // Each hook saw its moment.
        let start = try #require(seen.texts["start"], "the start hook did not run: \(seen.texts)")
        #expect(start.contains("SNOOZEFUSE_EVENT=start\n") && start.contains("SNOOZEFUSE_PHASE=releasing\n"), "\(start)")
        #expect(start.contains("SNOOZEFUSE_PID=\(pid)\n") && start.contains("SNOOZEFUSE_WALL=20"), "\(start)")
        #expect(start.contains("SNOOZEFUSE_HOOK=") && start.contains("/snoozefuse/hooks/start\n"), "its own path: \(start)")
        let dismiss = try #require(seen.texts["dismiss"], "\(seen.texts)")
        #expect(dismiss.contains("SNOOZEFUSE_EVENT=dismiss\n") && dismiss.contains("SNOOZEFUSE_OUTCOME=dismissed\n"), "\(dismiss)")
        let end = try #require(seen.texts["end"], "\(seen.texts)")
        #expect(end.contains("SNOOZEFUSE_EVENT=end\n") && end.contains("SNOOZEFUSE_OUTCOME=dismissed\n"), "\(end)")
        // The refused hook never ran and the warning says why; the failing one is said with its status.
        #expect(!seen["release ran"])
        let warnings = seen.texts["warnings"] ?? ""
        #expect(warnings.contains("hook release refused: others can change") && warnings.contains("chmod go-w"), "\(warnings)")
        #expect(warnings.contains("hook alarm exited with status 3"), "\(warnings)")
        #expect(warnings.contains("hook nap did not finish within 10s and was stopped"), "\(warnings)")
        // Hooks' output goes to the log in the state folder.
        #expect(seen.texts["log"]?.contains("the alarm hook fails") == true, "\(seen.texts["log"] ?? "no log")")
        // So does every failing, hanging or refused hook's line, as the README says.
        for line in ["snoozefuse: hook release refused: others can change", "snoozefuse: hook alarm exited with status 3",
                     "snoozefuse: hook nap did not finish within 10s"] {
            #expect(seen.texts["log"]?.contains(line) == true, "\(line): \(seen.texts["log"] ?? "no log")")
        }
    }

    /// A `start` hook that hangs, in a nap that ends before its 10 s: the nap's exit waits for the
    /// `end` hook only; the `start` hook, whose moment has passed, is stopped with its group, and
    /// the log says so (it was "did not finish within 10s": the exit had waited the whole limit).
    @Test func aHungStartHookIsStoppedWhenTheNapEnds() async throws {
        let seen = try await script { home, seen in
            let folder = try hooksFolder(home)
            let pidFile = home.folder.path("start.pid")
            try writeHook(folder + "/start", "sleep 60 & echo $! > '\(pidFile)'; wait")
            try writeHook(folder + "/end", "touch '\(home.folder.path("end.ran"))'")
            let nap = try home.run(["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "1",
                                    "--device", "null", "--events", "jsonl", "--quiet"])
            seen.numbers["status"] = Double(nap.status)
            let sleeper = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            seen.steps["sleeper gone"] = sleeper.map { pid in waitFor(.seconds(5)) { !isRunning(pid) } } ?? false
            seen.steps["end ran"] = FileManager.default.fileExists(atPath: home.folder.path("end.ran"))
            seen.texts["said"] = nap.standardError + nap.standardOutput
            seen.texts["log"] = try? String(contentsOfFile: home.folder.path("state/snoozefuse/hooks.log"), encoding: .utf8)
        }
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen["end ran"], "\(seen.texts)")
        #expect(seen["sleeper gone"], "\(seen.texts)")
        let log = seen.texts["log"] ?? ""
        #expect(log.contains("hook start was still running when the nap ended and was stopped"), "\(log)")
        #expect(!log.contains("hook start did not finish within"), "\(log)")
    }

    /// A hook that detaches a child (a double fork and `setsid`, as a daemon does) does not leave
    /// it behind: the nap adopts what its children orphan (a child subreaper) and ends what a hook
    /// left once the hook has ended, saying so in the log. On main the sleeper outlived the nap.
    @Test func whatAHookDetachesEndsWithTheHook() async throws {
        let seen = try await script { home, seen in
            let folder = try hooksFolder(home)
            let pidFile = home.folder.path("detached.pid")
            try writeHook(folder + "/start", "(setsid sh -c 'sleep 120 & echo $! > \"\(pidFile)\"' &) ; sleep 0.3; exit 0")
            // A nap long enough to be running still however busy the machine (an 8 s nap once
            // ended before the test looked); cancelled once seen.
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "120", "--ring-limit", "1",
                                       "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            seen.steps["detached"] = waitFor(.seconds(10)) { FileManager.default.fileExists(atPath: pidFile) }
            let detached = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            // Ended while the nap goes on: once its hook has ended, not only when the nap does.
            seen.steps["ended with the hook"] = detached.map { pid in waitFor(.seconds(20)) { !isRunning(pid) } } ?? false
            seen.steps["nap still running"] = nap.isRunning
            seen.numbers["stop"] = Double(try home.run(["stop", "--yes"]).status)
            seen.numbers["status"] = Double(nap.wait())
            if let detached, isRunning(detached) { kill(detached, SIGKILL) }
            seen.texts["log"] = try? String(contentsOfFile: home.folder.path("state/snoozefuse/hooks.log"), encoding: .utf8)
        }
        #expect(seen["detached"], "\(seen.texts)")
        #expect(seen["ended with the hook"], "the detached sleeper outlived its hook: \(seen.texts)")
        #expect(seen["nap still running"])
        // Cancelled as asked (exit 1), not ended by what its hook left.
        #expect(seen.numbers["stop"] == 0 && seen.numbers["status"] == 1, "\(seen.numbers): \(seen.texts)")
        #expect(seen.texts["log"]?.contains("snoozefuse: hook start left 1 process behind (sleep") == true, "\(seen.texts)")
    }

    /// A hook that writes a megabyte keeps 64 KiB of it in the log and a line saying how much was
    /// dropped; a log past 1 MiB is moved to `hooks.log.1` before the next hook writes to it.
    @Test func aHookKeepsAtMost64KiBInTheLogAndTheLogIsRotatedPastOneMebibyte() async throws {
        let seen = try await script { home, seen in
            let folder = try hooksFolder(home)
            try writeHook(folder + "/start", "head -c 1048576 /dev/zero | tr '\\0' x; echo; echo 'the end of the start hook'")
            let state = home.folder.path("state/snoozefuse")
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let old = String(repeating: "an old line of the log\n", count: 50_000)
            try old.write(toFile: state + "/hooks.log", atomically: false, encoding: .utf8)
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "1",
                                       "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            seen.numbers["status"] = Double(nap.wait())
            let log = (try? Data(contentsOf: URL(fileURLWithPath: state + "/hooks.log"))) ?? Data()
            seen.numbers["log bytes"] = Double(log.count)
            seen.texts["log end"] = String(decoding: log.suffix(400), as: UTF8.self)
            seen.steps["old log kept"] = (try? String(contentsOfFile: state + "/hooks.log.1", encoding: .utf8)) == old
        }
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen["old log kept"], "the log past 1 MiB went to hooks.log.1")
        #expect((seen.numbers["log bytes"] ?? 0) >= 65_536 && (seen.numbers["log bytes"] ?? .infinity) < 66_000, "\(seen.numbers)")
        #expect(seen.texts["log end"]?.contains("snoozefuse: hook start wrote 983067 bytes more than the 64 KiB a run keeps in this log; they were dropped") == true,
                "\(seen.texts["log end"] ?? "")")
    }

    /// A hook that leaves a child writing without end into its output (`yes &`) and exits: the
    /// nap reads what waits for a moment, then lets go, and ends as it should (it waits for its
    /// `end` hook, never for what that hook left behind).
    @Test func aChildThatAHookLeavesWritingDoesNotHoldTheNap() async throws {
        let seen = try await script { home, seen in
            let folder = try hooksFolder(home)
            try writeHook(folder + "/end", "yes 'left behind' & echo $! > '\(home.folder.path("yes.pid"))'; exit 0")
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "1",
                                       "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            // A nap of 2 s; a hook thread held by the writer would keep it 10 s more (the most it
            // waits for an `end` hook).
            seen.steps["nap ended"] = waitFor(.seconds(9)) { !nap.isRunning }
            _ = waitFor(.seconds(30)) { !nap.isRunning }
            if nap.isRunning { nap.signal(SIGKILL) }
            seen.numbers["status"] = Double(nap.wait())
            let yes = (try? String(contentsOfFile: home.folder.path("yes.pid"), encoding: .utf8))
                .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            // Its writes meet a closed pipe: SIGPIPE ends it.
            seen.steps["writer gone"] = yes.map { pid in waitFor(.seconds(10)) { !isRunning(pid) } } ?? false
            if let yes, isRunning(yes) { kill(yes, SIGKILL) }
        }
        #expect(seen["nap ended"], "\(seen.texts)")
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen["writer gone"], "\(seen.texts)")
    }
}

/// Writes an executable shell script at `path`, through a close-on-exec descriptor: a program that
/// another test of this process starts meanwhile must not inherit it (an executable that some
/// process holds open for writing cannot be run: ETXTBSY).
/// The hooks' folder of `home`, made (mode 0700, as a person's own).
func hooksFolder(_ home: NapHome) throws -> String {
    let folder = home.folder.path("config/snoozefuse/hooks")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return folder
}

func writeHook(_ path: String, _ body: String, mode: mode_t = 0o700) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let text = Array(("#!/bin/sh\n" + body + "\n").utf8)
    let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    guard written == text.count, chmod(path, mode) == 0 else { throw POSIXError(.EIO) }
}

import Foundation
import Glibc
import Testing
import SnoozeFuseTestSupport

extension NapHome {
    var database: String { folder.path("data/snoozefuse/library.sqlite") }

    /// Runs `snoozefuse arguments…` with `extra` in its environment.
    func run(_ arguments: [String], with extra: [String: String]) throws -> ProcessResult {
        try runProcessBlocking(BuiltProducts.executable("snoozefuse"), arguments, environment: environment.merging(extra) { $1 })
    }

    /// Runs `snoozefuse arguments…` as root without the capabilities that let root ignore file
    /// modes (as any other user is), so a read-only folder is read-only to it.
    func runUnprivileged(_ arguments: [String]) throws -> ProcessResult {
        guard geteuid() == 0 else { return try run(arguments) }
        return try runProcessBlocking(executableInPath("setpriv"), [
            "--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all", BuiltProducts.executable("snoozefuse").path,
        ] + arguments, environment: environment)
    }

    /// The standard output of `snoozefuse arguments…` as JSON.
    func json(_ arguments: [String], with extra: [String: String] = [:]) throws -> Any {
        let result = try run(arguments, with: extra)
        guard result.status == 0 else { throw ToolFailure(description: "\(arguments) exited \(result.status): \(result.standardError)") }
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    }

    /// `nap --dry-run --json`: each setting's value (as text) and source layer.
    func dryRun(_ arguments: [String], with extra: [String: String] = [:]) throws -> [String: (value: String, source: String)] {
        let document = try json(["nap", "--no-hold", "--dry-run", "--json"] + arguments, with: extra) as? [String: Any]
        var settings: [String: (value: String, source: String)] = [:]
        for entry in document?["settings"] as? [[String: Any]] ?? [] {
            let value = entry["value"].map { value -> String in
                if let list = value as? [String] { return list.joined(separator: ";") }
                return value as? String ?? "none"
            } ?? "none"
            settings[entry["key"] as? String ?? "?"] = (value, entry["source"] as? String ?? "?")
        }
        return settings
    }

    /// The recorded naps, oldest first (`history --json`).
    func history() throws -> [[String: Any]] {
        let document = try json(["history", "--json"]) as? [String: Any]
        return document?["naps"] as? [[String: Any]] ?? []
    }
}

/// A file's mode bits.
private func mode(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
}

@Suite("presets, config and history (the built binary, a database on disk)")
struct UserDataCommandTests {
    @Test func presetsAreListedShownSavedAndRemovedAndTheBuiltInsAreKept() throws {
        let home = try NapHome()
        let listed = try home.json(["presets", "list", "--json"]) as? [[String: Any]]
        #expect(listed?.map { $0["name"] as? String } == ["basic", "quick-test"])
        #expect(listed?.first?["default"] as? Bool == true && listed?.first?["builtIn"] as? Bool == true)

        let saved = try home.run(["presets", "save", "power", "--nap", "15m", "--max", "25m", "--sound", "chime", "--volume", "60"])
        #expect(saved.status == 0, "\(saved.standardError)")
        #expect(saved.standardError.contains("saved preset \"power\""), "\(saved.standardError)")
        // A second save changes only what it names.
        #expect(try home.run(["presets", "save", "power", "--ring-limit", "300"]).status == 0)
        let power = try home.json(["presets", "show", "power", "--json"]) as? [String: Any]
        let values = power?["values"] as? [String: Any]
        #expect(values?["nap"] as? String == "15m" && values?["max"] as? String == "25m")
        #expect(values?["release"] as? String == "30s", "the rest from the default preset")
        #expect(values?["ring-limit"] as? String == "5m", "stored as the parser reads it")
        #expect(values?["sound"] as? String == "chime" && values?["volume"] as? String == "60")
        #expect(power?["builtIn"] as? Bool == false)

        // nap --preset uses a saved preset.
        let nap = try home.dryRun(["--preset", "power"])
        #expect(nap["nap"]?.value == "15m" && nap["nap"]?.source == "preset")
        #expect(nap["ring-limit"]?.value == "5m" && nap["sound"]?.value == "chime")
        let shown = try home.run(["presets", "show", "power"])
        #expect(shown.standardOutput.contains("nap") && shown.standardOutput.contains("15m"), "\(shown.standardOutput)")

        // The built-ins cannot be overwritten or removed; unknown names are missing input.
        let overwrite = try home.run(["presets", "save", "basic", "--nap", "1m"])
        #expect(overwrite.status == 64 && overwrite.standardError.contains("built-in"), "\(overwrite.standardError)")
        let removeBuiltIn = try home.run(["presets", "remove", "Quick-Test"])
        #expect(removeBuiltIn.status == 64 && removeBuiltIn.standardError.contains("built-in"), "\(removeBuiltIn.standardError)")
        #expect(try home.run(["presets", "show", "nope"]).status == 66)
        #expect(try home.run(["presets", "remove", "nope"]).status == 66)
        let napUnknown = try home.run(["nap", "--no-hold", "--dry-run", "--preset", "nope"])
        // Missing input, as the README's table says (it was 64).
        #expect(napUnknown.status == 66 && napUnknown.standardError.contains("unknown preset \"nope\""), "\(napUnknown.standardError)")
        // A value a preset cannot hold, and one the flag refuses, are refused with the flag's message.
        let badValue = try home.run(["presets", "save", "quiet", "--volume", "0"])
        let napBadValue = try home.run(["nap", "--no-hold", "--volume", "0"])
        #expect(badValue.status == 64 && napBadValue.status == 64)
        #expect(badValue.standardError.contains("--volume 0 would make the alarm silent"), "\(badValue.standardError)")
        #expect(napBadValue.standardError.contains("--volume 0 would make the alarm silent"), "\(napBadValue.standardError)")

        #expect(try home.run(["presets", "remove", "power"]).status == 0)
        let after = try home.json(["presets", "list", "--json"]) as? [[String: Any]]
        #expect(after?.map { $0["name"] as? String } == ["basic", "quick-test"])
        #expect(try mode(home.database) == 0o600)
        #expect(try mode(home.folder.path("data/snoozefuse")) == 0o700)
    }

    @Test func settingsAreCheckedAsTheFlagsAre() throws {
        let home = try NapHome()
        let silent = try home.run(["config", "set", "volume", "0"])
        #expect(silent.status == 64 && silent.standardError.contains("--volume 0 would make the alarm silent"), "\(silent.standardError)")
        let soon = try home.run(["config", "set", "nap", "soon"])
        #expect(soon.status == 64 && soon.standardError.contains("90s, 20m, 1h30m, 1h 30m, 25:00"), "\(soon.standardError)")
        let unknown = try home.run(["config", "set", "loudness", "3"])
        #expect(unknown.status == 64 && unknown.standardError.contains("there is no setting \"loudness\""), "\(unknown.standardError)")
        let noPreset = try home.run(["config", "set", "preset", "nope"])
        #expect(noPreset.status == 64 && noPreset.standardError.contains("unknown preset \"nope\" for the setting preset."), "\(noPreset.standardError)")

        #expect(try home.run(["config", "set", "sound", "chime"]).status == 0)
        #expect(try home.run(["config", "set", "emitter", "terminal", "command:run=true"]).status == 0)
        #expect(try home.run(["config", "get", "sound"]).standardOutput == "chime\n")
        #expect(try home.run(["config", "get", "emitter"]).standardOutput == "terminal\ncommand:run=true\n")
        let list = try home.json(["config", "list", "--json"]) as? [[String: Any]]
        let sound = list?.first { $0["key"] as? String == "sound" }
        #expect(sound?["value"] as? String == "chime" && sound?["environment"] as? String == "SNOOZEFUSE_SOUND")
        // Unset, system-volume still says what a nap does (it said "left as it is" while a nap
        // raises the sinks to 60 %).
        let listed = try home.run(["config", "list"]).standardOutput
        #expect(listed.contains("the alarm's sinks raised to at least 60 % on a sound server"), "\(listed)")
        #expect(try home.dryRun([])["emitter"]?.value == "terminal;command:run=true")
        #expect(try home.run(["config", "unset", "sound"]).status == 0)
        let unset = try home.run(["config", "get", "sound"])
        #expect(unset.status == 0 && unset.standardOutput.isEmpty && unset.standardError.contains("not set"))

        // A value from the environment is read by the same parser: a bad one is a configuration error.
        let badVariable = try home.run(["nap", "--no-hold", "--dry-run"], with: ["SNOOZEFUSE_VOLUME": "0"])
        #expect(badVariable.status == 78, "\(badVariable.standardError)")
        #expect(badVariable.standardError.contains("SNOOZEFUSE_VOLUME=0: --volume 0 would make the alarm silent"), "\(badVariable.standardError)")
    }

    /// Flag, then SNOOZEFUSE_*, then the preset named with --preset, then the settings, then the
    /// default preset, then the built-in default: each layer wins over the ones below it, and
    /// --dry-run names it.
    @Test func everyLayerWinsOverTheOnesBelowAndDryRunNamesIt() throws {
        let home = try NapHome()
        #expect(try home.run(["presets", "save", "mine", "--release", "1m", "--nap", "11m", "--max", "1h", "--volume", "40"]).status == 0)
        #expect(try home.run(["presets", "save", "usual", "--release", "2m", "--nap", "12m", "--max", "1h", "--sound", "gentle"]).status == 0)
        #expect(try home.run(["config", "set", "nap", "13m"]).status == 0)
        #expect(try home.run(["config", "set", "volume", "55"]).status == 0)
        #expect(try home.run(["config", "set", "preset", "usual"]).status == 0)

        let all = try home.dryRun(["--preset", "mine", "--nap", "10m"], with: ["SNOOZEFUSE_NAP": "15m"])
        #expect(all["nap"]?.value == "10m" && all["nap"]?.source == "flag")
        let environment = try home.dryRun(["--preset", "mine"], with: ["SNOOZEFUSE_NAP": "15m"])
        #expect(environment["nap"]?.value == "15m" && environment["nap"]?.source == "environment")
        let named = try home.dryRun(["--preset", "mine"])
        #expect(named["nap"]?.value == "11m" && named["nap"]?.source == "preset")
        #expect(named["volume"]?.value == "40" && named["volume"]?.source == "preset", "the named preset beats the settings")
        let settings = try home.dryRun([])
        #expect(settings["nap"]?.value == "13m" && settings["nap"]?.source == "config")
        #expect(settings["volume"]?.value == "55" && settings["volume"]?.source == "config")
        #expect(settings["release"]?.value == "2m" && settings["release"]?.source == "default-preset")
        #expect(settings["sound"]?.value == "gentle" && settings["sound"]?.source == "default-preset")
        #expect(settings["preset"]?.value == "usual" && settings["preset"]?.source == "config")
        #expect(settings["bpm"]?.value == "60" && settings["bpm"]?.source == "built-in")
        #expect(try home.run(["config", "unset", "preset"]).status == 0)
        let basic = try home.dryRun([])
        #expect(basic["release"]?.value == "30s" && basic["release"]?.source == "default-preset")
        #expect(basic["nap"]?.value == "13m", "the settings still beat the default preset")

        // As text: one line per setting, its value and where it came from.
        let text = try home.run(["nap", "--no-hold", "--dry-run", "--nap", "10m"], with: ["SNOOZEFUSE_SOUND": "chime"])
        #expect(text.status == 0, "\(text.standardError)")
        let lines = text.outputLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(lines.contains(["nap", "10m", "--nap"]), "\(text.standardOutput)")
        #expect(lines.contains(["sound", "chime", "SNOOZEFUSE_SOUND"]), "\(text.standardOutput)")
        #expect(lines.contains(["volume", "55", "config"]), "\(text.standardOutput)")
        #expect(lines.contains(["release", "30s", "default", "preset", "basic"]), "\(text.standardOutput)")
        #expect(lines.contains(["bpm", "60", "built-in", "default"]), "\(text.standardOutput)")
    }

    /// A damaged database and one from a newer release are refused (exit 78), named with what to
    /// do, and left byte for byte as they were; a nap still runs without them. A read-only folder
    /// is reported.
    @Test func aDatabaseThatCannotBeUsedIsReportedAndLeftAsItIs() throws {
        let home = try NapHome()
        #expect(try home.run(["presets", "save", "mine", "--nap", "11m"]).status == 0)
        _ = try runTool("sqlite3", [home.database, "INSERT INTO grdb_migrations VALUES ('v9: dreams'); PRAGMA wal_checkpoint(TRUNCATE);"])
        let newer = try Data(contentsOf: URL(fileURLWithPath: home.database))
        for arguments in [["presets", "list"], ["presets", "save", "other", "--nap", "1m"], ["config", "set", "nap", "5m"], ["history"]] {
            let refused = try home.run(arguments)
            #expect(refused.status == 78, "\(arguments): \(refused.standardError)")
            #expect(refused.standardError.contains(home.database) && refused.standardError.contains("newer release"), "\(refused.standardError)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.database)) == newer)

        let garbage = Data((0 ..< 8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try FileManager.default.removeItem(atPath: home.database)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: home.database + suffix) }
        try garbage.write(to: URL(fileURLWithPath: home.database))
        for arguments in [["presets", "list"], ["config", "set", "nap", "5m"], ["history", "export", "--csv"]] {
            let damaged = try home.run(arguments)
            #expect(damaged.status == 78, "\(arguments): \(damaged.standardError)")
            #expect(damaged.standardError.contains("\(home.database): the database is damaged"), "\(damaged.standardError)")
            #expect(damaged.standardError.contains(".recover"), "says how to recover: \(damaged.standardError)")
        }
        let nap = try home.run(["nap", "--no-hold", "--dry-run"])
        #expect(nap.status == 0, "an alarm does not depend on the database: \(nap.standardError)")
        #expect(nap.standardError.contains("not used for this nap"), "\(nap.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.database)) == garbage, "never overwritten")

        let other = try NapHome()
        let data = other.folder.path("data/snoozefuse")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        #expect(chmod(data, 0o500) == 0)
        let readOnly = try other.runUnprivileged(["presets", "save", "mine", "--nap", "11m"])
        #expect(chmod(data, 0o700) == 0)
        #expect(readOnly.status == 78, "\(readOnly.standardError)")
        #expect(readOnly.standardError.contains(data) && readOnly.standardError.contains("read-only"), "\(readOnly.standardError)")
    }

    /// Every nap is recorded when it ends, once, however it ends: ring limit, snoozed, dismissed,
    /// cancelled, killed (SIGKILL, its guardian too: recorded as interrupted by the next command
    /// that finds it) and missed (too late for `resume`).
    /// Another program holds the database's write lock for the whole nap (sqlite3 in an open
    /// exclusive transaction): the nap starts at once, rings at its deadline, and says that its
    /// history could not be written in time instead of waiting on the lock.
    @Test func aNapRingsOnTimeWhileAnotherProgramHoldsTheDatabase() async throws {
        let seen = try await script { home, seen in
            // A database with a setting, so that there is one to hold.
            seen.numbers["set"] = Double(try home.run(["config", "set", "volume", "70"]).status)
            // It says when it holds the lock (a file made after BEGIN EXCLUSIVE has returned), and
            // waits for the lock rather than fail if another command has it at that moment.
            let held = home.folder.path("held")
            let holder = try BackgroundProcess(executableInPath("sh"), ["-c", "(echo '.timeout 5000'; echo 'BEGIN EXCLUSIVE;'; echo \".shell touch '\(held)'\"; sleep 8) | sqlite3 -bail '\(home.database)'"],
                                               environment: home.environment, standardOutput: "/dev/null",
                                               standardError: home.folder.path("holder.err"))
            defer { holder.signal(SIGTERM); _ = holder.wait() }
            seen.steps["lock held"] = waitFor(.seconds(20)) { FileManager.default.fileExists(atPath: held) }
            let nap = try home.run(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "30", "--ring-limit", "1",
                                    "--device", "null", "--events", "jsonl"])
            seen.numbers["status"] = Double(nap.status)
            seen.texts["stderr"] = nap.standardError
            let events = nap.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let napping = events.first { $0["phase"] as? String == "napping" }
            let alarm = events.first { $0["event"] as? String == "alarm" }
            seen.numbers["alarm t - due"] = ((alarm?["t"] as? Double) ?? 99) - ((napping?["until"] as? Double) ?? 0)
            seen.texts["outcome"] = events.last?["outcome"] as? String
            // Once the other program has let go of the database (its 8 s are up), the nap kept
            // aside is written by the next command, once.
            _ = holder.wait()
            func naps() throws -> [[String: Any]] {
                let history = try home.run(["history", "--json"])
                seen.texts["history"] = history.standardOutput + history.standardError
                let document = try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any]
                return document?["naps"] as? [[String: Any]] ?? []
            }
            seen.numbers["naps after"] = Double(try naps().count)
            seen.texts["recorded outcome"] = try naps().first?["outcome"] as? String
            _ = try home.run(["status"])
            seen.numbers["naps later"] = Double(try naps().count)
        }
        #expect(seen.numbers["set"] == 0)
        #expect(seen.steps["lock held"] == true, "sqlite3 did not take the lock: \(seen.texts)")
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "ring_limit", "\(seen.texts)")
        #expect(abs(seen.numbers["alarm t - due"] ?? 99) < 0.25, "\(seen.texts)")
        #expect(seen.texts["stderr"]?.contains("is not in the history yet: the database") == true, "\(seen.texts)")
        #expect(seen.numbers["naps after"] == 1, "\(seen.texts)")
        #expect(seen.texts["recorded outcome"] == "ring_limit", "\(seen.texts)")
        #expect(seen.numbers["naps later"] == 1, "\(seen.texts)")
    }

    @Test func everyEndingIsRecordedOnce() async throws {
        let seen = try await script { home, seen in
            let quick = ["--no-hold", "--release", "0", "--device", "null", "--quiet", "--fade-in", "0"]
            // Ring limit.
            seen.numbers["ring limit"] = Double(try home.run(["nap", "--nap", "1", "--max", "30", "--ring-limit", "1"] + quick).status)
            // Snoozed once, then the ring limit.
            let snoozing = try home.launch(["nap", "--nap", "1", "--max", "30", "--ring-limit", "2", "--snooze", "1", "--events", "jsonl"] + quick,
                                           events: "snoozing.jsonl")
            seen.steps["rang"] = waitFor { home.state()?["phase"] as? String == "ringing" }
            seen.numbers["snooze"] = Double(try home.run(["snooze"]).status)
            seen.numbers["snoozed nap"] = Double(snoozing.wait())
            // Dismissed from another terminal.
            let dismissed = try home.launch(["nap", "--nap", "1", "--max", "30", "--dismiss", "key"] + quick, events: "dismissed.jsonl")
            seen.steps["rang again"] = waitFor { home.state()?["phase"] as? String == "ringing" }
            seen.numbers["stop"] = Double(try home.run(["stop"]).status)
            seen.numbers["dismissed nap"] = Double(dismissed.wait())
            // Cancelled (Ctrl-C) while napping.
            let cancelled = try home.launch(["nap", "--nap", "60", "--max", "90", "--events", "jsonl"] + quick, events: "cancelled.jsonl")
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" }
            cancelled.signal(SIGINT)
            seen.numbers["cancelled nap"] = Double(cancelled.wait())
            // Killed with its guardian: the next nap finds it and records it as interrupted.
            let killed = try home.launch(["nap", "--nap", "60", "--max", "90"] + quick, events: "killed.jsonl")
            seen.steps["guarded"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil }
            // Stopped first: a running nap replaces a guardian that dies.
            killed.signal(SIGSTOP)
            if let guardian = (home.state()?["guardianPid"] as? NSNumber)?.int32Value { kill(guardian, SIGKILL) }
            killed.signal(SIGKILL)
            killed.wait()
            seen.steps["interrupted"] = waitFor { home.status() == "interrupted" }
            let pending = try home.run(["history"])
            seen.texts["history while interrupted"] = pending.standardError
            seen.numbers["naps before the next"] = Double(try home.history().count)
            seen.numbers["next nap"] = Double(try home.run(["nap", "--nap", "0", "--max", "30", "--ring-limit", "1"] + quick).status)
            // Killed again, found by `resume` too late to ring: missed.
            let late = try home.launch(["nap", "--nap", "1", "--max", "90"] + quick, events: "late.jsonl")
            seen.steps["guarded again"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil }
            late.signal(SIGSTOP)
            if let guardian = (home.state()?["guardianPid"] as? NSNumber)?.int32Value { kill(guardian, SIGKILL) }
            late.signal(SIGKILL)
            late.wait()
            usleep(2_500_000)
            seen.numbers["resume"] = Double(try home.run(["resume", "--max-late", "1s"]).status)
            let naps = try home.history()
            seen.texts["outcomes"] = naps.map { $0["outcome"] as? String ?? "?" }.joined(separator: " ")
            seen.texts["snoozes"] = naps.map { "\($0["snoozes"] as? Int ?? -1)" }.joined(separator: " ")
            seen.texts["rung by"] = naps.map { $0["rungBy"] as? String ?? "-" }.joined(separator: " ")
            seen.texts["ids"] = "\(Set(naps.compactMap { $0["id"] as? String }).count)"
            seen.texts["napSeconds"] = naps.map { ($0["napSeconds"] as? Double).map { "\(Int($0.rounded()))" } ?? "-" }.joined(separator: " ")
            seen.texts["reasons"] = naps.map { $0["alarmReason"] as? String ?? "-" }.joined(separator: " ")
            seen.texts["lateness"] = naps.map { $0["latenessMs"] == nil ? "-" : "ms" }.joined(separator: " ")
            seen.texts["status after"] = home.status()
        }
        #expect(seen.numbers["ring limit"] == 0, "\(seen.texts)")
        #expect(seen["rang"] && seen.numbers["snooze"] == 0 && seen.numbers["snoozed nap"] == 0, "\(seen.texts)")
        #expect(seen["rang again"] && seen.numbers["stop"] == 0 && seen.numbers["dismissed nap"] == 0, "\(seen.texts)")
        #expect(seen["napping"] && seen.numbers["cancelled nap"] == 130, "\(seen.texts)")
        #expect(seen["guarded"] && seen["interrupted"], "\(seen.texts)")
        #expect(seen.texts["history while interrupted"]?.contains("an interrupted nap is not in the history yet") == true, "\(seen.texts)")
        #expect(seen.numbers["naps before the next"] == 4)
        #expect(seen.numbers["next nap"] == 0, "\(seen.texts)")
        #expect(seen["guarded again"] && seen.numbers["resume"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcomes"] == "ring_limit ring_limit dismissed cancelled interrupted ring_limit missed", "\(seen.texts)")
        #expect(seen.texts["snoozes"] == "0 1 0 0 0 0 0")
        #expect(seen.texts["rung by"] == "nap nap nap - - nap -")
        #expect(seen.texts["reasons"] == "nap nap nap - - nap -")
        #expect(seen.texts["lateness"] == "ms ms ms - - ms -")
        #expect(seen.texts["napSeconds"]?.hasPrefix("1 1 1 ") == true, "\(seen.texts)")
        #expect(seen.texts["ids"] == "7", "each nap once")
        #expect(seen.texts["status after"] == "none")
    }

    /// On a real terminal: held, let go, held again, let go for good. The history's time to fall
    /// asleep runs from the first hold to the final release, as the nap's own events say.
    @Test func aHeldNapRecordsItsTimeToFallAsleep() async throws {
        let home = try NapHome()
        let pty = try PtyRun()
        defer { pty.cleanUp() }
        let result = try await pty.napOnPty("hold:1,wait:1.2,hold:0.5", environment: home.environment)
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(result.standardError)")
        let lines = try String(contentsOf: pty.events, encoding: .utf8).split(separator: "\n")
        let phases = try lines.map { try JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }.filter { $0.event == "phase" }
        let finalRelease = try #require(phases.last { $0.phase == "releasing" })
        let napping = try #require(phases.first { $0.phase == "napping" })
        let ringing = try #require(phases.first { $0.phase == "ringing" })
        let nap = try #require(try home.history().first)
        #expect(phases.filter { $0.phase == "releasing" }.count == 2, "\(phases.map(\.phase))")
        let asleep = try #require(nap["fallAsleepSeconds"] as? Double)
        #expect(abs(asleep - finalRelease.t) <= 0.002, "fell asleep after \(asleep) s; the final release at t=\(finalRelease.t)")
        let napped = try #require(nap["napSeconds"] as? Double)
        #expect(abs(napped - (ringing.t - napping.t)) <= 0.002)
        #expect(nap["outcome"] as? String == "ring_limit" && nap["preset"] as? String == "quick-test")
    }

    /// One line per nap, the summary, and the chart as plain seconds off a terminal; --since and
    /// the CSV export.
    @Test func historyShowsTheNapsTheSummaryAndTheChartAndExportsCSV() throws {
        let home = try NapHome()
        #expect(try home.run(["config", "set", "bpm", "60"]).status == 0)
        let now = Date().timeIntervalSince1970
        func iso(_ seconds: Double) -> String {
            Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        let rows = [
            ("old", now - 20 * 86_400, "100", "nap", 0), ("a", now - 3 * 86_400, "200", "max", 2),
            ("b", now - 86_400, "NULL", "nap", 0), ("c", now - 3600, "400", "nap", 0),
        ].map { id, start, asleep, reason, snoozes in
            "('\(id)', '\(iso(start))', '\(iso(start + 1500))', \(asleep), 1200, 0.25, 'dismissed', '\(reason)', \(snoozes), 'beep, loud', 'ALSA default', 'nap', 'nap', 'basic')"
        }
        _ = try runTool("sqlite3", [home.database, "INSERT INTO naps (napId, startedAt, endedAt, fallAsleepSeconds, napSeconds, latenessMs, outcome, alarmReason, snoozes, sound, output, rungBy, recordedBy, preset) VALUES \(rows.joined(separator: ", "));"])

        let history = try home.run(["history"])
        #expect(history.status == 0, "\(history.standardError)")
        let text = history.standardOutput
        #expect(text.split(separator: "\n").filter { $0.contains("dismissed") }.count == 4, "\(text)")
        #expect(text.contains("naps in the last 7 days: 3"), "\(text)")
        #expect(text.contains("median time to fall asleep: 3m20s (over 3 naps with a hold)"), "\(text)")
        #expect(text.contains("the max failsafe rang: 1 of 4 alarms (25%)"), "\(text)")
        #expect(text.contains("snoozed: 1 of 4 alarms (25%)"), "\(text)")
        #expect(text.contains("time to fall asleep, last 4 naps (seconds): 100 200 - 400"), "plain numbers off a terminal: \(text)")
        #expect(!text.contains("▁") && !text.contains("\u{1B}["))

        let recent = try home.json(["history", "--since", "7d", "--json"]) as? [String: Any]
        #expect((recent?["naps"] as? [[String: Any]])?.map { $0["id"] as? String } == ["a", "b", "c"])
        #expect((recent?["summary"] as? [String: Any])?["maxAlarms"] as? Int == 1)
        let badSince = try home.run(["history", "--since", "last tuesday"])
        #expect(badSince.status == 64 && badSince.standardError.contains("--since takes a date"), "\(badSince.standardError)")

        let csv = try home.run(["history", "export", "--csv", "--since", "2d"])
        #expect(csv.status == 0, "\(csv.standardError)")
        let records = csv.standardOutput.components(separatedBy: "\r\n")
        #expect(records.first == "napId,startedAt,endedAt,fallAsleepSeconds,napSeconds,latenessMs,outcome,alarmReason,snoozes,sound,output,rungBy,recordedBy,preset,takenOverBy,hold")
        #expect(records.count == 4 && records[3].isEmpty, "\(records)")
        #expect(records[1].hasPrefix("b,") && records[1].contains(",,1200,0.25,dismissed,nap,0,\"beep, loud\",ALSA default,nap,nap,basic"), "\(records)")
        #expect(records[2].hasPrefix("c,") && records[2].contains(",400,1200,"), "\(records)")
    }

    /// Numbers no nap records (a database edited or damaged by hand) print as what they are or
    /// as `-`: a negative lateness with its sign, a time to fall asleep beyond any `Int` as `-`
    /// (it trapped: `Int(1e300)`), the rows around them as ever.
    @Test func historyPrintsNumbersOutOfRangeWithoutFailing() throws {
        let home = try NapHome()
        #expect(try home.run(["config", "set", "bpm", "60"]).status == 0)
        _ = try runTool("sqlite3", [home.database, """
            INSERT INTO naps (napId, startedAt, endedAt, fallAsleepSeconds, napSeconds, latenessMs, outcome, alarmReason, snoozes, sound, output, rungBy, recordedBy, preset, takenOverBy) VALUES
            ('a', '2026-11-20T10:00:00.000Z', '2026-11-20T10:30:00.000Z', 1e300, 7260, -0.25, 'dismissed', 'nap', 12, 'beep', NULL, 'nap', 'nap', 'p', 'guardian, resume'),
            ('b', '2026-11-21T10:00:00.000Z', '2026-11-21T10:30:00.000Z', 272, 3599.6, 150.4, 'dismissed', 'max', 0, 'chime', 'ALSA null', 'nap', 'nap', 'p', NULL),
            ('c', '2026-11-22T10:00:00.000Z', '2026-11-22T10:30:00.000Z', -1e300, 1e400, -92233720368547758.08, 'dismissed', 'nap', 0, 'chime', NULL, 'nap', 'nap', 'p', NULL);
            """])
        let history = try home.run(["history"])
        #expect(history.status == 0, "\(history.standardError)")
        let lines = history.standardOutput.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).joined(separator: " ") }
        #expect(lines.contains("- - 2h01m dismissed nap -0.25 ms 12 nap*>guardian>resume beep"), "\(history.standardOutput)")
        #expect(lines.contains("- 4m32s 1h00m dismissed max 150 ms 0 nap* chime → ALSA null"), "\(history.standardOutput)")
        // A lateness of -2^63 hundredths of a millisecond: its digits, not a trap in abs().
        #expect(lines.contains("- - - dismissed nap -92233720368547758.08 ms 0 nap* chime"), "\(history.standardOutput)")
        // The export writes them as they are (it trapped: `Int64(1e300)`).
        let csv = try home.run(["history", "export", "--csv"])
        #expect(csv.status == 0, "\(csv.standardError)")
        #expect(csv.standardOutput.contains("a,2026-11-20T10:00:00.000Z,2026-11-20T10:30:00.000Z,1e+300,7260,-0.25,"), "\(csv.standardOutput)")
        #expect(csv.standardOutput.contains("c,2026-11-22T10:00:00.000Z,2026-11-22T10:30:00.000Z,-1e+300,,-92233720368547760,"), "\(csv.standardOutput)")
        // So far back that it was a trap in the milliseconds: since 1970, every nap.
        let far = try home.run(["history", "--since", "20000000000w", "--json"])
        #expect(far.status == 0, "\(far.standardError)")
        // JSON cannot say infinity (`1e400` in SQLite): that row's nap time is none, not a `null` for the whole document.
        #expect(far.standardOutput.components(separatedBy: "\"id\" :").count == 4, "\(far.standardOutput)")
    }

    /// The pending history (naps that ended while the database was busy) with numbers no nap
    /// writes: each either is written and listed (`-` where a number makes no sense) and exported
    /// as it is, or, when it is not a nap's entry (2^63 snoozes), kept aside and never read again;
    /// nothing traps (the export did: `Int64(1e300)`).
    @Test func pendingHistoryWithNumbersOutOfRangeIsWrittenOrKeptAside() throws {
        let home = try NapHome()
        #expect(try home.run(["config", "set", "bpm", "60"]).status == 0)
        let pending = home.folder.path("state/snoozefuse/history-pending")
        try FileManager.default.createDirectory(atPath: pending, withIntermediateDirectories: true)
        func entry(_ id: String, _ numbers: String) -> String {
            #"{"id":"\#(id)","started":"2026-11-20T10:00:00.000Z","ended":"2026-11-20T10:30:00.000Z","outcome":"dismissed","recordedBy":"nap",\#(numbers)}"#
        }
        let files = [
            "huge": entry("huge", #""fallAsleepSeconds":1e300,"napSeconds":-1e300,"latenessMs":-0.0,"snoozes":0"#),
            "far": entry("far", #""fallAsleepSeconds":10000000000,"napSeconds":-1,"latenessMs":1e300,"snoozes":0"#),
            "many": entry("many", #""snoozes":9223372036854775808"#),
        ]
        for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: "\(pending)/\(name).json")) }
        let history = try home.run(["history"])
        #expect(history.status == 0, "\(history.standardError)")
        let csv = try home.run(["history", "export", "--csv"])
        #expect(csv.status == 0, "\(csv.standardError)")
        #expect(csv.standardOutput.contains("huge,2026-11-20T10:00:00.000Z,2026-11-20T10:30:00.000Z,1e+300,-1e+300,0,dismissed"), "\(csv.standardOutput)")
        #expect(csv.standardOutput.contains("far,2026-11-20T10:00:00.000Z,2026-11-20T10:30:00.000Z,10000000000,-1,1e+300,dismissed"), "\(csv.standardOutput)")
        #expect(!csv.standardOutput.contains("many,"), "\(csv.standardOutput)")
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: pending)) ?? []).sorted()
        #expect(left.count == 1 && left.first?.hasPrefix("many.json.unreadable-") == true, "\(left)")
        let json = try home.run(["history", "--json"])
        #expect(json.status == 0 && json.standardOutput.contains(#""id" : "huge""#), "\(json.standardOutput)")
    }

    /// `history` fits the terminal (issue 42): 117 columns wide whatever the terminal, every row
    /// wrapped at 80. Below 117 the least needed columns go (SNOOZES, ALARM, HOLD, LATE, BY, then
    /// OUTCOME), the start loses its year below 60, and SOUND → OUTPUT is cut with `…`; without a
    /// width (a pipe) all of them, as the CSV and JSON always have.
    @Test(arguments: [80, 60, 40])
    func historyFitsTheTerminalsWidth(columns: Int) throws {
        let home = try NapHome()
        #expect(try home.run(["config", "set", "bpm", "60"]).status == 0)
        _ = try runTool("sqlite3", [home.database, """
            INSERT INTO naps (napId, startedAt, endedAt, fallAsleepSeconds, napSeconds, latenessMs, outcome, alarmReason, snoozes, sound, output, rungBy, recordedBy, preset, takenOverBy, hold) VALUES
            ('a', '2026-11-20T10:00:00.000Z', '2026-11-20T10:30:00.000Z', 272, 1260, 0.25, 'dismissed', 'nap', 2, 'a sound with a long name', 'ALSA default', 'resume', 'nap', 'p', 'guardian, resume', 'desktop'),
            ('b', '2026-11-19T10:00:00.000Z', '2026-11-19T10:30:00.000Z', 272, 1260, 0.25, 'dismissed', 'nap', 2, '目覚まし時計の長い名前の音', '音のサーバー', 'resume', 'nap', 'p', 'guardian, resume', 'desktop');
            """])
        let full = try home.run(["history"]).standardOutput.split(separator: "\n")
        #expect(full.first?.hasPrefix("STARTED           HOLD     ASLEEP   NAPPED   OUTCOME      ALARM  LATE       SNOOZES  BY") == true, "\(full)")
        let fitted = try home.run(["history"], with: ["COLUMNS": "\(columns)"])
        #expect(fitted.status == 0, "\(fitted.standardError)")
        let lines = fitted.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let table = lines.prefix { !$0.isEmpty }
        #expect(table.count == 3, "\(fitted.standardOutput)")
        // In the terminal's columns, as glibc counts them: a wide sound name is cut at the edge too.
        for line in table { #expect((glibcColumns(line) ?? .max) <= columns, "\(glibcColumns(line) ?? -1) > \(columns): \(line)") }
        // The summary below it too: its long lines wrap at a word.
        for line in lines.dropFirst(table.count) { #expect((glibcColumns(line) ?? .max) <= columns, "\(glibcColumns(line) ?? -1) > \(columns): \(line)") }
        #expect(fitted.standardOutput.contains("median time to fall asleep"), "\(fitted.standardOutput)")
        let header = String(table.first ?? "")
        #expect(header.hasPrefix("STARTED") && header.contains("ASLEEP") && header.contains("NAPPED"), "\(header)")
        #expect(!header.contains("SNOOZES") && !header.contains("ALARM"), "the least needed go first: \(header)")
        let row = String(table.dropFirst().first ?? "")
        #expect(row.contains("4m32s") && row.contains("21m "), "asleep and napped stay: \(row)")
        if columns < 60 { #expect(!row.contains("2026-"), "the start without its year: \(row)") }
    }

    /// BY, over the hand-overs (issue 40, item 6): who held the nap in order, from `nap`, the one
    /// that first rang it marked `*`. It read `guardian>guardian` for a nap its guardian rang, and
    /// `resume>guardian>resume` for one whose guardian died before `resume` rang it.
    @Test func theByColumnIsWhoHeldTheNapAndWhoRangIt() async throws {
        let table: [(rungBy: String, takenOverBy: String, shown: String)] = [
            ("'nap'", "NULL", "nap*"), ("NULL", "NULL", "nap"),
            ("'guardian'", "'guardian'", "nap>guardian*"), ("'nap'", "'guardian'", "nap*>guardian"),
            ("NULL", "'guardian'", "nap>guardian"), ("'resume'", "'guardian, resume'", "nap>guardian>resume*"),
            ("'resume'", "'resume'", "nap>resume*"), ("'guardian'", "'guardian, resume'", "nap>guardian*>resume"),
        ]
        let home = try NapHome()
        // One nap a day, the row's number its sound: the history lists them newest first.
        let rows = table.enumerated().map { index, row in
            "('n\(index)', '2026-11-\(10 + index)T10:00:00.000Z', '2026-11-\(10 + index)T10:30:00.000Z', NULL, 5, 1, 'dismissed', 'nap', 0, 's\(index)', NULL, \(row.rungBy), 'nap', 'p', \(row.takenOverBy))"
        }
        // The commands wait for their programs: on a thread of their own, not the tasks' pool.
        let (set, history) = try await onOwnThread {
            let set = try home.run(["config", "set", "bpm", "60"]).status
            _ = try runTool("sqlite3", [home.database, "INSERT INTO naps (napId, startedAt, endedAt, fallAsleepSeconds, napSeconds, latenessMs, outcome, alarmReason, snoozes, sound, output, rungBy, recordedBy, preset, takenOverBy) VALUES \(rows.joined(separator: ", "));"])
            return (set, try home.run(["history"]))
        }
        #expect(set == 0)
        let shown = Dictionary(uniqueKeysWithValues: history.standardOutput.split(separator: "\n").compactMap { line -> (String, String)? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let sound = fields.last, sound.hasPrefix("s"), fields.count > 2 else { return nil }
            return (String(sound), String(fields[fields.count - 2]))
        })
        for (index, row) in table.enumerated() {
            #expect(shown["s\(index)"] == row.shown, "rungBy \(row.rungBy), takenOverBy \(row.takenOverBy): \(history.standardOutput)")
        }
    }

    /// `stop` forgetting an interrupted nap writes its history after it lets go of the nap lock:
    /// with the database held by another program, the history waits (up to 2 s) but a new nap
    /// started meanwhile is not refused as "another nap is running" (it was: stop held the lock
    /// through its wait), and the interrupted nap reaches the history once the database is free.
    @Test func stopWritesTheHistoryAfterLettingGoOfTheNapLock() async throws {
        let seen = try await script { home, seen in
            seen.numbers["set"] = Double(try home.run(["config", "set", "volume", "70"]).status)
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "60", "--max", "120", "--device", "null", "--quiet"])
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["guardianPid"] != nil }
            guard let guardian = (home.state()?["guardianPid"] as? NSNumber)?.int32Value else { return }
            // Stopped first: a running nap replaces a guardian that dies.
            nap.signal(SIGSTOP)
            kill(guardian, SIGKILL)
            nap.signal(SIGKILL)
            nap.wait()
            seen.steps["interrupted"] = waitFor { home.status() == "interrupted" }
            let holder = try BackgroundProcess(executableInPath("sh"), ["-c", "(echo 'BEGIN EXCLUSIVE;'; echo '.print locked'; sleep 6) | sqlite3 '\(home.database)'"],
                                               environment: home.environment, standardOutput: home.folder.path("holder.out"),
                                               standardError: home.folder.path("holder.err"))
            defer { holder.signal(SIGTERM); _ = holder.wait() }
            seen.steps["locked"] = waitFor(.seconds(10)) { ((try? String(contentsOfFile: home.folder.path("holder.out"), encoding: .utf8)) ?? "").contains("locked") }
            let pending = home.folder.path("state/snoozefuse/history-pending")
            let stop = try home.launch(["stop"], events: "stop.out")
            // The interrupted nap waits in its file before stop tries the database.
            seen.steps["kept"] = waitFor(.seconds(10)) { !((try? FileManager.default.contentsOfDirectory(atPath: pending)) ?? []).isEmpty }
            let next = try home.run(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "30", "--ring-limit", "1", "--device", "null", "--quiet"])
            seen.numbers["next nap"] = Double(next.status)
            seen.texts["next nap"] = next.standardError
            seen.numbers["stop"] = Double(stop.wait())
            seen.texts["stop"] = (try? String(contentsOfFile: home.folder.path("stop.out.err"), encoding: .utf8)) ?? ""
            _ = holder.wait()
            let history = try home.json(["history", "--json"]) as? [String: Any]
            let outcomes = (history?["naps"] as? [[String: Any]] ?? []).compactMap { $0["outcome"] as? String }
            seen.texts["outcomes"] = outcomes.sorted().joined(separator: " ")
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen["interrupted"])
        #expect(seen["locked"])
        #expect(seen["kept"], "\(seen.texts)")
        #expect(seen.numbers["next nap"] == 0, "a nap started while stop waited for the database runs: \(seen.texts)")
        #expect(seen.numbers["stop"] == 0, "\(seen.texts)")
        #expect(seen.texts["stop"]?.contains("forgotten") == true, "\(seen.texts)")
        #expect(seen.texts["outcomes"] == "interrupted ring_limit", "each nap recorded once: \(seen.texts)")
    }

    /// Two saves of one preset at once each keep what the other changed: `presets save` reads the
    /// preset it changes in the transaction that writes it. Here the other save is an sqlite3 shell
    /// that holds the write lock with its change (volume 60) while `presets save power --nap 15m`
    /// starts, then commits: the nap's save waits for it and keeps its volume (it read the preset
    /// before the lock and wrote its older copy over the change).
    @Test func twoSavesOfOnePresetAtOnceKeepBothChanges() async throws {
        let seen = try await script { home, seen in
            seen.numbers["first save"] = Double(try home.run(["presets", "save", "power", "--nap", "10m", "--max", "40m"]).status)
            let script = """
                BEGIN IMMEDIATE;
                INSERT INTO presetValues (preset, key, position, value) VALUES ('power', 'volume', 0, '60');
                .print locked
                .shell sleep 1.5
                COMMIT;

                """
            let holder = try BackgroundProcess(executableInPath("sh"), ["-c", "printf '%s' \"$0\" | sqlite3 '\(home.database)'", script],
                                               environment: home.environment, standardOutput: home.folder.path("holder.out"),
                                               standardError: home.folder.path("holder.err"))
            seen.steps["locked"] = waitFor(.seconds(10)) { ((try? String(contentsOfFile: home.folder.path("holder.out"), encoding: .utf8)) ?? "").contains("locked") }
            let save = try home.run(["presets", "save", "power", "--nap", "15m"])
            seen.numbers["save"] = Double(save.status)
            seen.texts["save"] = save.standardError
            seen.numbers["holder"] = Double(holder.wait())
            seen.texts["holder"] = (try? String(contentsOfFile: home.folder.path("holder.err"), encoding: .utf8)) ?? ""
            let values = (try home.json(["presets", "show", "power", "--json"]) as? [String: Any])?["values"] as? [String: Any]
            seen.texts["nap"] = "\(values?["nap"] ?? "none")"
            seen.texts["volume"] = "\(values?["volume"] ?? "none")"
            seen.texts["max"] = "\(values?["max"] ?? "none")"
        }
        #expect(seen.numbers["first save"] == 0)
        #expect(seen["locked"], "\(seen.texts)")
        #expect(seen.numbers["save"] == 0, "\(seen.texts)")
        #expect(seen.numbers["holder"] == 0, "\(seen.texts)")
        #expect(seen.texts["nap"] == "15m", "\(seen.texts)")
        #expect(seen.texts["max"] == "40m", "\(seen.texts)")
        #expect(seen.texts["volume"] == "60", "the other save's change is kept: \(seen.texts)")
    }

    /// Five commands at once on a new database (so its first opening too): saving presets, reading
    /// the history and importing sounds. None fails and nothing is lost.
    @Test func fiveCommandsAtOnceAllSucceed() async throws {
        let seen = try await script { home, seen in
            var frequency = 300
            for round in 0 ..< 3 {
                var commands: [[String]] = []
                for index in 0 ..< 2 { commands.append(["presets", "save", "p\(round)-\(index)", "--nap", "\(round * 2 + index + 1)m"]) }
                commands.append(["history", "--json"])
                for index in 0 ..< 2 {
                    let sound = home.folder.path("tone-\(round)-\(index).wav")
                    frequency += 50
                    _ = try runTool("sox", ["-n", "-b", "16", "-r", "44100", sound, "synth", "0.3", "sine", "\(frequency)"])
                    commands.append(["sounds", "import", sound, "--name", "tone-\(round)-\(index)"])
                }
                let running = try commands.enumerated().map { number, arguments in
                    try home.launch(arguments, events: "round-\(round)-\(number).out")
                }
                for (number, process) in running.enumerated() {
                    let status = process.wait()
                    if status != 0 {
                        let errors = (try? String(contentsOfFile: home.folder.path("round-\(round)-\(number).out.err"), encoding: .utf8)) ?? ""
                        seen.texts["failed \(round)-\(number)"] = "\(commands[number]) exited \(status): \(errors)"
                    }
                }
            }
            let presets = try home.json(["presets", "list", "--json"]) as? [[String: Any]] ?? []
            seen.texts["presets"] = presets.compactMap { $0["name"] as? String }.sorted().joined(separator: " ")
            let sounds = try home.json(["sounds", "list", "--json"])
            let names = ((sounds as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.filter { $0.hasPrefix("tone-") }
            seen.texts["sounds"] = names.sorted().joined(separator: " ")
        }
        #expect(seen.texts.keys.filter { $0.hasPrefix("failed") }.isEmpty, "\(seen.texts)")
        #expect(seen.texts["presets"] == "basic p0-0 p0-1 p1-0 p1-1 p2-0 p2-1 quick-test", "\(seen.texts)")
        #expect(seen.texts["sounds"] == "tone-0-0 tone-0-1 tone-1-0 tone-1-1 tone-2-0 tone-2-1", "\(seen.texts)")
    }
}

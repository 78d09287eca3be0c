import Foundation
import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

/// A test plugin for each way a plugin can attack its host (issue 12): `plugins list` and `plugins
/// check` finish within their limits with a precise verdict, a nap naming any plugin (the attacker
/// included) still rings its alarm at its deadline with the problem in its events, and no plugin
/// process is left afterwards (`pgrep -P` while it runs, /proc after).
@Suite("Plugin attacks: list, check and nap survive each", .serialized)
struct PluginAttackTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    /// The attackers: a file name, the test plugin's defines, and its id.
    struct Attacker: Sendable, CustomTestStringConvertible {
        var name: String
        var defines: [String]
        var id: String { name == "impostor" ? "org.snoozefuse.tone" : "org.test.\(name)" }
        var testDescription: String { name }

        static let constructorExits = Attacker(name: "ctor-exit", defines: ["CTOR_EXIT"])
        static let constructorCrashes = Attacker(name: "ctor-crash", defines: ["CTOR_CRASH"])
        static let entryHangs = Attacker(name: "entry-hang", defines: ["ENTRY_HANG"])
        static let renderLoops = Attacker(name: "render-loop", defines: ["RENDER_LOOP"])
        static let renderSleeps = Attacker(name: "render-sleep", defines: ["RENDER_SLEEP_MS=5000"])
        static let activateExits = Attacker(name: "activate-exit", defines: ["ACTIVATE_EXIT"])
        static let createExits = Attacker(name: "create-exit", defines: ["EMITTER", "CREATE_EXIT"])
        static let emitHangs = Attacker(name: "emit-hang", defines: ["EMITTER", "EMIT_BLOCK_MS=30000"])
        static let impostor = Attacker(name: "impostor", defines: [])

        static let all: [Attacker] = [
            constructorExits, constructorCrashes, entryHangs, renderLoops, renderSleeps, activateExits, createExits, emitHangs, impostor,
        ]
    }

    /// The pids a detaching attacker wrote into `file` (TEST_DETACHED_PID_FILE), one a line.
    static func detachedPIDs(_ file: String) -> [Int32] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Builds `attackers` into `folder`; returns each one's path.
    @discardableResult
    func build(_ attackers: [Attacker], in folder: PluginFolder) throws -> [String: String] {
        var paths: [String: String] = [:]
        for attacker in attackers {
            paths[attacker.name] = try folder.buildC("\(attacker.name).so", defines: attacker.defines + ["PLUGIN_ID=\"\(attacker.id)\""])
        }
        return paths
    }

    /// No process mentions the folder any more (the scanner, serving and checking children name their file).
    func expectNoPluginProcessLeft(_ folder: PluginFolder, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(processes(mentioning: folder.path).isEmpty, "left after \(what): \(processes(mentioning: folder.path))",
                sourceLocation: sourceLocation)
    }

    @Test func listRefusesEveryAttackerWithItsReasonWithinTheLoadLimit() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let cache = try TemporaryFolder()
        let paths = try build(Attacker.all, in: folder)
        let run = try runWatchingChildren(snoozefuse, ["plugins", "list", "--json"], environment: pluginEnvironment(folder, cache: cache))
        #expect(run.status == 0, "\(run.output)")
        // One file hangs: 2 s for it; the rest is quick. Generous room for a busy machine.
        #expect(run.seconds < 12, "plugins list took \(run.seconds) s")
        #expect(run.childrenSeen.allSatisfy { $0.contains(PluginHostProgram.name + " scan") }, "\(run.childrenSeen)")
        #expect(run.endedChildrenSeen.allSatisfy { $0 == String(PluginHostProgram.name.prefix(15)) }, "\(run.endedChildrenSeen)")
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        let problems = try #require(listing["problems"] as? [[String: Any]])
        func problem(_ attacker: Attacker) -> String? {
            problems.first { $0["path"] as? String == paths[attacker.name] }?["message"] as? String
        }
        #expect(problem(.constructorExits)?.contains("loading it ended the process that loaded it (exited with status 0)") == true, "\(problems)")
        #expect(problem(.constructorCrashes)?.contains("loading it ended the process that loaded it (killed by signal 11") == true, "\(problems)")
        #expect(problem(.entryHangs)?.contains("loading it did not finish within 2000 ms") == true, "\(problems)")
        #expect(problem(.impostor)?.contains("its id org.snoozefuse.tone uses the prefix org.snoozefuse., which is reserved") == true, "\(problems)")
        let plugins = try #require(listing["plugins"] as? [[String: Any]])
        // The attacks that wait for an instance load fine; the real tone is the one listed.
        for attacker in [Attacker.renderLoops, .renderSleeps, .activateExits, .createExits, .emitHangs] {
            #expect(plugins.contains { $0["id"] as? String == attacker.id }, "\(attacker.name): \(plugins)")
        }
        #expect(plugins.first { $0["id"] as? String == "org.snoozefuse.tone" }?["path"] as? String != paths["impostor"])
        expectNoPluginProcessLeft(folder, "plugins list")
    }

    /// Each attack, a check it fails and how it says so, and how many checks fail in all (a render
    /// that never returns fails both render checks and the watched one; the impostor fails its id
    /// check, as a nap refuses it).
    static let checkVerdicts: [(Attacker, String, PluginCheckVerdict, String, Int)] = [
        (.constructorExits, "load", .fail, "the checking process ended while loading it (dlopen, its constructors, snoozefuse_plugin_entry): exited with status 0", 1),
        (.constructorCrashes, "load", .fail, "the plugin crashed the checking process: killed by signal 11", 1),
        (.entryHangs, "load", .fail, "loading it did not finish within 2000 ms (killed)", 1),
        (.renderLoops, "source-render-48000-stereo", .fail, "10 s of audio were not rendered within 1000 ms (killed after 0 frames)", 3),
        (.renderSleeps, "source-render-44100-mono", .fail, "10 s of audio were not rendered within 1000 ms (killed after 0 frames)", 3),
        (.activateExits, "source-create", .fail, "the checking process ended while creating and activating the instance: exited with status 0", 1),
        (.createExits, "emitter-create", .fail, "the checking process ended while creating and activating the instance: exited with status 0", 1),
        (.emitHangs, "emitter-emit", .fail, "did not return within 1000 ms", 1),
        (.impostor, "id", .fail, "its id org.snoozefuse.tone uses the prefix org.snoozefuse., which is reserved", 1),
    ]

    @Test(arguments: checkVerdicts.indices)
    func checkFailsTheRightCheckWithinItsLimits(_ index: Int) throws {
        let (attacker, name, verdict, text, failures) = Self.checkVerdicts[index]
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try #require(try build([attacker], in: folder)[attacker.name])
        let run = try runWatchingChildren(snoozefuse, ["plugins", "check", path, "--json"], environment: ProcessInfo.processInfo.environment)
        #expect(run.status == (verdict == .fail ? 65 : 0), "\(attacker.name): \(run.output)")
        // Every check of a source stops within its steps' limits: at most four children, each
        // killed within 2 s + 1 s + 1 s of its start. Generous room for a busy machine.
        #expect(run.seconds < 30, "\(attacker.name): plugins check took \(run.seconds) s")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        let checks = try #require(report["checks"] as? [[String: Any]])
        let check = try #require(checks.first { $0["name"] as? String == name }, "\(attacker.name): no check \(name) in \(run.output)")
        #expect(check["verdict"] as? String == verdict.rawValue, "\(attacker.name): \(check)")
        #expect((check["summary"] as? String)?.contains(text) == true, "\(attacker.name): \(check)")
        #expect(report["failed"] as? Int == failures, "\(attacker.name): \(run.output)")
        #expect(run.childrenSeen.allSatisfy { $0.contains(PluginHostProgram.name + " check") }, "\(run.childrenSeen)")
        #expect(run.endedChildrenSeen.allSatisfy { $0 == String(PluginHostProgram.name.prefix(15)) }, "\(run.endedChildrenSeen)")
        expectNoPluginProcessLeft(folder, "plugins check \(attacker.name)")
    }

    /// A short nap on the null device: the alarm at 1 s, ringing for `ring` seconds.
    func nap(_ plugins: [String], folder: PluginFolder, ring: Int = 4) throws -> (run: WatchedRun, events: [[String: Any]]) {
        let cache = try TemporaryFolder()
        let run = try runWatchingChildren(snoozefuse, [
            "nap", "--no-hold", "--preset", "quick-test", "--release", "0", "--nap", "1", "--ring-limit", "\(ring)",
            "--device", "null", "--events", "jsonl", "--quiet",
        ] + plugins, environment: pluginEnvironment(folder, cache: cache))
        return (run, jsonLines(run.output))
    }

    /// The nap rang at its deadline (1 s after the start) and rang until its limit.
    func expectRangAtTheDeadline(_ events: [[String: Any]], _ output: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let ringing = events.first { $0["event"] as? String == "phase" && $0["phase"] as? String == "ringing" }
        // The phase record is stamped when the loop handles the deadline: within a few ms of it.
        #expect((ringing?["t"] as? Double).map { abs($0 - 1) < 0.05 } == true, "\(output)", sourceLocation: sourceLocation)
        let alarm = events.first { $0["event"] as? String == "alarm" }
        #expect((alarm?["lateness_ms"] as? Double).map { $0 < 500 } == true, "\(output)", sourceLocation: sourceLocation)
        #expect(events.last?["outcome"] as? String == "ring_limit", "\(output)", sourceLocation: sourceLocation)
    }

    func warnings(_ events: [[String: Any]]) -> [String] {
        events.filter { $0["event"] as? String == "warning" }.compactMap { $0["message"] as? String }
    }

    @Test func aNapNamingBuiltInsRingsWhileAttackersThatBreakLoadingAreInstalled() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let paths = try build([.constructorExits, .constructorCrashes, .entryHangs, .impostor], in: folder)
        let (run, events) = try nap(["--source", "tone", "--sleep-sound", "noise"], folder: folder, ring: 2)
        #expect(run.status == 0, "\(run.output)")
        expectRangAtTheDeadline(events, run.output)
        let said = warnings(events)
        // Files the scan refused are said where they matter: `plugins list`, `doctor`, and a nap
        // that names a plugin it cannot find. This nap names none of them (on main it said each).
        for name in ["ctor-exit", "ctor-crash", "entry-hang"] {
            let path = try #require(paths[name])
            #expect(!said.contains { $0.contains(path) }, "\(name): \(said)")
        }
        // --source tone is the built-in; the impostor of its id is named.
        #expect(said.contains { $0.contains("--source tone is org.snoozefuse.tone from") && $0.contains(paths["impostor"]!) && $0.contains("reserved") },
                "\(said)")
        #expect(run.childrenSeen.contains { $0.contains("serve source") && $0.contains("libsnoozefuse-tone.so") }, "\(run.childrenSeen)")
        #expect(!run.childrenSeen.contains { $0.contains("serve") && $0.contains(folder.path) }, "\(run.childrenSeen)")
        // A nap naming a plugin that is not installed lists the files that could not be read (one may be it).
        let missing = try nap(["--source", "org.test.ctor-exit"], folder: folder, ring: 1).run
        #expect(missing.status == 66, "\(missing.output)")
        for (name, reason) in [("ctor-exit", "exited with status 0"), ("ctor-crash", "killed by signal 11"),
                               ("entry-hang", "did not finish within 2000 ms")] {
            let path = try #require(paths[name])
            #expect(missing.output.split(separator: "\n").contains {
                $0.contains("--source org.test.ctor-exit: a plugin file that could not be read may be it: ") && $0.contains(path) && $0.contains(reason)
            }, "\(name): \(missing.output)")
        }
        expectNoPluginProcessLeft(folder, "the nap")
    }

    @Test(arguments: [Attacker.renderLoops, .renderSleeps])
    func aSourceWhoseRenderStopsIsReportedHungKilledAndReplacedByTheBuiltInTone(_ attacker: Attacker) throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try build([attacker], in: folder)
        let (run, events) = try nap(["--source", attacker.id], folder: folder)
        #expect(run.status == 0, "\(run.output)")
        expectRangAtTheDeadline(events, run.output)
        let hung = try #require(warnings(events).first { $0.contains("sound-source plugin \(attacker.id) stopped (hung:") }, "\(run.output)")
        #expect(hung.contains("killed"), "\(hung)")
        #expect(hung.contains("the alarm plays the built-in tone instead"), "\(hung)")
        // The frames the host filled are counted: about the budget's second at 48 kHz.
        let filled = try #require(hung.firstMatch(of: /\((\d+) frames, [0-9.]+ s, were filled with the built-in tone\)/), "\(hung)")
        #expect(Int(filled.1).map { $0 >= 24_000 } == true, "\(hung)")
        #expect(run.childrenSeen.contains { $0.contains("serve source") && $0.contains(folder.path) }, "\(run.childrenSeen)")
        expectNoPluginProcessLeft(folder, "the nap")
    }

    @Test func instancesThatEndTheProcessWhenCreatedAreReportedAndTheNapRings() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try build([.activateExits, .createExits], in: folder)
        let (run, events) = try nap(["--source", Attacker.activateExits.id, "--emitter", Attacker.createExits.id], folder: folder, ring: 2)
        #expect(run.status == 0, "\(run.output)")
        expectRangAtTheDeadline(events, run.output)
        let said = warnings(events)
        for attacker in [Attacker.activateExits, .createExits] {
            #expect(said.contains { $0.contains("checking plugin \(attacker.id) with this configuration failed")
                && $0.contains("its process ended before it answered (exited with status 0)") }, "\(attacker.name): \(said)")
        }
        #expect(said.contains { $0.contains("sound-source plugin \(Attacker.activateExits.id) stopped (exited with status 0)") }, "\(said)")
        #expect(said.contains { $0.contains("plugin \(Attacker.createExits.id) stopped: exited with status 0") }, "\(said)")
        expectNoPluginProcessLeft(folder, "the nap")
    }

    /// A plugin that detaches a process in `activate` (a double fork and `setsid`, which leaves its
    /// process group), also with an empty environment, which no mark can follow: `plugins check`
    /// fails it and names what it left, and neither the check nor a nap leaves it running. On main
    /// it passed every check, and its sleepers outlived both; with an empty environment (issue 40)
    /// it passed all 7 checks and outlived the check and the nap.
    @Test(arguments: [Attacker(name: "detach", defines: ["ACTIVATE_DETACH"]),
                      Attacker(name: "detach-bare", defines: ["ACTIVATE_DETACH", "DETACH_EMPTY_ENVIRONMENT"])])
    func aPluginThatDetachesAProcessFailsItsCheckAndLeavesNothingRunning(_ attacker: Attacker) async throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try #require(try build([attacker], in: folder)[attacker.name])
        let pids = folder.path + "/detached.pids"
        @Sendable func detached() -> [Int32] { Self.detachedPIDs(pids) }
        defer { for pid in detached() where isRunning(pid) { kill(pid, SIGKILL) } }
        var checkEnvironment = ProcessInfo.processInfo.environment
        checkEnvironment["TEST_DETACHED_PID_FILE"] = pids
        var napEnvironment = pluginEnvironment(folder, cache: try TemporaryFolder())
        napEnvironment["TEST_DETACHED_PID_FILE"] = pids
        // The check and the nap take seconds each: on a thread of their own, never on the pool
        // that the other tests' tasks run on.
        let (check, afterCheck, nap, afterNap) = try await onOwnThread { [checkEnvironment, napEnvironment] in
            let check = try runWatchingChildren(snoozefuse, ["plugins", "check", path, "--json"], environment: checkEnvironment)
            let afterCheck = detached()
            let afterCheckRunning = afterCheck.filter(isRunning)
            // A nap with it as the source: whatever it detached ends with its instance.
            let nap = try runWatchingChildren(snoozefuse, [
                "nap", "--no-hold", "--preset", "quick-test", "--release", "0", "--nap", "1", "--ring-limit", "2",
                "--device", "null", "--events", "jsonl", "--quiet", "--source", attacker.id,
            ], environment: napEnvironment)
            let afterNap = detached().filter { !afterCheck.contains($0) }
            return (check, (afterCheck, afterCheckRunning), nap, (afterNap, afterNap.filter(isRunning)))
        }
        #expect(check.status == 65, "\(check.output)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(check.output.utf8)) as? [String: Any], "\(check.output)")
        let checks = report["checks"] as? [[String: Any]] ?? []
        let failing = checks.filter { $0["verdict"] as? String == "fail" }.compactMap { $0["summary"] as? String }
        #expect(!failing.isEmpty && failing.allSatisfy { $0.contains("behind when the instance ended (sleep, pid ") && $0.contains("killed): a plugin must end every process it starts") },
                "\(failing)")
        #expect(!afterCheck.0.isEmpty, "the plugin detached nothing: \(check.output)")
        #expect(afterCheck.1.isEmpty, "left running after plugins check: \(afterCheck.1)")
        #expect(nap.status == 0, "\(nap.output)")
        #expect(!afterNap.0.isEmpty, "the nap's instance detached nothing: \(nap.output)")
        #expect(afterNap.1.isEmpty, "left running after the nap: \(afterNap.1)")
        expectNoPluginProcessLeft(folder, "the nap")
    }

    /// A source that detaches a process with an empty environment (no mark follows it) and then
    /// hangs in `render`: the nap kills its host as hung, and what it detached goes with it, not
    /// at the nap's end nor after (the host was SIGKILLed at once: its subreaper never ran, the
    /// sleeper came to the nap unmarked and outlived it). Now the host gets SIGTERM first, which
    /// its own thread answers by ending what its plugin left, and SIGKILL 0.5 s later.
    @Test func aHungSourceKilledByTheNapTakesWhatItDetachedWithIt() async throws {
        let attacker = Attacker(name: "detach-hang", defines: ["ACTIVATE_DETACH", "DETACH_EMPTY_ENVIRONMENT", "RENDER_LOOP"])
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        _ = try #require(try build([attacker], in: folder)[attacker.name])
        let pids = folder.path + "/detached.pids"
        @Sendable func detached() -> [Int32] { Self.detachedPIDs(pids) }
        defer { for pid in detached() where isRunning(pid) { kill(pid, SIGKILL) } }
        var environment = pluginEnvironment(folder, cache: try TemporaryFolder())
        environment["TEST_DETACHED_PID_FILE"] = pids
        let (nap, left) = try await onOwnThread { [environment] in
            let nap = try runWatchingChildren(snoozefuse, [
                "nap", "--no-hold", "--preset", "quick-test", "--release", "0", "--nap", "1", "--ring-limit", "6",
                "--device", "null", "--events", "jsonl", "--quiet", "--source", attacker.id,
            ], environment: environment)
            return (nap, detached().filter(isRunning))
        }
        #expect(nap.status == 0, "\(nap.output)")
        #expect(nap.output.contains("plugin \(attacker.id) stopped (hung: it produced no audio"), "\(nap.output)")
        #expect(!detached().isEmpty, "the plugin detached nothing: \(nap.output)")
        #expect(left.isEmpty, "left running after its host was killed as hung: \(left)")
        expectNoPluginProcessLeft(folder, "the nap")
    }

    /// A source that writes 4 MB to standard error and logs 15 warnings in `activate`: what it
    /// writes goes to `plugins.log` in the state folder, 64 KiB of it and a line saying how much
    /// was dropped; its first ten warnings are the nap's warnings, then one line says where the
    /// rest is. On main all of it reached the nap's standard error.
    @Test func aPluginsStandardErrorGoesToTheLogCappedAndOnlyItsFirstWarningsAreSaid() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let attacker = Attacker(name: "stderr-flood", defines: ["STDERR_FLOOD_BYTES=4000000", "LOG_WARNINGS=15"])
        try build([attacker], in: folder)
        let state = try TemporaryFolder()
        var environment = pluginEnvironment(folder, cache: try TemporaryFolder())
        environment["XDG_STATE_HOME"] = state.url.path
        let run = try runWatchingChildren(snoozefuse, [
            "nap", "--no-hold", "--preset", "quick-test", "--release", "0", "--nap", "1", "--ring-limit", "2",
            "--device", "null", "--events", "jsonl", "--quiet", "--source", attacker.id,
        ], environment: environment)
        #expect(run.status == 0, "\(run.output.prefix(2000))")
        #expect(!run.output.contains("the test plugin writes this line"), "the plugin's output reached the nap's: \(run.output.utf8.count) bytes")
        let events = jsonLines(run.output)
        expectRangAtTheDeadline(events, String(run.output.prefix(4000)))
        let logPath = state.url.path + "/snoozefuse/plugins.log"
        let said = warnings(events).filter { $0.contains(attacker.id) }
        #expect(said.filter { $0.hasPrefix("plugin \(attacker.id): warning number ") }.count == 10, "\(said)")
        #expect(said.contains { $0.contains("said more; the rest is in \(logPath)") }, "\(said)")
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        // 64 KiB of its output, each line named by the instance (about 40 bytes more a line), then
        // one line for the rest; the host's warnings have an allowance of their own, so the flood
        // before them does not push them out.
        #expect(log.utf8.count < 128 * 1024, "\(log.utf8.count) bytes in \(logPath)")
        #expect(log.contains("plugin \(attacker.id) ["), "\(log.prefix(500))")
        #expect(log.contains("]: the test plugin writes this line to standard error again and again"), "\(log.prefix(500))")
        #expect(log.contains("]: snoozefuse: warning: plugin \(attacker.id): warning number 15"), "\(log.prefix(2000))")
        let dropped = try #require(log.firstMatch(of: /wrote (\d+) bytes more than the 64 KiB an instance keeps in this log; they were dropped/), "\(log.suffix(500))")
        #expect(Int(dropped.1).map { $0 > 3_000_000 } == true, "\(dropped.0)")
        expectNoPluginProcessLeft(folder, "the nap")
    }

    /// `plugins check` of a source that writes 4 MB to standard error and logs 3 warnings in
    /// `activate`: none of it reaches the command's own output; each check that ran the plugin
    /// says how much it wrote, with its first lines and its warnings. On main every checking
    /// process wrote its 4 MB to the terminal, and the warnings were not shown at all.
    @Test func checkKeepsAPluginsStandardErrorInItsReportCapped() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let attacker = Attacker(name: "stderr-flood", defines: ["STDERR_FLOOD_BYTES=4000000", "LOG_WARNINGS=3"])
        let path = try #require(try build([attacker], in: folder)[attacker.name])
        let run = try runProcessBlocking(URL(fileURLWithPath: snoozefuse), ["plugins", "check", path, "--json"])
        #expect(run.status == 0, "\(run.standardOutput.prefix(4000)) \(run.standardError.prefix(1000))")
        #expect(!run.standardError.contains("the test plugin writes this line"), "\(run.standardError.utf8.count) bytes on standard error")
        #expect(run.standardOutput.utf8.count < 64 * 1024, "\(run.standardOutput.utf8.count) bytes of report")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput.prefix(2000))")
        let checks = try #require(report["checks"] as? [[String: Any]])
        let ran = checks.filter { ["source-create", "source-render-48000-stereo", "source-render-44100-mono", "source-realtime"].contains($0["name"] as? String) }
        #expect(ran.count == 4, "\(checks)")
        for check in ran {
            let details = check["details"] as? [String] ?? []
            let wrote = try #require(details.lazy.compactMap { $0.firstMatch(of: /it wrote (\d+) bytes to standard error/) }.first, "\(check)")
            #expect(Int(wrote.1).map { $0 >= 4_000_000 } == true, "\(wrote.0)")
            #expect(details.contains("| the test plugin writes this line to standard error again and again"), "\(check)")
            #expect(details.contains("| snoozefuse: warning: plugin \(attacker.id): warning number 3"), "\(check)")
            // Its own (at most 3), the count, 5 lines of the plugin's and 5 of the host's warnings.
            #expect(details.count <= 14, "\(details.count) details: \(details.prefix(20))")
        }
        expectNoPluginProcessLeft(folder, "plugins check")
    }

    @Test func anEmitterWhoseEmitNeverReturnsIsReportedHungAndKilled() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try build([.emitHangs], in: folder)
        // Its first pulse is due back 3 s (start-up) + 0.25 s + 1 s after the start: ring past that.
        let (run, events) = try nap(["--emitter", Attacker.emitHangs.id], folder: folder, ring: 6)
        #expect(run.status == 0, "\(run.output)")
        expectRangAtTheDeadline(events, run.output)
        let hung = try #require(warnings(events).first { $0.contains("plugin \(Attacker.emitHangs.id) stopped: hung:") }, "\(run.output)")
        #expect(hung.contains("its emit of pulse 1 (250 ms long) had not returned"), "\(hung)")
        #expect(hung.contains("killed"), "\(hung)")
        expectNoPluginProcessLeft(folder, "the nap")
    }
}

/// The validator's real-time check (`source-realtime`): every system call and `malloc` that
/// `render` makes is reported; the built-in sources make none.
@Suite("plugins check: what render does besides rendering")
struct RenderRealTimeTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    /// The `source-realtime` check of `plugins check PATH --json`: its verdict and summary.
    func realtime(_ path: String) throws -> (verdict: String?, summary: String, output: String) {
        let run = try runMergingOutput(snoozefuse, ["plugins", "check", path, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        let check = (report?["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "source-realtime" }
        return (check?["verdict"] as? String, check?["summary"] as? String ?? "", run.output)
    }

    @Test(arguments: [("RENDER_WRITE", "system calls: write ×"), ("RENDER_MALLOC", "render called malloc")])
    func aRenderThatWritesOrAllocatesIsFlaggedNamingWhatItDid(_ define: String, _ expected: String) throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("\(define.lowercased()).so", defines: [define, "PLUGIN_ID=\"org.test.\(define.lowercased().replacingOccurrences(of: "_", with: "-"))\""])
        let check = try realtime(path)
        #expect(check.verdict == "fail", "\(check.output)")
        #expect(check.summary.contains(expected), "\(check.summary)")
    }

    @Test(arguments: ["tone", "noise"])
    func theBuiltInSourcesMakeNoSystemCallAndAllocateNothing(_ name: String) throws {
        let path = BuiltProducts.folder.appendingPathComponent("libsnoozefuse-\(name).so").path
        let check = try realtime(path)
        #expect(check.verdict == "pass", "\(check.output)")
        #expect(check.summary.contains("made no system call and allocated nothing"), "\(check.summary)")
    }
}

/// The plugins installed with snoozefuse pass its own validator; an emitter that needs a key is
/// skipped, naming the key, until `--config` gives it, and then passes.
@Suite("plugins check on the built-in plugins")
struct BuiltInValidationTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    func report(_ name: String, _ extra: [String] = []) throws -> [String: Any] {
        let path = BuiltProducts.folder.appendingPathComponent("libsnoozefuse-\(name).so").path
        let run = try runMergingOutput(snoozefuse, ["plugins", "check", path, "--json"] + extra)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        // 0 when every check ran and passed; 3 when none failed but some were skipped.
        #expect(run.status == ((report["skipped"] as? Int ?? 0) > 0 ? 3 : 0), "\(name): \(run.output)")
        return report
    }

    @Test(arguments: ["tone", "noise", "terminal", "command", "led", "rumble"])
    func eachBuiltInPassesItsOwnValidator(_ name: String) throws {
        let report = try report(name)
        #expect(report["failed"] as? Int == 0, "\(name): \(report)")
        let checks = report["checks"] as? [[String: Any]] ?? []
        #expect(checks.contains { $0["name"] as? String == "load" && $0["verdict"] as? String == "pass" }, "\(checks)")
    }

    @Test func anEmitterThatNeedsAKeyIsSkippedNamingItThenPassesWithIt() throws {
        let without = try report("command")
        let create = (without["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "emitter-create" }
        #expect(create?["verdict"] as? String == "skip", "\(without)")
        #expect((create?["summary"] as? String)?.contains("run=COMMAND") == true, "\(String(describing: create))")
        #expect(without["skipped"] as? Int == 2 && without["failed"] as? Int == 0)
        let with = try report("command", ["--config", "run=true"])
        #expect(with["skipped"] as? Int == 0 && with["failed"] as? Int == 0, "\(with)")
        let emit = (with["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "emitter-emit" }
        #expect(emit?["verdict"] as? String == "pass", "\(with)")
    }
}

/// The render checks judge the plugin, not how busy the machine is: the time the checking process
/// waited for a CPU is not counted (a whole run of the suite once failed the tone when its other
/// tests took both CPUs), while a render that sleeps is killed at its limit as on an idle machine.
/// The check runs on one CPU beside eight processes that spin there, all at nice 19 (the other
/// suites' processes go first): each gets about a ninth of it.
@Suite("plugins check on a busy machine", .serialized)
struct BusyMachineValidationTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    func checkOnABusyCPU(_ path: String) throws -> (run: (status: Int32, output: String, signalled: Bool), checks: [String: [String: Any]]) {
        let busy = try BusyCPU(spinners: 8)
        defer { busy.stop() }
        let run = try runMergingOutput(busy.prefix[0], Array(busy.prefix.dropFirst()) + [snoozefuse, "plugins", "check", path, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        var checks: [String: [String: Any]] = [:]
        for check in report?["checks"] as? [[String: Any]] ?? [] {
            if let name = check["name"] as? String { checks[name] = check }
        }
        return (run, checks)
    }

    @Test func theToneStillPassesItsRenderChecksAndSaysHowLongItWaited() throws {
        let (run, checks) = try checkOnABusyCPU(BuiltProducts.folder.appendingPathComponent("libsnoozefuse-tone.so").path)
        #expect(run.status == 0, "\(run.output)")
        for name in ["source-render-48000-stereo", "source-render-44100-mono"] {
            #expect(checks[name]?["verdict"] as? String == "pass", "\(name): \(run.output)")
            // The CPU was shared nine ways: its wait was long enough to be named.
            #expect((checks[name]?["summary"] as? String)?.contains("ms waiting for a CPU, not counted), peak 0.80") == true, "\(name): \(run.output)")
        }
    }

    /// Each render call sleeps 40 ms: killed at its limit (1 s and the 250 ms grace), it has rendered
    /// under a second of audio in both formats ("after 0 frames"); had the busy machine's allowance
    /// let it run to 8 times the limit, it would have rendered several seconds.
    @Test func aRenderThatSleepsIsStillKilledAtItsLimit() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("render-sleep.so", defines: ["RENDER_SLEEP_MS=40", "PLUGIN_ID=\"org.test.render-sleep\""])
        let (run, checks) = try checkOnABusyCPU(path)
        #expect(run.status == 65, "\(run.output)")
        for name in ["source-render-48000-stereo", "source-render-44100-mono"] {
            #expect(checks[name]?["verdict"] as? String == "fail", "\(name): \(run.output)")
            #expect((checks[name]?["summary"] as? String)?.contains("10 s of audio were not rendered within 1000 ms (killed after 0 frames)") == true,
                    "\(name): \(run.output)")
        }
    }
}

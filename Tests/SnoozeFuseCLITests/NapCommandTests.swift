import Foundation
import Glibc
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

let snoozefuse = BuiltProducts.executable("snoozefuse")

/// A decoded `--events jsonl` line.
struct EventLine: Decodable {
    var event: String
    var phase: String?
    var t: Double
    var wall: String
    var outcome: String?
    var reason: String?
    var lateness_ms: Double?
    var output: String?
    var message: String?
}

@Suite("snoozefuse nap (the built binary)")
struct NapCommandTests {
    @Test func quickTestNapRunsOnTimeAndExitsZero() async throws {
        // The `null` PCM opens on every machine, with or without a sound card: the test never
        // depends on (or plays through) real speakers.
        let result = try await runProcess(snoozefuse, ["nap", "--preset", "quick-test", "--no-hold", "--ring-limit", "3s", "--events", "jsonl", "--device", "null"])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let events = try result.outputLines.map { try JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
        let phases = events.filter { $0.event == "phase" }
        #expect(phases.map(\.phase) == ["releasing", "napping", "ringing", "finished"])
        // Real time: 100 ms of tolerance (the exact logic is covered on the manual clock).
        for (phase, expected) in zip(phases, [0.0, 2.0, 7.0, 10.0]) {
            #expect(abs(phase.t - expected) <= 0.1, "\(phase.phase ?? "?") at t=\(phase.t), expected \(expected)")
        }
        let alarm = try #require(events.first { $0.event == "alarm" })
        #expect(alarm.reason == "nap")
        #expect(alarm.lateness_ms != nil)
        let end = try #require(events.last)
        #expect(end.event == "end")
        #expect(end.outcome == "ring_limit")
        #expect(abs(end.t - 10) <= 0.1)
        // In the order written, `t` never goes back (the alarm stopping as its ring limit ends came
        // before the end's phase, stamped a millisecond earlier at its deadline).
        for (earlier, later) in zip(events, events.dropFirst()) {
            #expect(later.t >= earlier.t, "\(later.event) at t=\(later.t) after \(earlier.event) at t=\(earlier.t)")
        }
        #expect(events.contains { $0.event == "alarm_stopped" }, "the ring limit's stop is among them")
        // Every line carries an ISO 8601 wall time.
        let wallFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for event in events { #expect((try? wallFormat.parse(event.wall)) != nil, "wall \(event.wall)") }
        #expect(alarm.output == "ALSA null")
        // Data on stdout (every line decoded as JSON above), messages on stderr.
        #expect(result.standardError.contains("quick-test"))
    }

    @Test func maxShorterThanReleasePlusNapIsSaidOnceAndTheAlarmRingsAtMax() async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "1", "--nap", "10", "--max", "2", "--ring-limit", "1", "--events", "jsonl", "--quiet", "--device", "null"])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        #expect(result.standardError.components(separatedBy: "max 2s is shorter than release + nap (11s)").count == 2)
        let events = try result.outputLines.map { try JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
        let alarm = try #require(events.first { $0.event == "alarm" })
        #expect(alarm.reason == "max")
        #expect(abs(alarm.t - 2) <= 0.1)
    }

    @Test func sigintCancelsWithExit130() async throws {
        let (environment, stateFolder) = try isolatingNapState(nil)
        defer { withExtendedLifetime(stateFolder) {} }
        let process = Process()
        process.executableURL = snoozefuse
        process.arguments = ["nap", "--no-hold", "--events", "jsonl", "--quiet"]
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Wait for the first event: the session has started and its signal handling is in place.
        let firstLine = output.fileHandleForReading.availableLine()
        #expect(firstLine?.contains("\"releasing\"") == true)
        process.interrupt()
        let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(rest.contains("\"outcome\":\"cancelled\""))
    }

    @Test("bad durations exit 64 naming the flag and the accepted forms", arguments: [
        ["--release", "soon"], ["--nap=-5m"], ["--max", "99h"], ["--ring-limit", "1.5m"], ["--nap", ""],
    ])
    func badDurations(arguments: [String]) async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold"] + arguments)
        #expect(result.status == 64)
        let flag = String(arguments[0].prefix { $0 != "=" })
        #expect(result.standardError.contains(flag), "names the flag: \(result.standardError)")
        #expect(result.standardError.contains("90s, 20m, 1h30m, 1h 30m, 25:00"), "shows the accepted forms: \(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test("a negative duration after a space is refused as negative, not as a missing value",
          arguments: [["--nap", "-5"], ["--release", "-1m"], ["--max", "-00:30"], ["--snooze", "-5m"]])
    func negativeDurationsAfterASpace(arguments: [String]) async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--dry-run"] + arguments)
        #expect(result.status == 64)
        #expect(result.standardError.contains("\"\(arguments[1])\" is negative; durations count forward"), "\(result.standardError)")
        #expect(!result.standardError.contains("Missing value"), "\(result.standardError)")
    }

    /// A negative number after a space is the option's value, refused as out of range (`--volume
    /// -1` said "Missing value for '--volume'", naming no fix).
    @Test(arguments: [(["--volume", "-1"], "--volume must be 1–100, not -1"), (["--system-volume", "-5"], "--system-volume"),
                      (["--bpm", "-60"], "--bpm"), (["--sleep-volume", "-2"], "--sleep-volume")])
    func aNegativeNumberIsTheValueAndIsRefusedAsOutOfRange(_ arguments: [String], _ said: String) async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--dry-run"] + arguments)
        #expect(result.status == 64, "\(result.standardError)")
        #expect(result.standardError.contains(said) && result.standardError.contains("-"), "\(result.standardError)")
        #expect(!result.standardError.contains("Missing value"), "\(result.standardError)")
    }

    @Test("a nap of zero and a max shorter than release and nap are warned about, and say what happens",
          arguments: [
              (["--nap", "0"], "--nap 0: the alarm rings as soon as the release ends"),
              (["--nap", "00:00"], "--nap 0: the alarm rings as soon as the release ends"),
              (["--release", "5m", "--nap", "20m", "--max", "15m"],
               "--max 15m is shorter than release 5m + nap 20m: the failsafe rings at 15m, before the nap ends"),
          ])
    func zeroNapAndShortMaxAreWarned(arguments: [String], warning: String) async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--dry-run"] + arguments)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("snoozefuse: warning: \(warning)"), "\(result.standardError)")
        let quiet = try await runProcess(snoozefuse, ["nap", "--no-hold", "--dry-run", "--nap", "20m"])
        #expect(!quiet.standardError.contains("warning"), "\(quiet.standardError)")
    }

    @Test("bad flags and values exit 64 with a message", arguments: [
        (["--bogus"], "--bogus"),
        (["--events", "xml"], "--events"),
        (["--max", "0"], "max must be longer than zero"),
    ])
    func badFlags(arguments: [String], message: String) async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold"] + arguments)
        #expect(result.status == 64)
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }

    /// A preset that is not there is missing input, as an unknown sound is (66, as the README's
    /// table says; it was 64), with its message.
    @Test func anUnknownPresetExits66WithAMessage() async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--preset", "nope"])
        #expect(result.status == 66)
        #expect(result.standardError.contains("unknown preset \"nope\" for --preset"), "\(result.standardError)")
    }

    @Test func versionAndHelp() async throws {
        let version = try await runProcess(snoozefuse, ["--version"])
        #expect(version.status == 0)
        #expect(version.standardOutput.hasPrefix("snoozefuse "))
        let help = try await runProcess(snoozefuse, ["nap", "--help"])
        #expect(help.status == 0)
        for text in ["--release", "--no-hold", "--events", "Examples:", "quick-test"] {
            #expect(help.standardOutput.contains(text), "help mentions \(text)")
        }
    }

    /// libpulse (and the twenty libraries it loads), libsndfile, alsa-lib, libsamplerate,
    /// libsystemd, libwayland-client and SQLite are opened when a command first calls them, not by every start: the
    /// dynamic loader's own account (LD_DEBUG=libs) of commands that never play names none of them,
    /// nor SQLite while no database exists. (A nap loading them is what every nap test shows; the
    /// tests below show a library that cannot be loaded.)
    @Test(arguments: [["--version"], ["status"], ["presets", "list"]])
    func commandsThatNeverPlayLoadNoAudioOrBusLibrary(_ arguments: [String]) async throws {
        let state = try isolatingNapState(ProcessInfo.processInfo.environment)
        defer { withExtendedLifetime(state) {} }
        var environment = state.environment
        environment["LD_DEBUG"] = "libs"
        let result = try await runProcess(snoozefuse, arguments, environment: environment)
        #expect(result.status == 0, "\(result.standardError.suffix(2000))")
        #expect(result.standardError.contains("libc.so.6"), "the loader's account is there (it names what it loads)")
        for library in ["libpulse", "libsndfile", "libasound", "libsamplerate", "libsystemd", "libsqlite3", "libwayland"] {
            #expect(!result.standardError.contains(library),
                    "\(result.standardError.split(separator: "\n").filter { $0.contains(library) }.prefix(5))")
        }
    }

    /// A folder whose `file` is not a library: first on LD_LIBRARY_PATH, it stands for a library
    /// that cannot be loaded (uninstalled, damaged).
    static func brokenLibrary(_ file: String) throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix: "snoozefuse-broken-library")
        try Data("not a library\n".utf8).write(to: folder.url.appendingPathComponent(file))
        return folder
    }

    /// A nap whose alarm library cannot be loaded ends before it begins (exit 70), naming the file
    /// and the package to install, in its own words ("cannot play an alarm"): never at its alarm,
    /// nor at a first call (which would end the program).
    @Test(arguments: [("libasound.so.2", "libasound2"), ("libsndfile.so.1", "libsndfile1"), ("libsamplerate.so.0", "libsamplerate0")])
    func aNapWhoseAlarmLibraryCannotLoadEndsBeforeItBegins(_ file: String, _ package: String) async throws {
        let broken = try Self.brokenLibrary(file)
        let state = try isolatingNapState(ProcessInfo.processInfo.environment)
        defer { withExtendedLifetime(state) {} }
        var environment = state.environment
        environment["LD_LIBRARY_PATH"] = broken.url.path
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "0", "--nap", "1", "--device", "null",
                                                       "--events", "jsonl"], environment: environment)
        #expect(result.status == 70, "\(result.standardError)")
        #expect(result.standardError.contains("cannot play an alarm: cannot load \(file)") && result.standardError.contains("package \(package)"),
                "\(result.standardError)")
        #expect(!result.standardOutput.contains("\"phase\""), "no phase began: \(result.standardOutput)")
    }

    /// A nap's state of its own where `library` cannot be loaded.
    struct WithoutLibrary {
        let broken: TemporaryFolder
        let state: (environment: [String: String], folder: TemporaryFolder?)
        /// The state's environment, the broken library first on LD_LIBRARY_PATH.
        var environment: [String: String] { state.environment.merging(["LD_LIBRARY_PATH": broken.url.path]) { $1 } }

        init(_ library: String) throws {
            broken = try brokenLibrary(library)
            state = try isolatingNapState(ProcessInfo.processInfo.environment)
        }
    }

    /// A one-second nap (`--ring-limit 1s`, events on standard output) in `place`, whose library
    /// cannot be loaded: it must ring all the same.
    static func napRinging(in place: WithoutLibrary, also extra: [String: String] = [:]) async throws -> ProcessResult {
        let environment = place.environment.merging(extra) { $1 }
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "1s",
                                                       "--device", "null", "--events", "jsonl"], environment: environment)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.outputLines.contains { $0.contains("\"event\":\"alarm\"") }, "\(result.standardOutput)")
        return result
    }

    /// libsystemd (sd-bus) that cannot be loaded is a bus that is not there: the nap says so (no
    /// keep-awake) and rings as usual, where its first call would have ended the program.
    @Test func aNapWithoutALoadableLibsystemdSaysSoAndRings() async throws {
        let place = try WithoutLibrary("libsystemd.so.0")
        // A socket at the system bus's address: with none there, the nap says so without loading
        // sd-bus at all (BusKind.absence).
        let bus = place.broken.url.appendingPathComponent("system_bus_socket").path
        let listener = try UnixSocket.listen(at: bus)
        defer { close(listener) }
        let result = try await Self.napRinging(in: place, also: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(bus)"])
        #expect(result.standardOutput.contains("libsystemd.so.0 cannot be loaded") && result.standardOutput.contains("libsystemd0"),
                "\(result.standardOutput.suffix(3000)) \(result.standardError)")
    }

    /// SQLite that cannot be loaded is a database that cannot be read: the nap says so, naps without
    /// the settings and saved presets, rings, and keeps its history for later; commands that need
    /// the database say which library and what to install; with SQLite back, the nap is recorded.
    @Test func aNapWithoutALoadableSQLiteRingsAndItsHistoryWaits() async throws {
        let place = try WithoutLibrary("libsqlite3.so.0")
        let saved = try await runProcess(snoozefuse, ["config", "set", "volume", "60"], environment: place.state.environment)
        #expect(saved.status == 0, "\(saved.standardError)")
        let result = try await Self.napRinging(in: place)
        let cannotLoad = "libsqlite3.so.0: SQLite cannot be loaded"
        #expect(result.standardError.contains("your settings and saved presets are not used for this nap: \(cannotLoad)")
                    && result.standardError.contains("libsqlite3-0"), "\(result.standardError)")
        #expect(result.standardError.contains("could not be recorded in the history: \(cannotLoad)"), "\(result.standardError)")
        let presets = try await runProcess(snoozefuse, ["presets", "list"], environment: place.environment)
        #expect(presets.status == 70 && presets.standardError.contains(cannotLoad), "\(presets.status) \(presets.standardError)")
        // status writes waiting naps to the history first: without SQLite they keep waiting, said.
        let status = try await runProcess(snoozefuse, ["status"], environment: place.environment)
        #expect(status.status == 0 && status.standardOutput == "no nap\n", "\(status.status) \(status.standardOutput)")
        #expect(status.standardError.contains("ended naps still wait in") && status.standardError.contains(cannotLoad), "\(status.standardError)")
        let history = try await runProcess(snoozefuse, ["history", "--json"], environment: place.state.environment)
        let naps = (try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])?["naps"] as? [[String: Any]]
        #expect(naps?.count == 1 && naps?.first?["outcome"] as? String == "ring_limit", "\(history.standardOutput) \(history.standardError)")
    }

    /// A command whose first call of a library finds it unloadable says which and what to install
    /// (exit 70), as the dynamic loader would have refused to start it: never a crash.
    @Test func aCommandWhoseLibraryCannotLoadSaysWhichAtItsFirstCall() async throws {
        let broken = try Self.brokenLibrary("libsndfile.so.1")
        let state = try isolatingNapState(ProcessInfo.processInfo.environment)
        defer { withExtendedLifetime(state) {} }
        let wav = broken.url.appendingPathComponent("tone.wav")
        _ = try runTool("sox", ["-n", "-r", "48000", "-c", "1", wav.path, "synth", "0.1", "sine", "440"])
        var environment = state.environment
        environment["LD_LIBRARY_PATH"] = broken.url.path
        let result = try await runProcess(snoozefuse, ["sounds", "validate", wav.path], environment: environment)
        #expect(result.status == 70, "\(result.standardError)")
        #expect(result.standardError.contains("cannot load libsndfile.so.1") && result.standardError.contains("package libsndfile1"),
                "\(result.standardError)")
        // The same file with the library there.
        let good = try await runProcess(snoozefuse, ["sounds", "validate", wav.path], environment: state.environment)
        #expect(good.status == 0, "\(good.standardError)")
    }
}

extension FileHandle {
    /// Reads byte by byte up to and including the next newline; `nil` at end of file.
    func availableLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = readData(ofLength: 1)
            guard let byte = chunk.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// A nap that has fallen asleep gives back what its set-up touched (issue 23): its resident memory
/// drops well below the peak its set-up reached, and it still rings.
@Suite("A napping nap gives back its set-up's memory")
struct SetUpMemoryNapTests {
    /// VmHWM and VmRSS (KiB) of process `pid`.
    func memory(_ pid: Int32) -> (peak: Int, now: Int)? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
        }
        guard let peak = field("VmHWM"), let now = field("VmRSS") else { return nil }
        return (peak, now)
    }

    @Test func onceAsleepItsResidentMemoryFallsWellBelowItsSetUpsPeakAndItStillRings() async throws {
        let seen = try await script { home, seen in
            let capture = home.folder.path("alarm.wav")
            // The alarm 6 s ahead: a nap gives back when it is at least 5 s away.
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "6", "--max", "60", "--ring-limit", "1",
                                       "--fade-in", "0", "--device", "file:FILE=\(capture),FORMAT=wav", "--events", "jsonl", "--quiet"])
            defer {
                if !waitFor(.seconds(30), { !nap.isRunning }) { nap.signal(SIGKILL) }
            }
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" }
            // Given back just after the state says `napping`: at most 0.7 of the peak (a debug
            // build: 14 of 38 MiB; a release build without the give-back stayed at its peak).
            seen.steps["gave back"] = waitFor(.seconds(2)) {
                guard let (peak, now) = memory(nap.pid) else { return false }
                seen.numbers["peak"] = Double(peak)
                seen.numbers["now"] = Double(now)
                return now * 10 <= peak * 7
            }
            seen.steps["ended"] = waitFor(.seconds(30)) { !nap.isRunning }
            seen.numbers["rms"] = (try? recordedRMS(capture)) ?? 0
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen["gave back"], "resident \(seen.numbers["now"] ?? 0) KiB of a peak of \(seen.numbers["peak"] ?? 0) KiB; \(seen.texts)")
        #expect(seen["ended"], "\(seen.texts)")
        // The alarm rang after: what it runs came back from the page cache.
        #expect(seen.numbers["rms"] ?? 0 > 0.05, "\(seen.texts)")
    }

    /// ALSA's hooks run as the nap sets up, not at its alarm's first open: Debian's configuration
    /// (libasound2-plugins' `99-pulse.conf`) asks PulseAudio whether it runs through a library of
    /// its own and libpulse, whose pages then go back with the set-up's.
    @Test func alsaLibsHooksForTheAlarmsDeviceRunWhileTheNapSetsUp() async throws {
        try #require(FileManager.default.fileExists(atPath: "/etc/alsa/conf.d/99-pulse.conf"),
                     "Debian's ALSA configuration for PulseAudio (libasound2-plugins, in Scripts/apt-packages.txt)")
        let seen = try await script { home, seen in
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "1h", "--max", "2h", "--device", "null", "--quiet"])
            defer {
                nap.signal(SIGTERM)
                if !waitFor(.seconds(10), { !nap.isRunning }) { nap.signal(SIGKILL) }
            }
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" }
            // The hook loaded libpulse (its own library is unloaded after it) an hour before the
            // alarm's device is opened; with `--device null` nothing else of the nap loads it.
            seen.steps["hook ran"] = waitFor(.seconds(5)) { wholeProcFile("/proc/\(nap.pid)/maps").contains("/libpulse.so.0") }
            seen.steps["still napping"] = home.state()?["phase"] as? String == "napping"
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen["hook ran"])
        #expect(seen["still napping"])
    }

    /// A hook of alsa-lib's configuration that hangs (here its `load` of a FIFO nobody writes)
    /// may yet load and unload libraries: the nap does not give back then (a library mapped while
    /// `/proc/self/smaps` is read and acted on could lose the pages its loader wrote), and its
    /// alarm comes all the same once the hook is over.
    @Test func whileAlsaLibsHooksHangTheNapKeepsItsPagesAndStillRings() async throws {
        let seen = try await script { home, seen in
            let hook = try HangingALSAHook(fifo: home.folder.path("hook.fifo"), configuration: home.folder.path("alsa.conf"))
            let nap = try BackgroundProcess(BuiltProducts.executable("snoozefuse"),
                                            ["nap", "--no-hold", "--release", "0", "--nap", "8", "--max", "60", "--ring-limit", "1",
                                             "--fade-in", "0", "--device", "null", "--events", "jsonl", "--quiet"],
                                            environment: hook.environment(home.environment), standardOutput: home.folder.path("events.jsonl"),
                                            standardError: home.folder.path("events.jsonl.err"))
            defer {
                hook.release()
                if !waitFor(.seconds(30), { !nap.isRunning }) { nap.signal(SIGKILL) }
            }
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" }
            // Past the 2 s a give-back waits for the hooks, and the time one takes.
            Thread.sleep(forTimeInterval: 4)
            if let (peak, now) = memory(nap.pid) {
                seen.numbers["peak"] = Double(peak)
                seen.numbers["now"] = Double(now)
            }
            seen.steps["still napping"] = home.state()?["phase"] as? String == "napping"
            hook.release()
            seen.steps["rang"] = waitFor(.seconds(20)) {
                home.lines(home.folder.path("events.jsonl")).contains { $0["event"] as? String == "alarm" }
            }
            seen.texts["output"] = home.lines(home.folder.path("events.jsonl")).first { $0["event"] as? String == "alarm" }?["output"] as? String
            seen.steps["ended"] = waitFor(.seconds(30)) { !nap.isRunning }
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen["still napping"])
        let peak = try #require(seen.numbers["peak"]), now = try #require(seen.numbers["now"])
        #expect(now * 10 > peak * 8, "kept its pages: resident \(now) KiB of a peak of \(peak) KiB")
        #expect(seen["rang"], "\(seen.texts)")
        #expect(seen.texts["output"] == "ALSA null", "\(seen.texts)")
        #expect(seen["ended"])
    }
}

/// An alsa-lib configuration (`pcm.null` only) whose hook hangs: its `load` of a FIFO that nobody
/// writes until ``release()``.
struct HangingALSAHook {
    let fifo: String
    let configuration: String

    init(fifo: String, configuration: String) throws {
        guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.EIO) }
        try "@hooks [ { func load files [ \"\(fifo)\" ] errors false } ]\npcm.null { type null }\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        self.fifo = fifo
        self.configuration = configuration
    }

    /// `base` with alsa-lib reading this configuration.
    func environment(_ base: [String: String]) -> [String: String] {
        var environment = base
        environment["ALSA_CONFIG_PATH"] = configuration
        return environment
    }

    /// Lets the hook read an empty file and end.
    func release() {
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        if writer >= 0 { close(writer) }
    }
}

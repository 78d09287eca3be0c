import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// `sounds play` gives back what its set-up touched before its sound starts, and then what
/// alsa-lib's hooks for the device loaded (issue 23): a long preview holds only what playing runs.
@Suite("A preview gives back its set-up's memory")
struct SoundPreviewMemoryTests {
    /// The resident KiB of the code (`r-xp`) of the mappings of process `pid` whose file's name
    /// starts with `library`, and whether there is one.
    func residentCode(of pid: Int32, library: String) -> (mapped: Bool, kib: Int) {
        var mapped = false, kib = 0, inside = false
        for line in wholeProcFile("/proc/\(pid)/smaps").split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), !first.hasSuffix(":") {
                let name = fields.count > 5 ? fields[5].split(separator: "/").last.map(String.init) ?? "" : ""
                inside = name.hasPrefix(library)
                if inside { mapped = true }
                inside = inside && fields[1] == "r-xp"
            } else if inside, fields.first == "Rss:", fields.count > 1 {
                kib += Int(fields[1]) ?? 0
            }
        }
        return (mapped, kib)
    }

    @Test func whileItPlaysTheCodeAlsaLibsPulseHookRanIsNoLongerResident() async throws {
        try #require(FileManager.default.fileExists(atPath: "/etc/alsa/conf.d/99-pulse.conf"),
                     "Debian's ALSA configuration for PulseAudio (libasound2-plugins, in Scripts/apt-packages.txt)")
        let seen = try await script { home, seen in
            let preview = try home.launch(["sounds", "play", "chime", "--device", "null", "--duration", "8", "--volume", "100",
                                           "--fade-in", "0", "--events", "jsonl"])
            defer {
                preview.signal(SIGTERM)
                if !waitFor(.seconds(10), { !preview.isRunning }) { preview.signal(SIGKILL) }
            }
            seen.steps["playing"] = waitFor(.seconds(20)) {
                home.lines(home.folder.path("events.jsonl")).contains { $0["event"] as? String == "alarm" }
            }
            let code = residentCode(of: preview.pid, library: "libpulse.so")
            seen.steps["libpulse loaded"] = code.mapped
            seen.numbers["libpulse code KiB"] = Double(code.kib)
            seen.steps["still playing"] = preview.isRunning
        }
        #expect(seen["playing"], "\(seen.texts)")
        // The hook ran (it loads libpulse to ask PulseAudio whether it runs), before the sound.
        #expect(seen["libpulse loaded"])
        // Its code went back before the sound started: nothing runs it while the preview plays.
        #expect(seen.numbers["libpulse code KiB"] == 0)
        #expect(seen["still playing"])
    }

    /// A hook of alsa-lib's configuration that hangs (its `load` of a FIFO nobody writes): the
    /// preview waits a second for it before its sound, then the device's open meets the hook and
    /// is bounded as every open is. The sound falls back to the terminal bell, says why, and the
    /// preview ends after its duration, the hook still hanging all the while.
    @Test func whileAlsaLibsHooksHangThePreviewFallsBackAndEnds() async throws {
        let seen = try await script { home, seen in
            let hook = try HangingALSAHook(fifo: home.folder.path("hook.fifo"), configuration: home.folder.path("alsa.conf"))
            let events = home.folder.path("events.jsonl")
            let preview = try BackgroundProcess(BuiltProducts.executable("snoozefuse"),
                                                ["sounds", "play", "chime", "--device", "null", "--duration", "3", "--events", "jsonl"],
                                                environment: hook.environment(home.environment), standardOutput: events,
                                                standardError: events + ".err")
            defer {
                hook.release()
                if !waitFor(.seconds(10), { !preview.isRunning }) { preview.signal(SIGKILL) }
            }
            seen.steps["ended"] = waitFor(.seconds(40)) { !preview.isRunning }
            guard seen["ended"] else { return }
            seen.numbers["status"] = Double(preview.wait())
            let lines = home.lines(events)
            seen.texts["output"] = lines.first { $0["event"] as? String == "alarm" }?["output"] as? String
            seen.steps["said why"] = lines.contains {
                ($0["message"] as? String)?.contains("ALSA open on PCM 'null' did not return within") == true
            }
            seen.texts["said"] = (try? String(contentsOfFile: events + ".err", encoding: .utf8)) ?? ""
        }
        #expect(seen["ended"], "\(seen.texts)")
        #expect(seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["output"] == "terminal bell", "\(seen.texts)")
        #expect(seen["said why"], "\(seen.texts)")
    }
}

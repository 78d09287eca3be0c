import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// `nap --hold desktop` on a real Wayland compositor (issue 39): sway, started headless by the test
/// (as `nobody` when the tests run as root: sway refuses root), input from `wtype` through its
/// virtual keyboard. The nap is told of idleness by the compositor (org_kde_kwin_idle on Debian
/// 12's sway 1.7; ext_idle_notifier_v1 where a compositor offers it): nothing is read on a schedule.
@Suite("--hold desktop on a real sway", .serialized)
struct WaylandHoldTests {
    /// A desk nap without a terminal: keys for 3 s, quiet, one key during the release, quiet: the
    /// release starts `--idle-after` after the last key, starts over at the key, and the nap rings.
    @Test func aDeskNapOnSwayReleasesAfterTheLastInputStartsOverAndRings() async throws {
        let sway = try PrivateSway()
        defer { sway.stop() }
        let seen = try await script { home, seen in
            var environment = sway.clientEnvironment(home.environment)
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + home.folder.path("no-system-bus")
            let events = home.folder.path("events.jsonl")
            let nap = try BackgroundProcess(BuiltProducts.executable("snoozefuse"), [
                "nap", "--hold", "desktop", "--idle-after", "2s", "--release", "3s", "--nap", "2s", "--ring-limit", "1s",
                "--device", "null", "--events", "jsonl", "--dismiss", "key",
            ], environment: environment, standardOutput: events, standardError: home.folder.path("events.jsonl.err"))
            defer {
                if !waitFor(.seconds(30), { !nap.isRunning }) { nap.signal(SIGTERM) }
                _ = nap.wait()
            }
            func phases() -> [[String: Any]] { home.lines(events).filter { $0["event"] as? String == "phase" } }
            seen.steps["holding"] = waitFor(.seconds(10)) { phases().contains { $0["phase"] as? String == "holding" } }
            let start = Date()
            // Keys for 3 s.
            // Each key goes out between wtype's start and its end.
            var lastKey = (from: start, to: start)
            while Date().timeIntervalSince(start) < 3 {
                let from = Date()
                try sway.type("a")
                lastKey = (from, Date())
                usleep(300_000)
            }
            seen.numbers["last key from"] = lastKey.from.timeIntervalSince1970
            seen.numbers["last key to"] = lastKey.to.timeIntervalSince1970
            seen.steps["released"] = waitFor(.seconds(10)) { phases().contains { $0["phase"] as? String == "releasing" } }
            // A key during the release (3 s long): it starts over.
            usleep(1_000_000)
            seen.numbers["key in release from"] = Date().timeIntervalSince1970
            try sway.type("b")
            seen.numbers["key in release to"] = Date().timeIntervalSince1970
            seen.steps["held again"] = waitFor(.seconds(5)) { phases().filter { $0["phase"] as? String == "holding" }.count == 2 }
            seen.steps["rang"] = waitFor(.seconds(20)) { home.lines(events).contains { $0["event"] as? String == "alarm" } }
            seen.steps["ended"] = waitFor(.seconds(10)) { !nap.isRunning }
            for line in home.lines(events) where line["event"] as? String == "phase" || line["event"] as? String == "hold" {
                let name = "\(line["event"] as? String ?? "?") \(line["phase"] as? String ?? line["what"] as? String ?? "?")"
                if let wall = line["wall"] as? String, let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(wall) {
                    seen.numbers[name + " #\(seen.numbers.keys.filter { $0.hasPrefix(name) }.count)"] = date.timeIntervalSince1970
                }
                if line["event"] as? String == "hold" { seen.texts["hold"] = line["message"] as? String }
            }
        }
        #expect(seen["holding"] && seen["released"] && seen["held again"] && seen["rang"] && seen["ended"], "\(seen.texts) \(seen.numbers)")
        #expect(seen.texts["hold"]?.contains("Wayland (org_kde_kwin_idle on \(sway.socket))") == true, "\(seen.texts["hold"] ?? "")")
        // The release began --idle-after (2 s) after the last key, as the compositor counts it
        // (wtype's own start and the compositor's timer: within 1 s more).
        // The key went out between wtype's start and its end: the release comes 2 s after that,
        // never before 2 s after wtype's start, and within 1.5 s more after its end.
        let lastFrom = try #require(seen.numbers["last key from"]), lastTo = try #require(seen.numbers["last key to"])
        let released = try #require(seen.numbers["phase releasing #0"], "\(seen.numbers)")
        #expect(released - lastFrom >= 1.95 && released - lastTo < 3.5, "released \(released - lastFrom) s after the last key's wtype started")
        // The key in the release held the nap again as it came, and the release began again 2 s later.
        let keyFrom = try #require(seen.numbers["key in release from"]), keyTo = try #require(seen.numbers["key in release to"])
        let heldAgain = try #require(seen.numbers["phase holding #1"], "\(seen.numbers)")
        #expect(heldAgain >= keyFrom - 0.05 && heldAgain - keyTo < 1.0, "held again \(heldAgain - keyFrom) s after wtype started")
        let releasedAgain = try #require(seen.numbers["phase releasing #1"], "\(seen.numbers)")
        #expect(releasedAgain - keyFrom >= 1.95 && releasedAgain - keyTo < 3.5, "released again \(releasedAgain - keyFrom) s after the key")
    }

    /// `doctor` names the compositor's notifier as the hold's source, and says it reads nothing.
    @Test func doctorNamesTheCompositorAsTheSource() async throws {
        let sway = try PrivateSway()
        defer { sway.stop() }
        let environment = sway.clientEnvironment()
        let result = try await runProcess(snoozefuse, ["doctor", "--json"], environment: environment)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result.standardOutput)")
        let hold = (object["checks"] as? [[String: Any]] ?? []).first { $0["check"] as? String == "hold-desktop" }
        #expect(hold?["verdict"] as? String == "ok", "\(hold ?? [:])")
        let detail = hold?["detail"] as? String ?? ""
        #expect(detail.hasPrefix("--hold desktop is held by Wayland (org_kde_kwin_idle on \(sway.socket))"), "\(detail)")
        #expect(detail.contains("works (tells when input stops and comes again: nothing is read)"), "\(detail)")
    }

    /// The compositor goes away while it holds the nap: the hold ends with a warning (the release
    /// starts, 5 s later at most: when in doubt, ring), and the nap rings.
    @Test func aCompositorThatDiesEndsTheHoldAndTheNapRings() async throws {
        let sway = try PrivateSway()
        let seen = try await script { home, seen in
            var environment = sway.clientEnvironment(home.environment)
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + home.folder.path("no-system-bus")
            let events = home.folder.path("events.jsonl")
            let nap = try BackgroundProcess(BuiltProducts.executable("snoozefuse"), [
                "nap", "--hold", "desktop", "--idle-after", "30s", "--release", "1s", "--nap", "1s", "--ring-limit", "1s",
                "--device", "null", "--events", "jsonl", "--dismiss", "key",
            ], environment: environment, standardOutput: events, standardError: home.folder.path("events.jsonl.err"))
            defer {
                if !waitFor(.seconds(30), { !nap.isRunning }) { nap.signal(SIGTERM) }
                _ = nap.wait()
            }
            seen.steps["holding"] = waitFor(.seconds(10)) { home.lines(events).contains { $0["phase"] as? String == "holding" } }
            usleep(500_000)
            sway.stop()
            let died = Date()
            seen.steps["released"] = waitFor(.seconds(15)) { home.lines(events).contains { $0["phase"] as? String == "releasing" } }
            seen.numbers["release after"] = Date().timeIntervalSince(died)
            seen.steps["rang"] = waitFor(.seconds(15)) { home.lines(events).contains { $0["event"] as? String == "alarm" } }
            seen.texts["said"] = home.lines(events).compactMap { $0["message"] as? String }.joined(separator: " | ")
        }
        #expect(seen["holding"] && seen["released"] && seen["rang"], "\(seen.texts)")
        #expect((seen.numbers["release after"] ?? 99) < 7, "\(seen.numbers)")
        #expect(seen.texts["said"]?.contains("watches failed") == true, "\(seen.texts["said"] ?? "")")
        #expect(seen.texts["said"]?.contains("the release starts now") == true, "\(seen.texts["said"] ?? "")")
    }
}

import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// `nap --hold desktop` on real Wayland compositors (issue 39), each started headless by the test:
/// sway (as `nobody` when the tests run as root: sway refuses root), input from `wtype` through
/// its virtual keyboard, the nap told of idleness by the compositor (org_kde_kwin_idle on Debian
/// 12's sway 1.7; ext_idle_notifier_v1 where a compositor offers it); and GNOME's Mutter on a
/// private session bus, input through its RemoteDesktop API, the nap held by GNOME's IdleMonitor
/// watches. Nothing is read on a schedule.
@Suite("--hold desktop on real compositors: sway and GNOME", .serialized)
struct WaylandHoldTests {
    /// `nap --hold desktop` without a terminal (and without a system bus) in `environment`, its
    /// events into `events.jsonl` of the home, ringing 1 s on the null device; and that file.
    static func launchDeskNap(_ home: NapHome, environment given: [String: String], idleAfter: String, release: String,
                              nap: String) throws -> (BackgroundProcess, String) {
        var environment = given
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + home.folder.path("no-system-bus")
        let events = home.folder.path("events.jsonl")
        let process = try BackgroundProcess(BuiltProducts.executable("snoozefuse"), [
            "nap", "--hold", "desktop", "--idle-after", idleAfter, "--release", release, "--nap", nap, "--ring-limit", "1s",
            "--device", "null", "--events", "jsonl", "--dismiss", "key",
        ], environment: environment, standardOutput: events, standardError: home.folder.path("events.jsonl.err"))
        return (process, events)
    }

    /// A desk nap without a terminal on a compositor whose environment is `environment` and whose
    /// keyboard is `press`: keys for 3 s, quiet, one key during the release, quiet. What the nap
    /// did, and when each key went out (between the start and the end of `press`).
    static func deskNap(environment given: [String: String], press: @escaping @Sendable () throws -> Void) async throws -> Observed {
        try await script { home, seen in
            var environment = given
            for key in ["XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "NO_COLOR"] { environment[key] = home.environment[key] }
            let (nap, events) = try launchDeskNap(home, environment: environment, idleAfter: "2s", release: "3s", nap: "2s")
            defer {
                if !waitFor(.seconds(30), { !nap.isRunning }) { nap.signal(SIGTERM) }
                _ = nap.wait()
            }
            func phases() -> [[String: Any]] { home.lines(events).filter { $0["event"] as? String == "phase" } }
            seen.steps["holding"] = waitFor(.seconds(10)) { phases().contains { $0["phase"] as? String == "holding" } }
            let start = Date()
            // Keys for 3 s; each goes out between the start and the end of `press`.
            var lastKey = (from: start, to: start)
            while Date().timeIntervalSince(start) < 3 {
                let from = Date()
                try press()
                lastKey = (from, Date())
                usleep(300_000)
            }
            seen.numbers["last key from"] = lastKey.from.timeIntervalSince1970
            seen.numbers["last key to"] = lastKey.to.timeIntervalSince1970
            seen.steps["released"] = waitFor(.seconds(10)) { phases().contains { $0["phase"] as? String == "releasing" } }
            // A key during the release (3 s long): it starts over.
            usleep(1_000_000)
            seen.numbers["key in release from"] = Date().timeIntervalSince1970
            try press()
            seen.numbers["key in release to"] = Date().timeIntervalSince1970
            seen.steps["held again"] = waitFor(.seconds(5)) { phases().filter { $0["phase"] as? String == "holding" }.count == 2 }
            seen.steps["rang"] = waitFor(.seconds(20)) { home.lines(events).contains { $0["event"] as? String == "alarm" } }
            seen.steps["ended"] = waitFor(.seconds(10)) { !nap.isRunning }
            var counts: [String: Int] = [:]
            for line in home.lines(events) where line["event"] as? String == "phase" || line["event"] as? String == "hold" {
                let name = "\(line["event"] as? String ?? "?") \(line["phase"] as? String ?? line["what"] as? String ?? "?")"
                if let wall = line["wall"] as? String, let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(wall) {
                    seen.numbers[name + " #\(counts[name, default: 0])"] = date.timeIntervalSince1970
                    counts[name, default: 0] += 1
                }
                if line["event"] as? String == "hold" { seen.texts["hold"] = line["message"] as? String }
            }
        }
    }

    /// What every desk nap must show: the release `--idle-after` (2 s) after the last key, as the
    /// compositor counts it, never before 2 s after the key's sender started and within 1.5 s more
    /// after it ended; the key in the release holding it again as it came; the release again 2 s
    /// after that key; the alarm.
    static func expectReleasedAndStartedOver(_ seen: Observed, holdSaid: String) throws {
        #expect(seen["holding"] && seen["released"] && seen["held again"] && seen["rang"] && seen["ended"], "\(seen.texts) \(seen.numbers)")
        #expect(seen.texts["hold"]?.contains(holdSaid) == true, "\(seen.texts["hold"] ?? "")")
        let lastFrom = try #require(seen.numbers["last key from"]), lastTo = try #require(seen.numbers["last key to"])
        let released = try #require(seen.numbers["phase releasing #0"], "\(seen.numbers)")
        #expect(released - lastFrom >= 1.95 && released - lastTo < 3.5, "released \(released - lastFrom) s after the last key's sender started")
        let keyFrom = try #require(seen.numbers["key in release from"]), keyTo = try #require(seen.numbers["key in release to"])
        let heldAgain = try #require(seen.numbers["phase holding #1"], "\(seen.numbers)")
        #expect(heldAgain >= keyFrom - 0.05 && heldAgain - keyTo < 1.0, "held again \(heldAgain - keyFrom) s after the key's sender started")
        let releasedAgain = try #require(seen.numbers["phase releasing #1"], "\(seen.numbers)")
        #expect(releasedAgain - keyFrom >= 1.95 && releasedAgain - keyTo < 3.5, "released again \(releasedAgain - keyFrom) s after the key")
    }

    /// On sway: org_kde_kwin_idle's notifications, wtype's virtual keyboard.
    @Test func aDeskNapOnSwayReleasesAfterTheLastInputStartsOverAndRings() async throws {
        let sway = try PrivateSway()
        defer { sway.stop() }
        let seen = try await Self.deskNap(environment: sway.clientEnvironment()) { try sway.type("a") }
        try Self.expectReleasedAndStartedOver(seen, holdSaid: "Wayland (org_kde_kwin_idle on \(sway.socket))")
    }

    /// On GNOME (Mutter headless, its own IdleMonitor watches), input through RemoteDesktop.
    @Test func aDeskNapOnGNOMEReleasesAfterTheLastInputStartsOverAndRings() async throws {
        let mutter = try PrivateMutter()
        defer { mutter.stop() }
        let seen = try await Self.deskNap(environment: mutter.clientEnvironment()) { try mutter.press() }
        try Self.expectReleasedAndStartedOver(seen, holdSaid: "GNOME (org.gnome.Mutter.IdleMonitor)")
    }

    /// `doctor` on GNOME names GNOME's IdleMonitor, and says Mutter 43 offers no Wayland idle notifier.
    @Test func doctorOnGNOMENamesItsIdleMonitor() async throws {
        let mutter = try PrivateMutter()
        defer { mutter.stop() }
        let result = try await runProcess(snoozefuse, ["doctor", "--json"], environment: mutter.clientEnvironment())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result.standardOutput)")
        let hold = (object["checks"] as? [[String: Any]] ?? []).first { $0["check"] as? String == "hold-desktop" }
        #expect(hold?["verdict"] as? String == "ok", "\(hold ?? [:])")
        let detail = hold?["detail"] as? String ?? ""
        #expect(detail.hasPrefix("--hold desktop is held by GNOME (org.gnome.Mutter.IdleMonitor)"), "\(detail)")
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
            let (nap, events) = try Self.launchDeskNap(home, environment: sway.clientEnvironment(home.environment), idleAfter: "30s", release: "1s", nap: "1s")
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

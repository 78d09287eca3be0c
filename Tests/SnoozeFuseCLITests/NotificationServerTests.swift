import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// The alarm's notification on a real notification server (issue 39): dunst on an X server of the
/// test's own (Xvfb), on a session bus of the test's own, with `dbus-monitor` recording the bus's
/// traffic of org.freedesktop.Notifications. `dunstctl action 0` invokes the notification's default
/// action, as a click does: the nap snoozes; the notification is replaced as it rings again, and
/// closed when it is stopped.
@Suite("The alarm's notification on a real notification server", .serialized)
struct NotificationServerTests {
    @Test func aClickOnTheRingingAlarmsNotificationSnoozesItAndItIsReplacedThenClosed() async throws {
        let x = try PrivateXServer()
        defer { x.stop() }
        let seen = try await script { home, seen in
            let session = try PrivateBus()
            defer { session.stop() }
            var serverEnvironment = x.clientEnvironment()
            serverEnvironment["DBUS_SESSION_BUS_ADDRESS"] = session.address
            serverEnvironment["HOME"] = home.folder.path("dunst-home")
            try FileManager.default.createDirectory(atPath: home.folder.path("dunst-home"), withIntermediateDirectories: true)
            let dunst = try BackgroundProcess(executableInPath("dunst"), [], environment: serverEnvironment,
                                              standardOutput: home.folder.path("dunst.out"), standardError: home.folder.path("dunst.err"))
            defer {
                dunst.signal(SIGTERM)
                _ = dunst.wait()
            }
            let monitor = try BackgroundProcess(executableInPath("dbus-monitor"), ["--address", session.address, "interface='org.freedesktop.Notifications'"],
                                                environment: serverEnvironment, standardOutput: home.folder.path("monitor.txt"),
                                                standardError: home.folder.path("monitor.err"))
            defer {
                monitor.signal(SIGTERM)
                _ = monitor.wait()
            }
            func dunstctl(_ arguments: [String]) -> ProcessResult? {
                try? runProcessBlocking(executableInPath("dunstctl"), arguments, environment: serverEnvironment)
            }
            seen.steps["server up"] = waitFor(.seconds(10)) { dunstctl(["is-paused"])?.status == 0 }
            let run = BusNap(home, session: session)
            let nap = try run.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--snooze", "3",
                                      "--device", "null", "--events", "jsonl", "--quiet", "--dismiss", "key"])
            defer {
                if !waitFor(.seconds(20), { !nap.isRunning }) { nap.signal(SIGTERM) }
                _ = nap.wait()
            }
            let displayed = { Int(dunstctl(["count", "displayed"])?.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0 }
            seen.steps["shown"] = waitFor(.seconds(20)) { displayed() >= 1 }
            // The nap listens for actions right after its first Notify is answered.
            usleep(500_000)
            // A click (the default action) on the notification.
            seen.numbers["action"] = Double(dunstctl(["action", "0"])?.status ?? -1)
            seen.steps["snoozed"] = waitFor(.seconds(5)) { home.state()?["phase"] as? String == "snoozed" }
            seen.texts["status"] = (try? home.run(["status"]))?.standardOutput
            // It rings again 3 s later: the notification is replaced, then closed at the stop.
            seen.steps["rang again"] = waitFor(.seconds(10)) { run.events("alarm").count == 2 }
            seen.numbers["stop"] = Double((try? home.run(["stop"]))?.status ?? -1)
            seen.steps["ended"] = waitFor(.seconds(10)) { !nap.isRunning }
            seen.steps["closed"] = waitFor(.seconds(5)) { displayed() == 0 }
            usleep(300_000)
            seen.texts["monitor"] = (try? String(contentsOfFile: home.folder.path("monitor.txt"), encoding: .utf8)) ?? ""
            seen.texts["outcome"] = run.events("end").first?["outcome"] as? String
            seen.texts["dunst"] = (try? String(contentsOfFile: home.folder.path("dunst.err"), encoding: .utf8)) ?? ""
        }
        let monitor = seen.texts["monitor"] ?? ""
        #expect(seen["server up"] && seen["shown"], "\(seen.texts["dunst"] ?? "") \(seen.texts["diagnosis"] ?? "")")
        #expect(seen.numbers["action"] == 0)
        #expect(seen["snoozed"], "the click snoozed the nap: \(seen.texts["diagnosis"] ?? "")")
        #expect(seen.texts["status"]?.hasPrefix("snoozed") == true, "\(seen.texts["status"] ?? "")")
        #expect(seen["rang again"] && seen.numbers["stop"] == 0 && seen["ended"], "\(seen.texts["diagnosis"] ?? "")")
        #expect(seen.texts["outcome"] == "dismissed")
        #expect(seen["closed"], "no notification left on the screen")
        // The bus's traffic: Notify with its actions and the critical urgency (a byte), the server's
        // ActionInvoked for the default action, a Notify that replaces the first (its id, not 0),
        // and CloseNotification.
        let notifies = monitor.components(separatedBy: "member=Notify\n").dropFirst()
        #expect(notifies.count == 3, "ringing, snoozed, ringing again: \(monitor)")
        let first = notifies.first ?? ""
        for part in ["string \"default\"", "string \"Snooze 3s\"", "string \"snooze\"", "string \"stop\"", "string \"Stop\"",
                     "string \"urgency\"", "variant             byte 2", "string \"Time to wake up\""] {
            #expect(first.contains(part), "\(part) in the first Notify: \(first)")
        }
        let invoked = monitor.components(separatedBy: "member=ActionInvoked\n").dropFirst().first ?? ""
        #expect(invoked.split(separator: "\n").prefix(3).contains { $0.contains("string \"default\"") }, "the click's action: \(monitor)")
        #expect(monitor.contains("member=CloseNotification"), "\(monitor)")
        // The later ones replace the first: the uint32 after the app name is not 0.
        for later in notifies.dropFirst() {
            let replaces = later.components(separatedBy: "string \"snoozefuse\"\n").dropFirst().first?.split(separator: "\n").first
            #expect(replaces?.contains("uint32 0") == false && replaces?.contains("uint32") == true, "\(later)")
        }
    }
}

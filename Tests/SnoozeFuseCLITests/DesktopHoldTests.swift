import Foundation
import Glibc
import SnoozeFuseSystem
import Testing
import SnoozeFuseTestSupport

/// `nap --hold desktop` started without a terminal (standard input /dev/null, as from a launcher),
/// its standard output (`--events jsonl`) in a file, while the test makes input on the desktop.
private struct DesktopNap: Sendable {
    let folder: TemporaryFolder
    let process: BackgroundProcess
    var eventsPath: String { folder.path("events.jsonl") }

    init(_ arguments: [String], environment: [String: String]) throws {
        folder = try TemporaryFolder(prefix: "snoozefuse-desk")
        process = try BackgroundProcess(snoozefuse, ["nap", "--preset", "quick-test", "--hold", "desktop", "--ring-limit", "1s",
                                                     "--device", "null", "--events", "jsonl"] + arguments,
                                        environment: environment, standardOutput: folder.path("events.jsonl"),
                                        standardError: folder.path("stderr.txt"))
    }

    var standardError: String { (try? String(contentsOfFile: folder.path("stderr.txt"), encoding: .utf8)) ?? "" }

    var records: [EventLine] {
        let text = (try? String(contentsOfFile: eventsPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
    }

    /// Waits (polling its events) until `condition` holds or the nap has ended.
    func wait(until condition: ([EventLine]) -> Bool) async throws {
        while process.isRunning, !condition(records) { try await Task.sleep(for: .milliseconds(50)) }
    }

    /// The same, blocking: for a test's input script, which runs on a thread of its own (the
    /// shared pool may be busy with other tests, and the script's pauses must stay short).
    func waitBlocking(until condition: ([EventLine]) -> Bool) {
        while process.isRunning, !condition(records) { usleep(20_000) }
    }

    func end() async throws -> Int32 {
        try await onOwnThread { process.wait() }
    }
}

private struct HoldEvent: Decodable {
    var event: String
    var what: String?
    var message: String?
}

private func wallDate(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

/// A nap's own folders, a session bus of the test's own (empty unless the test publishes a stand-in)
/// and no system bus: the desktop's idle time comes only from what the test provides.
private func desktopEnvironment(bus: PrivateBus, x: PrivateXServer? = nil) throws -> ([String: String], TemporaryFolder?) {
    var environment = ProcessInfo.processInfo.environment
    environment.removeValue(forKey: "DISPLAY")
    if let x { environment = x.clientEnvironment(environment) }
    environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
    environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(bus.folder.path("no-system-bus"))"
    let isolated = try isolatingNapState(environment)
    return (isolated.environment, isolated.folder)
}

/// A session bus of the test's own with `standIns` published on it and one input made, and a nap
/// environment pointed at it (see ``desktopEnvironment(bus:x:)``).
private struct StandInDesktop {
    let bus: PrivateBus
    let environment: [String: String]
    let state: TemporaryFolder?

    init(_ standIns: PrivateBus.StandIn...) throws {
        bus = try PrivateBus()
        for standIn in standIns { try bus.publish(standIn) }
        bus.input()
        (environment, state) = try desktopEnvironment(bus: bus)
    }
}

@Suite("nap --hold desktop: held while the desktop is used, released after --idle-after without input")
struct DesktopHoldTests {
    /// The whole desk nap on a real X server: input for 3 s, then none: the release starts
    /// --idle-after later; a keystroke during the release starts it over; the nap rings.
    @Test func aDeskNapOnARealXServerReleasesAfterIdleAfterAndAKeystrokeStartsTheReleaseOver() async throws {
        let x = try PrivateXServer()
        defer { x.stop() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (environment, state) = try desktopEnvironment(bus: bus, x: x)
        defer { withExtendedLifetime(state) {} }
        // X counts its idle time from the last input it saw, or from its start: one input now,
        // and more from the moment the nap is started, so that its first read (which a loaded
        // machine can delay past --idle-after) never sees an idle time from before the test.
        try x.movePointer(toX: 5, y: 5)
        let nap = try DesktopNap(["--idle-after", "2s"], environment: environment)
        // Typing and pointer moves every 0.3 s (far below --idle-after even on a busy machine)
        // until 3 s after the nap holds; then nothing until the release, and one keystroke 0.7 s
        // into it. Each input happened while xdotool ran: between the instant before it started
        // and the one after it returned (on a loaded machine that can be a good part of a second).
        let (lastInput, keystroke) = try await onOwnThread { () throws -> ((Date, Date), (Date, Date)) in
            var lastInput = (Date(), Date())
            var typingEnds: Date?
            let giveUp = Date().addingTimeInterval(60)
            var moves = 0
            while Date() < (typingEnds ?? giveUp), nap.process.isRunning {
                if typingEnds == nil, nap.records.contains(where: { $0.phase == "holding" }) {
                    typingEnds = Date().addingTimeInterval(3)
                }
                let before = Date()
                if moves % 2 == 0 { try x.press("a") } else { try x.movePointer(toX: 10 + moves, y: 20) }
                moves += 1
                lastInput = (before, Date())
                usleep(300_000)
            }
            nap.waitBlocking { $0.contains { $0.phase == "releasing" } }
            usleep(700_000)
            let before = Date()
            try x.press("space")
            return (lastInput, (before, Date()))
        }
        let firstReleaseRecord = try #require(nap.records.first { $0.phase == "releasing" }, "\(nap.standardError)")
        let firstRelease = try #require(wallDate(firstReleaseRecord.wall))
        // The idle time is the X server's own, to the millisecond; the read is due when it can
        // first reach 2 s. Real time on a shared machine: a generous upper bound.
        let waited = (firstRelease.timeIntervalSince(lastInput.0), firstRelease.timeIntervalSince(lastInput.1))
        #expect(waited.0 >= 1.95 && waited.1 < 2.8, "the release started \(waited) s after the last input: \(nap.standardError)")
        try await nap.wait { records in records.filter { $0.phase == "releasing" }.count >= 2 }
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        let records = nap.records
        let phases = records.filter { $0.event == "phase" }.map { $0.phase ?? "?" }
        #expect(phases == ["holding", "releasing", "holding", "releasing", "napping", "ringing", "finished"], "\(nap.standardError)")
        let second = try #require(records.filter { $0.phase == "releasing" }.last)
        let secondRelease = try #require(wallDate(second.wall))
        let restarted = (secondRelease.timeIntervalSince(keystroke.0), secondRelease.timeIntervalSince(keystroke.1))
        #expect(restarted.0 >= 1.95 && restarted.1 < 2.8, "the second release started \(restarted) s after the keystroke")
        let heldRecord = try #require(records.filter { $0.phase == "holding" }.last)
        let held = try #require(wallDate(heldRecord.wall))
        let seen = (held.timeIntervalSince(keystroke.0), held.timeIntervalSince(keystroke.1))
        #expect(seen.0 >= 0 && seen.1 < 0.8, "the keystroke was seen \(seen) s later (read twice a second while released)")
        // The hold source is named in an event.
        let lines = try String(contentsOfFile: nap.eventsPath, encoding: .utf8).split(separator: "\n")
        let hold = lines.compactMap { try? JSONDecoder().decode(HoldEvent.self, from: Data($0.utf8)) }.first { $0.event == "hold" }
        #expect(hold?.what == "desktop")
        #expect(hold?.message?.contains("X11 (MIT-SCREEN-SAVER on \(x.display))") == true, "\(String(describing: hold))")
        #expect(records.last?.outcome == "ring_limit")
    }

    /// GNOME's IdleMonitor (a stand-in on a private session bus) comes first; its watches say when
    /// --idle-after has passed without input and when input comes; nothing is read while napping.
    @Test func gnomesIdleMonitorComesFirstAndIsNotAskedWhileNapping() async throws {
        let desk = try StandInDesktop(.mutterIdle, .screenSaver)
        defer { desk.bus.stop() }
        let (bus, environment) = (desk.bus, desk.environment)
        // A nap long enough for `status` to find it on a busy machine (under the whole suite one
        // status took longer than a 16 s nap); `stop` ends it.
        let nap = try DesktopNap(["--idle-after", "1s", "--nap", "90s", "--max", "120s"], environment: environment)
        try await nap.wait { $0.contains { $0.phase == "holding" } }
        // `status` says what holds the nap (once the nap has written its live state: the events
        // may run ahead of it).
        var status = try await runProcess(snoozefuse, ["status", "--json"], environment: environment)
        var shown = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        for _ in 0 ..< 50 where shown?["phase"] == nil && nap.process.isRunning {
            try await Task.sleep(for: .milliseconds(100))
            status = try await runProcess(snoozefuse, ["status", "--json"], environment: environment)
            shown = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        }
        #expect(shown?["hold"] as? String == "desktop", "status: \(status.standardOutput) \(status.standardError); nap: \(nap.standardError)")
        #expect(shown?["idleAfterSeconds"] as? Double == 1)
        try await nap.wait { $0.contains { $0.phase == "napping" } }
        // A read begun just as the nap started may still be answered; none may begin after.
        try await Task.sleep(for: .milliseconds(300))
        let callsAtNap = bus.log(of: .mutterIdle).filter { $0.hasPrefix("GetIdletime") }.count
        // Input while napping changes nothing and is not even read.
        for _ in 0 ..< 4 {
            bus.input()
            try await Task.sleep(for: .milliseconds(500))
        }
        let stop = try await runProcess(snoozefuse, ["stop", "--yes"], environment: environment)
        #expect(stop.status == 0, "\(stop.standardError)")
        let ended = try await nap.end()
        #expect(ended == 1, "cancelled by stop: \(nap.standardError)")
        let calls = bus.log(of: .mutterIdle).filter { $0.hasPrefix("GetIdletime") }.count
        #expect(calls == callsAtNap, "no reads while napping (\(callsAtNap) before the nap, \(calls) in all)")
        #expect(nap.records.filter { $0.event == "phase" }.map { $0.phase ?? "?" } == ["holding", "releasing", "napping", "cancelled"])
        // GNOME's watches tell the idle and the input: one probe, one read at the start and one
        // after the release (input between the idle watch firing and the input watch); nothing
        // polled through the 2 s release.
        #expect(callsAtNap == 3, "\(callsAtNap) reads before the nap: \(bus.log(of: .mutterIdle))")
        #expect(bus.log(of: .mutterIdle).contains("AddIdleWatch 1000"))
        #expect(bus.log(of: .mutterIdle).filter { $0 == "AddUserActiveWatch" }.count == 1)
        #expect(bus.log(of: .screenSaver).filter { $0.hasPrefix("GetSessionIdleTime") }.isEmpty, "the second source is not asked")
        let lines = try String(contentsOfFile: nap.eventsPath, encoding: .utf8).split(separator: "\n")
        let hold = lines.compactMap { try? JSONDecoder().decode(HoldEvent.self, from: Data($0.utf8)) }.first { $0.event == "hold" }
        #expect(hold?.message?.contains("GNOME (org.gnome.Mutter.IdleMonitor)") == true, "\(String(describing: hold))")
        // The history keeps the hold, and the time to fall asleep ends at the last input: the
        // release started --idle-after (1 s) after it.
        let history = try await runProcess(snoozefuse, ["history", "--json"], environment: environment)
        let naps = (try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])?["naps"] as? [[String: Any]]
        let recorded = try #require(naps?.first, "\(history.standardOutput) \(history.standardError)")
        #expect(recorded["hold"] as? String == "desktop")
        let release = try #require(nap.records.first { $0.phase == "releasing" })
        let asleep = try #require(recorded["fallAsleepSeconds"] as? Double)
        #expect(abs(asleep - max(release.t - 1, 0)) < 0.01, "fell asleep after \(asleep) s; released at t=\(release.t)")
        let text = try await runProcess(snoozefuse, ["history"], environment: environment)
        #expect(text.standardOutput.split(separator: "\n").first?.hasPrefix("STARTED           HOLD     ASLEEP") == true)
        #expect(text.standardOutput.split(separator: "\n").dropFirst().first?.contains("  desktop ") == true, "\(text.standardOutput)")
    }

    /// With GNOME's watches a keystroke during the release starts it over, as with reads; the
    /// idle time is read once per release, never on a schedule.
    @Test func gnomesWatchesStartTheReleaseOverAtInputWithoutPolling() async throws {
        let desk = try StandInDesktop(.mutterIdle)
        defer { desk.bus.stop() }
        let (bus, environment) = (desk.bus, desk.environment)
        let nap = try DesktopNap(["--idle-after", "1s", "--release", "4s", "--nap", "1s"], environment: environment)
        let keystroke = try await onOwnThread { () -> Date in
            nap.waitBlocking { $0.contains { $0.phase == "releasing" } }
            usleep(700_000)
            bus.input()
            return Date()
        }
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        let records = nap.records
        #expect(records.filter { $0.event == "phase" }.map { $0.phase ?? "?" }
            == ["holding", "releasing", "holding", "releasing", "napping", "ringing", "finished"], "\(nap.standardError)")
        let held = try #require(records.filter { $0.phase == "holding" }.last)
        let seen = try #require(wallDate(held.wall)).timeIntervalSince(keystroke)
        #expect(seen >= 0 && seen < 0.5, "the input watch fired \(seen) s after the keystroke")
        let second = try #require(records.filter { $0.phase == "releasing" }.last)
        let restarted = try #require(wallDate(second.wall)).timeIntervalSince(keystroke)
        #expect(restarted >= 0.95 && restarted < 1.6, "the second release started \(restarted) s after the keystroke")
        let log = bus.log(of: .mutterIdle)
        #expect(log.filter { $0.hasPrefix("GetIdletime") }.count == 4, "probe, start, one after each release: \(log)")
        #expect(log.filter { $0 == "AddUserActiveWatch" }.count == 2, "\(log)")
        #expect(log.filter { $0.hasPrefix("AddIdleWatch") } == ["AddIdleWatch 1000"], "one idle watch serves every quiet spell")
    }

    /// A GNOME without the watches (they answer UnknownMethod) is read instead, and the nap says so.
    @Test func gnomeWithoutWatchesIsReadInstead() async throws {
        let desk = try StandInDesktop(.mutterIdleUnwatched)
        defer { desk.bus.stop() }
        let (bus, environment) = (desk.bus, desk.environment)
        let nap = try DesktopNap(["--idle-after", "1s"], environment: environment)
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        #expect(nap.records.filter { $0.event == "phase" }.map { $0.phase ?? "?" } == ["holding", "releasing", "napping", "ringing", "finished"])
        #expect(nap.standardError.contains("GNOME (org.gnome.Mutter.IdleMonitor)'s watches failed (AddIdleWatch: org.freedesktop.DBus.Error.UnknownMethod"),
                "\(nap.standardError)")
        #expect(nap.standardError.contains("its idle time is read instead"))
        // Read twice a second through the 2 s release.
        #expect(bus.log(of: .mutterIdleUnwatched).filter { $0.hasPrefix("GetIdletime") }.count >= 5)
    }

    /// GNOME Shell leaving the bus while it holds the nap (a crash): its watches are gone, its
    /// idle time cannot be read, and 5 s later the hold is given up (when in doubt, ring). The
    /// history's time to fall asleep then ends at that release: nothing says when the last input
    /// was (--idle-after is not taken off).
    @Test func gnomeLeavingTheBusGivesTheHoldUpAndTheNapStillRings() async throws {
        let desk = try StandInDesktop(.mutterIdle)
        defer { desk.bus.stop() }
        let (bus, environment) = (desk.bus, desk.environment)
        let nap = try DesktopNap(["--idle-after", "5m"], environment: environment)
        let left = try await onOwnThread { () -> Date in
            nap.waitBlocking { $0.contains { $0.phase == "holding" } }
            // Past the first read and the idle watch.
            while !bus.log(of: .mutterIdle).contains(where: { $0.hasPrefix("AddIdleWatch") }) && nap.process.isRunning { usleep(20_000) }
            usleep(300_000)
            bus.withdraw(.mutterIdle)
            return Date()
        }
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        let records = nap.records
        #expect(records.filter { $0.event == "phase" }.map { $0.phase ?? "?" } == ["holding", "releasing", "napping", "ringing", "finished"])
        #expect(nap.standardError.contains("watches failed (GNOME Shell left the bus or was restarted"), "\(nap.standardError)")
        #expect(nap.standardError.contains("the desktop's idle time cannot be read any more (not on the session bus): the release starts now"),
                "\(nap.standardError)")
        let release = try #require(records.first { $0.phase == "releasing" })
        let gaveUp = try #require(wallDate(release.wall)).timeIntervalSince(left)
        #expect(gaveUp >= 4.9 && gaveUp < 7, "given up \(gaveUp) s after GNOME left")
        let history = try await runProcess(snoozefuse, ["history", "--json"], environment: environment)
        let naps = (try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])?["naps"] as? [[String: Any]]
        let asleep = try #require(naps?.first?["fallAsleepSeconds"] as? Double, "\(history.standardOutput) \(history.standardError)")
        let held = try #require(records.first { $0.phase == "holding" })
        #expect(abs(asleep - (release.t - held.t)) < 0.01, "fell asleep after \(asleep) s; held at t=\(held.t), released at t=\(release.t)")
    }

    /// Without GNOME, org.freedesktop.ScreenSaver; without either and without X, logind's IdleHint.
    @Test(arguments: [PrivateBus.StandIn.screenSaver, .idleSession])
    func theOtherSourcesHoldTheNapInTheirTurn(_ standIn: PrivateBus.StandIn) async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        try bus.publish(standIn)
        bus.input()
        var (environment, state) = try desktopEnvironment(bus: bus)
        defer { withExtendedLifetime(state) {} }
        if standIn == .idleSession { environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address }
        let nap = try DesktopNap(["--idle-after", "2s"], environment: environment)
        // Input during the hold keeps it held (every 0.4 s, on a thread of its own).
        let lastInput = try await onOwnThread { () -> Date in
            var lastInput = Date()
            for _ in 0 ..< 5 {
                usleep(400_000)
                bus.input()
                lastInput = Date()
            }
            return lastInput
        }
        // Input while napping (every 0.5 s for 2 s) changes nothing and is not read.
        try await onOwnThread {
            nap.waitBlocking { $0.contains { $0.phase == "napping" } }
            for _ in 0 ..< 4 {
                bus.input()
                usleep(500_000)
            }
        }
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        let records = nap.records
        #expect(records.filter { $0.event == "phase" }.map { $0.phase ?? "?" } == ["holding", "releasing", "napping", "ringing", "finished"])
        let release = try #require(records.first { $0.phase == "releasing" })
        let releaseWall = try #require(wallDate(release.wall))
        let waited = releaseWall.timeIntervalSince(lastInput)
        #expect(waited >= 1.9 && waited < 2.8, "held while the input went on, released \(waited) s after the last input: \(nap.standardError)")
        // Polled no more than twice a second while released, and never once the nap started (a
        // read begun as it started may still be answered within the 0.3 s allowed).
        let nappingRecord = try #require(records.first { $0.phase == "napping" })
        let napping = try #require(wallDate(nappingRecord.wall))
        let read = standIn == .screenSaver ? "GetSessionIdleTime " : "Get IdleHint "
        let reads = bus.log(of: standIn).filter { $0.hasPrefix(read) }.compactMap { line in
            line.split(separator: " ").last.flatMap { $0.hasPrefix("t=") ? Double($0.dropFirst(2)) : nil }.map(Date.init(timeIntervalSince1970:))
        }
        let releasing = reads.filter { $0 >= releaseWall && $0 < napping }
        let allowed = Int((napping.timeIntervalSince(releaseWall) / 0.5).rounded(.up)) + 1
        #expect(!releasing.isEmpty && releasing.count <= allowed, "\(releasing.count) reads in a release of \(napping.timeIntervalSince(releaseWall)) s")
        #expect(reads.filter { $0 > napping.addingTimeInterval(0.3) }.isEmpty, "reads after the nap started: \(bus.log(of: standIn))")
        let name = standIn == .screenSaver ? "org.freedesktop.ScreenSaver" : "systemd-logind (IdleHint)"
        let lines = try String(contentsOfFile: nap.eventsPath, encoding: .utf8).split(separator: "\n")
        let hold = lines.compactMap { try? JSONDecoder().decode(HoldEvent.self, from: Data($0.utf8)) }.first { $0.event == "hold" }
        #expect(hold?.message?.contains(name) == true, "\(String(describing: hold))")
    }

    /// Nothing tells the idle time (a Wayland desktop without GNOME or KDE): said, and without a
    /// terminal the release starts at once; the nap still rings.
    @Test func withoutAnySourceTheNapSaysSoAndStartsItsReleaseAtOnce() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (environment, state) = try desktopEnvironment(bus: bus)
        defer { withExtendedLifetime(state) {} }
        let nap = try DesktopNap([], environment: environment)
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        #expect(nap.standardError.contains("--hold desktop: nothing here tells how long the desktop has been idle"), "\(nap.standardError)")
        #expect(nap.standardError.contains("no X display (DISPLAY is not set)"))
        #expect(nap.standardError.contains("the release timer starts at once instead"))
        #expect(nap.records.filter { $0.event == "phase" }.map { $0.phase ?? "?" } == ["releasing", "napping", "ringing", "finished"])
    }

    /// `doctor` names the sources that answer here and the first one a nap would use: on an X
    /// session the X server before org.freedesktop.ScreenSaver; in a Wayland session never the X
    /// server (XWayland sees only X programs' input).
    @Test func doctorSaysWhichHoldSourcesWorkHere() async throws {
        let x = try PrivateXServer()
        defer { x.stop() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        try bus.publish(.screenSaver)
        let (environment, state) = try desktopEnvironment(bus: bus, x: x)
        defer { withExtendedLifetime(state) {} }
        struct Report: Decodable {
            struct Check: Decodable { var check: String; var verdict: String; var detail: String }
            var checks: [Check]
        }
        func holdCheck(_ environment: [String: String], _ name: String = "hold-desktop") async throws -> Report.Check {
            let result = try await runProcess(snoozefuse, ["doctor", "--json", "--device", "null"], environment: environment)
            let report = try JSONDecoder().decode(Report.self, from: Data(result.standardOutput.utf8))
            guard let check = report.checks.first(where: { $0.check == name }) else {
                throw ToolFailure(description: "doctor has no \(name) check: \(result.standardOutput)")
            }
            return check
        }
        // Where a held key's release is read: the keyboards' devices, or the terminal's gap and why.
        let keyHold = try await holdCheck(environment, "hold-key")
        #expect(keyHold.verdict == "ok")
        if FileManager.default.fileExists(atPath: "/dev/input") {
            #expect(keyHold.detail.hasSuffix("(evdev)") || keyHold.detail.contains("the key's release is taken 0.75 s after its autorepeat stops ("), "\(keyHold.detail)")
        } else {
            #expect(keyHold.detail == "--hold key: the key's release is taken 0.75 s after its autorepeat stops (no input devices in /dev/input (a container or a remote session))")
        }
        let onX = try await holdCheck(environment)
        #expect(onX.verdict == "ok")
        #expect(onX.detail.hasPrefix("--hold desktop is held by X11 (MIT-SCREEN-SAVER on \(x.display))"), "\(onX.detail)")
        #expect(onX.detail.contains("GNOME (org.gnome.Mutter.IdleMonitor): not on the session bus"), "\(onX.detail)")
        #expect(onX.detail.contains("org.freedesktop.ScreenSaver: works"), "\(onX.detail)")
        #expect(onX.detail.contains("systemd-logind (IdleHint): not on the system bus"), "\(onX.detail)")
        var wayland = environment
        wayland["WAYLAND_DISPLAY"] = "wayland-0"
        let onWayland = try await holdCheck(wayland)
        #expect(onWayland.detail.hasPrefix("--hold desktop is held by org.freedesktop.ScreenSaver"), "\(onWayland.detail)")
        #expect(onWayland.detail.contains("X11 (MIT-SCREEN-SAVER): a Wayland session"), "\(onWayland.detail)")
    }

    /// logind's idle hint holds a nap only in a graphical session: on a text console it never
    /// turns on, and the nap would wait for its failsafe.
    @Test func logindOutsideAGraphicalSessionIsNoSource() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        try bus.publish(.idleSession)
        var (environment, state) = try desktopEnvironment(bus: bus)
        defer { withExtendedLifetime(state) {} }
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        bus.setSessionType("tty")
        let nap = try DesktopNap([], environment: environment)
        let status = try await nap.end()
        #expect(status == 0, "\(nap.standardError)")
        #expect(nap.standardError.contains("systemd-logind (IdleHint): a tty session, not a graphical one: nothing sets its idle hint"), "\(nap.standardError)")
        #expect(nap.records.first { $0.event == "phase" }?.phase == "releasing", "nothing holds it: the release starts at once")
    }
}

import Foundation
import Testing
import SnoozeFuseTestSupport

/// Drives a program on a real pseudo-terminal (Python's `pty`, in the standard library): the
/// program's standard input and error are the terminal, its standard output goes to a file.
/// Steps: `hold:S` sends a space every 40 ms for S seconds (a held key's autorepeat), `wait:S`
/// sends nothing; the steps start once the program reads single keys. With
/// `--transcript=PATH` every byte the terminal received is kept in PATH.
let ptyDriver = #"""
import os, pty, sys, time, select, termios
# usage: drive.py EVENTS_FILE SCRIPT [--transcript=PATH] -- COMMAND...
# SCRIPT: comma-separated steps "hold:SECONDS" (send a space every 40 ms) or "wait:SECONDS".
events, script = sys.argv[1], sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1:]
options = [a.split("=", 1)[1] for a in sys.argv[3:sys.argv.index("--")] if a.startswith("--transcript=")]
transcript = open(options[0], "wb") if options else None
master, terminal = pty.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    out = os.open(events, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.login_tty(terminal)
    os.dup2(out, 1)
    os.execvp(command[0], command)
fd = master
def receive():
    data = os.read(fd, 4096)
    if transcript:
        transcript.write(data)
        transcript.flush()
    return data
def drain(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], max(0, min(0.04, end - time.monotonic())))
        if r:
            try: receive()
            except OSError: return
# The steps start once the program reads keys one at a time (it turned ICANON off), at most 20 s
# after it started: keys sent earlier would wait in the terminal's line buffer and reach it as
# one burst when it starts reading, and the session would start late.
ready_by = time.monotonic() + 20
while termios.tcgetattr(terminal)[3] & termios.ICANON and time.monotonic() < ready_by:
    drain(0.02)
os.close(terminal)
for step in script.split(","):
    kind, seconds = step.split(":")
    seconds = float(seconds)
    if kind == "hold":
        end = time.monotonic() + seconds
        last = None
        while time.monotonic() < end:
            now = time.monotonic()
            # A stand-in for a key's autorepeat that could not run for half a release gap did not
            # hold the key: it says so, and the run says nothing about the program.
            if last is not None and now - last > 0.5:
                sys.stderr.write("driver starved: no key for %.2f s while holding\n" % (now - last))
            last = now
            os.write(fd, b" ")
            drain(0.04)
    else:
        drain(seconds)
while True:
    r, _, _ = select.select([fd], [], [], 0.2)
    try:
        if r and not receive(): break
    except OSError: break
    done, status = os.waitpid(pid, os.WNOHANG)
    if done: break
else:
    pass
_, status = os.waitpid(pid, 0) if not done else (done, status)
print(os.waitstatus_to_exitcode(status))
"""#

/// A folder for one run of `snoozefuse nap` on a pty (the driver, its events, the terminal's bytes).
struct PtyRun {
    let folder: URL
    var driver: URL { folder.appendingPathComponent("drive.py") }
    /// snoozefuse's standard output (`--events jsonl`).
    var events: URL { folder.appendingPathComponent("events.jsonl") }
    /// Every byte the terminal received.
    var transcript: URL { folder.appendingPathComponent("terminal.bin") }

    init() throws {
        folder = try makeTemporaryDirectory()
        try ptyDriver.write(to: driver, atomically: true, encoding: .utf8)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: folder) }

    /// Runs `snoozefuse nap --preset quick-test --ring-limit 1 --device null --events jsonl` and
    /// `arguments` on a pty, following `script`. The driver prints snoozefuse's exit status.
    func napOnPty(_ script: String, _ arguments: [String] = [], environment: [String: String]? = nil) async throws -> ProcessResult {
        try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), [
            "python3", driver.path, events.path, script, "--transcript=\(transcript.path)", "--",
            snoozefuse.path, "nap", "--preset", "quick-test", "--ring-limit", "1", "--device", "null", "--events", "jsonl",
        ] + arguments, environment: environment)
    }
}

@Suite("snoozefuse nap in hold mode, on a real pty")
struct HoldModeTests {
    @Test func holdingReleasingAndReHoldingDriveTheSession() async throws {
        // The driver's key repeat must itself keep time: a run in which it was starved (a busy
        // machine held it past half a release gap) is run again, at most three times in all.
        var pty = try PtyRun()
        var result = try await pty.napOnPty("hold:1.5,wait:1.5,hold:0.5")
        for _ in 0 ..< 2 where result.standardError.contains("driver starved") {
            pty.cleanUp()
            pty = try PtyRun()
            result = try await pty.napOnPty("hold:1.5,wait:1.5,hold:0.5")
        }
        defer { pty.cleanUp() }
        #expect(!result.standardError.contains("driver starved"), "the key repeat never kept time: \(result.standardError)")
        let events = pty.events
        #expect(result.status == 0, "driver: \(result.standardOutput) \(result.standardError)")
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "snoozefuse's exit status")
        let lines = try String(contentsOf: events, encoding: .utf8).split(separator: "\n")
        let records = try lines.map { try JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
        let phases = records.filter { $0.event == "phase" }
        #expect(phases.map(\.phase) == ["holding", "releasing", "holding", "releasing", "napping", "ringing", "finished"])
        // The session starts at the first hold. The hold ends one release gap (0.75 s) after the
        // last autorepeat byte; a re-hold while releasing cancels the release timer, and the next
        // release runs its full 2 s. Generous bounds: this is real time on a shared machine.
        guard phases.count == 7 else { return }
        #expect(phases[0].t == 0)
        #expect((1.9...3.2).contains(phases[1].t), "released at \(phases[1].t)")
        #expect(phases[2].t > phases[1].t && phases[2].t < phases[1].t + 2, "re-held before the release ran out")
        #expect(abs(phases[4].t - phases[3].t - 2) <= 0.1, "the full release after the re-hold")
        #expect(abs(phases[5].t - phases[4].t - 5) <= 0.1, "the nap")
        #expect(records.last?.outcome == "ring_limit")
    }

    @Test func recordsMadeOutsideTheDriverCountFromTheFirstHoldToo() async throws {
        let pty = try PtyRun()
        defer { pty.cleanUp() }
        // 1.5 s in `ready` before the first hold; a sleep sound that cannot open is a warning at
        // the start of the release, stamped on the session's time line, not the program's.
        let result = try await pty.napOnPty("wait:1.5,hold:1", ["--sleep-sound", "noise", "--sleep-device", "nonexistent"])
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(result.standardError)")
        let lines = try String(contentsOf: pty.events, encoding: .utf8).split(separator: "\n")
        let records = try lines.map { try JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
        let released = try #require(records.first { $0.phase == "releasing" })
        let warning = try #require(records.first { $0.event == "warning" && !isMachineWarning($0.message ?? "") }, "\(lines)")
        #expect(abs(warning.t - released.t) < 0.5, "warning at t=\(warning.t), release at t=\(released.t)")
    }

    @Test func emittersGetTheHeartbeatWhileHoldingAndOnlyThen() async throws {
        let pty = try PtyRun()
        defer { pty.cleanUp() }
        let beats = pty.folder.appendingPathComponent("beats.txt")
        // The built-in `command` emitter appends each pulse's intensity to a file.
        let result = try await pty.napOnPty("hold:1.5", [
            "--bpm", "120", "--emitter", "command:min-interval=0,run=echo $SNOOZEFUSE_INTENSITY >> \(beats.path)",
        ])
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(result.standardError)")
        let intensities = try String(contentsOf: beats, encoding: .utf8).split(separator: "\n").map(String.init)
        // 120 bpm: a beat (1.0) every 0.5 s and a light one (0.7) 0.15 s after it, for the ~2.2 s
        // the hold lasts (1.5 s of autorepeat plus the release gap); then only the alarm's pulses (1.0).
        let light = intensities.filter { $0 == "0.700" }.count
        #expect((3...6).contains(light), "light heartbeat pulses: \(intensities)")
        #expect(intensities.first == "1.000", "the beat starts with a full pulse")
        #expect(intensities.allSatisfy { $0 == "1.000" || $0 == "0.700" })
    }

    /// A Wayland desktop where nothing tells the idle time (no GNOME, no org.freedesktop.ScreenSaver,
    /// no logind; the X server is not asked under Wayland): `--hold desktop` says so, with what each
    /// source answered, and on a terminal the nap is held by a key instead.
    @Test func aWaylandDesktopThatTellsNoIdleTimeFallsBackToAHeldKey() async throws {
        let pty = try PtyRun()
        defer { pty.cleanUp() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        var environment = ProcessInfo.processInfo.environment
        environment["WAYLAND_DISPLAY"] = "wayland-0"
        environment["XDG_SESSION_TYPE"] = "wayland"
        environment["DISPLAY"] = ":97"
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(bus.folder.path("no-system-bus"))"
        let isolated = try isolatingNapState(environment)
        defer { withExtendedLifetime(isolated.folder) {} }
        let result = try await pty.napOnPty("hold:1.5", ["--hold", "desktop"], environment: isolated.environment)
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "snoozefuse's exit status")
        let terminal = String(decoding: try Data(contentsOf: pty.transcript), as: UTF8.self)
        // On the terminal, one line (issue 42: the warnings before the nap were 12 lines); the whole
        // of it in the events.
        #expect(terminal.contains("snoozefuse: warning: --hold desktop: nothing here"), "\(terminal)")
        #expect(terminal.contains("(see snoozefuse doctor)"), "\(terminal)")
        let eventText = try String(contentsOf: pty.events, encoding: .utf8)
        #expect(eventText.contains("--hold desktop: nothing here tells how long the desktop has been idle"), "\(eventText)")
        #expect(eventText.contains("a Wayland session: its X server (XWayland) sees only the input of X programs"))
        #expect(eventText.contains("hold a key in this terminal instead"))
        let lines = eventText.split(separator: "\n")
        let records = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(records.first { $0["event"] as? String == "hold" }?["what"] as? String == "key")
        #expect(records.filter { $0["event"] as? String == "phase" }.compactMap { $0["phase"] as? String }
            == ["holding", "releasing", "napping", "ringing", "finished"])
    }

    /// `--hold none` is `--no-hold`; `--no-hold` beats a `--hold`, and the dry run says so on the
    /// `hold` line; a bare `--hold` (a flag in earlier releases) is refused with its new spelling.
    @Test func holdNoneIsNoHoldAndABareHoldIsToldItsNewSpelling() async throws {
        let isolated = try isolatingNapState(ProcessInfo.processInfo.environment)
        defer { withExtendedLifetime(isolated.folder) {} }
        let none = try await runProcess(snoozefuse, ["nap", "--preset", "quick-test", "--hold", "none", "--ring-limit", "1", "--device", "null",
                                                     "--events", "jsonl"], environment: isolated.environment)
        #expect(none.status == 0, "\(none.standardError)")
        let phases = none.standardOutput.split(separator: "\n").compactMap { line -> String? in
            let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return record?["event"] as? String == "phase" ? record?["phase"] as? String : nil
        }
        #expect(phases == ["releasing", "napping", "ringing", "finished"], "no hold: the release starts at once")
        let dry = try await runProcess(snoozefuse, ["nap", "--hold", "desktop", "--no-hold", "--dry-run"], environment: isolated.environment)
        #expect(dry.status == 0)
        let holdLine = dry.standardOutput.split(separator: "\n").first { $0.hasPrefix("hold ") }.map(String.init) ?? ""
        #expect(holdLine.contains("desktop") && holdLine.hasSuffix("--hold; this nap is held by nothing: no-hold wins"), "\(holdLine)")
        let json = try await runProcess(snoozefuse, ["nap", "--hold", "desktop", "--no-hold", "--dry-run", "--json"], environment: isolated.environment)
        let document = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        let entries = document?["settings"] as? [[String: Any]] ?? []
        #expect(entries.first { $0["key"] as? String == "hold" }?["effective"] as? String == "none")
        #expect(entries.first { $0["key"] as? String == "volume" }?["effective"] == nil)
        for arguments in [["nap", "--hold"], ["nap", "--hold", "--dry-run"]] {
            let bare = try await runProcess(snoozefuse, arguments, environment: isolated.environment)
            #expect(bare.status == 64)
            #expect(bare.standardError.contains("Missing value for '--hold <key|desktop|none>'"), "\(bare.standardError)")
            #expect(bare.standardError.contains("--hold key is the --hold of earlier releases"))
        }
        // A --hold with its value is no old spelling, whatever else is wrong; help is no error.
        let other = try await runProcess(snoozefuse, ["nap", "--hold", "key", "--bogus"], environment: isolated.environment)
        #expect(other.status == 64 && !other.standardError.contains("earlier releases"), "\(other.standardError)")
        let help = try await runProcess(snoozefuse, ["nap", "--help"], environment: isolated.environment)
        #expect(help.status == 0 && help.standardOutput.contains("--hold <key|desktop|none>") && !help.standardError.contains("earlier releases"))
        let plain = try await runProcess(snoozefuse, ["nap", "--hold", "desktop", "--dry-run", "--json"], environment: isolated.environment)
        let plainEntries = (try JSONSerialization.jsonObject(with: Data(plain.standardOutput.utf8)) as? [String: Any])?["settings"] as? [[String: Any]] ?? []
        #expect(plainEntries.first { $0["key"] as? String == "hold" }?["value"] as? String == "desktop")
        #expect(plainEntries.first { $0["key"] as? String == "hold" }?["effective"] == nil, "nothing overrides it")
    }

    @Test func holdModeWithoutATerminalIsAUsageError() async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--preset", "quick-test"])
        #expect(result.status == 64)
        #expect(result.standardError.contains("standard input is not one; use --hold desktop (your use of the machine holds the nap) or --no-hold"))
    }
}

/// The built-in `command` emitter runs its command with `/bin/sh -c --`: a command that starts
/// with a dash is the command, not an option of the shell (`run=--version` was given to sh as
/// its option, which refused it). Here a program named `--beat`, found on PATH, marks each pulse.
@Suite struct CommandEmitterDashTests {
    @Test func aCommandThatStartsWithADashRuns() async throws {
        let home = try NapHome()
        let bin = home.folder.path("bin"), marks = home.folder.path("marks.txt")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\necho pulse >> '\(marks)'\n".write(toFile: bin + "/--beat", atomically: true, encoding: .utf8)
        chmod(bin + "/--beat", 0o755)
        var withBin = home.environment
        withBin["PATH"] = bin + ":" + (withBin["PATH"] ?? "/usr/bin:/bin")
        let environment = withBin
        let result = try await onOwnThread {
            try runProcessBlocking(BuiltProducts.executable("snoozefuse"),
                                   ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "2", "--device", "null", "--quiet",
                                    "--emitter", "command:min-interval=0,run=--beat"], environment: environment)
        }
        #expect(result.status == 0, "\(result.standardError)")
        let pulses = ((try? String(contentsOfFile: marks, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(!pulses.isEmpty, "the command ran for no pulse: \(result.standardError)")
    }
}

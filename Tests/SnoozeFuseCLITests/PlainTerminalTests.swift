import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// What a sleepy person reads on a real pseudo-terminal (`script`, its bytes recorded as written):
/// no cursor movement where the terminal cannot do it, one line per change for a screen reader,
/// and one line of warnings before the nap, the whole of them in the events (issue 42).
@Suite("A terminal that cannot move its cursor, a screen reader, and a machine without D-Bus")
struct PlainTerminalTests {
    /// Runs `snoozefuse arguments…` on a pseudo-terminal with `environment` added, its events into
    /// `events.jsonl`; returns everything written to the terminal, as bytes become text.
    static func onATerminal(_ home: NapHome, _ arguments: [String], environment extra: [String: String]) throws -> (screen: String, status: Int32) {
        let program = ([BuiltProducts.executable("snoozefuse").path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let typescript = home.folder.path("typescript")
        var environment = home.environment
        for (key, value) in extra { environment[key] = value }
        let result = try runProcessBlocking(executableInPath("script"), [
            "-q", "-e", "-c", "\(program) > '\(home.folder.path("events.jsonl"))'", typescript,
        ], environment: environment)
        let bytes = FileManager.default.contents(atPath: typescript) ?? Data()
        return (String(decoding: bytes, as: UTF8.self), result.status)
    }

    static let nap = ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "2", "--device", "null", "--events", "jsonl"]

    /// TERM=dumb, and --plain on a terminal that could: no escape sequence at all (the status area
    /// was redrawn every second with cursor movement and block characters), each change one line
    /// (the phases, the alarm once), and the nap as it always is.
    @Test(arguments: [(["TERM": "dumb"], [String]()), (["TERM": "xterm-256color"], ["--plain"])])
    func oneLinePerChangeAndNoCursorMovement(_ environment: [String: String], _ flags: [String]) async throws {
        let seen = try await script { home, seen in
            let (screen, status) = try Self.onATerminal(home, Self.nap + flags, environment: environment)
            seen.numbers["status"] = Double(status)
            seen.texts["screen"] = screen
        }
        let screen = seen.texts["screen"] ?? ""
        #expect(seen.numbers["status"] == 0, "\(screen)")
        #expect(!screen.contains("\u{1B}"), "an escape sequence: \(screen.debugDescription)")
        #expect(!screen.contains("█") && !screen.contains("░"), "\(screen)")
        // `\r\n` is one Character: split on any newline.
        let lines = screen.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\u{07}")) }
        for phase in ["releasing", "napping", "ringing", "finished"] {
            #expect(lines.filter { $0.hasPrefix("snoozefuse: \(phase)") }.count == 1, "\(phase) said once: \(lines)")
        }
        // When each timer runs out, on the clock and from now (not the session's own seconds).
        let napping = lines.first { $0.hasPrefix("snoozefuse: napping") } ?? ""
        #expect(napping.range(of: #"^snoozefuse: napping until \d\d:\d\d:\d\d \(in 1s\)$"#, options: .regularExpression) != nil, "\(napping)")
        #expect(lines.contains { $0.hasPrefix("snoozefuse: type ") && $0.hasSuffix("then Enter to stop the alarm (s snoozes)") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("snoozefuse: the alarm rang for its limit and stopped.") }, "\(lines)")
    }

    /// Without a system bus: what went wrong is one line (the inhibitor's warning alone was 6 lines
    /// at 80 columns, 10 at 40), naming where the details are; the whole of every warning is in
    /// the events, and with --verbose on screen.
    @Test func theWarningsBeforeTheNapAreOneLine() async throws {
        let seen = try await script { home, seen in
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system_bus_socket", "DBUS_SESSION_BUS_ADDRESS": "",
                               "DISPLAY": "", "WAYLAND_DISPLAY": "", "TERM": "xterm-256color"]
            let quiet = try Self.onATerminal(home, Self.nap, environment: environment)
            seen.texts["screen"] = quiet.screen
            seen.texts["events"] = (try? String(contentsOfFile: home.folder.path("events.jsonl"), encoding: .utf8)) ?? ""
            let verbose = try Self.onATerminal(home, Self.nap + ["--verbose"], environment: environment)
            seen.texts["verbose"] = verbose.screen
        }
        let screen = seen.texts["screen"] ?? ""
        // Each from its text on (the status area's clearing comes before it on the same line).
        let warnings = screen.split(whereSeparator: \.isNewline).compactMap { line in
            line.range(of: "snoozefuse: warning:").map { String(line[$0.lowerBound...]) }
        }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.allSatisfy { $0.count <= 80 && $0.hasSuffix("(see snoozefuse doctor)") }, "\(warnings)")
        let events = seen.texts["events"] ?? ""
        #expect(events.contains("nothing keeps this machine awake during the nap") && events.contains("install and start D-Bus"), "\(events)")
        #expect(seen.texts["verbose"]?.contains("install and start D-Bus") == true, "\(seen.texts["verbose"] ?? "")")
    }

    /// A plain nap killed before its alarm, where no audio output opens: its guardian's bell rings
    /// on the nap's terminal as plainly (it wrote a line redrawn in place with `ESC [2K` at every
    /// ring).
    @Test func theGuardianOfAPlainNapRingsPlainly() async throws {
        let seen = try await script { home, seen in
            let program = ([BuiltProducts.executable("snoozefuse").path] + ["nap", "--no-hold", "--release", "0", "--nap", "3", "--ring-limit", "2",
                                                                 "--device", "default", "--events", "jsonl", "--dismiss", "key", "--quiet"])
                .map { "'\($0)'" }.joined(separator: " ")
            let typescript = home.folder.path("typescript")
            var environment = home.environment
            environment["TERM"] = "dumb"
            // No output opens (a card that is not there, no sound server): the alarm is the bell.
            let alsa = home.folder.path("alsa.conf")
            try "pcm.!default { type hw card 99 }\n".write(toFile: alsa, atomically: true, encoding: .utf8)
            environment["ALSA_CONFIG_PATH"] = alsa
            environment["PULSE_SERVER"] = "unix:" + home.folder.path("no-pulse")
            // The terminal stays while the guardian rings: the shell sleeps on after the kill.
            let result = try runProcessBlocking(executableInPath("script"), [
                // Killed once it has saved its napping state (its guardian is told first, so it
                // knows the alarm; the state written during the set-up is not that), at most 10 s on.
                "-q", "-e", "-c", "\(program) > '\(home.folder.path("events.jsonl"))' & nap=$!; "
                    + "for i in $(seq 100); do grep -q '\"phase\":\"napping\"' '\(home.sessionFile)' 2>/dev/null && break; sleep 0.1; done; "
                    + "kill -9 $nap; sleep 5.5",
                typescript,
            ], environment: environment)
            seen.numbers["status"] = Double(result.status)
            seen.texts["screen"] = String(decoding: FileManager.default.contents(atPath: typescript) ?? Data(), as: UTF8.self)
            seen.texts["guardian"] = (try? String(contentsOfFile: home.guardianLog, encoding: .utf8)) ?? ""
        }
        let screen = seen.texts["screen"] ?? ""
        #expect(seen.texts["guardian"]?.contains("\"ringing\"") == true, "the guardian rang: \(seen.texts["guardian"] ?? "")")
        #expect(screen.contains("\u{07}ALARM (nap over)"), "the guardian's bell on the nap's terminal: \(screen.debugDescription)")
        #expect(screen.components(separatedBy: "ALARM (nap over)").count == 2, "one line, then the bell alone: \(screen.debugDescription)")
        #expect(!screen.contains("\u{1B}"), "an escape sequence: \(screen.debugDescription)")
    }
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// The word the screen asks for (`type maple then Enter…`).
func askedWord(_ lines: [String]) -> String? {
    for line in lines {
        guard let start = line.range(of: "type ")?.upperBound, let end = line.range(of: " then Enter", range: start ..< line.endIndex)?.lowerBound else { continue }
        let word = String(line[start ..< end])
        if !word.isEmpty, word.allSatisfy(\.isLetter) { return word }
    }
    return nil
}

/// The events of a nap's `--events jsonl` file, as `event:phase` pairs.
func eventKinds(_ home: NapHome, _ file: String = "events.jsonl") -> [String] {
    home.lines(home.folder.path(file)).map { ($0["event"] as? String ?? "") + ":" + ($0["phase"] as? String ?? "") }
}

@Suite("The interactive nap on a real terminal: the status area, the keys, the dismissal", .serialized)
struct InteractiveNapTests {
    /// The status area at each phase, at 80 and 40 columns, with colour and with NO_COLOR.
    @Test(arguments: [(80, false), (40, false), (80, true), (40, true)])
    func theStatusAreaAtEachPhase(width: Int, noColour: Bool) async throws {
        let seen = try await script { home, seen in
            let window = try TerminalWindow(home: home, width: width, [
                "nap", "--release", "2", "--nap", "3", "--max", "1m", "--snooze", "3", "--device", "null", "--events", "jsonl",
            ], environment: ["NO_COLOR": noColour ? "1" : ""])
            defer { window.close() }
            var screens: [String: [String]] = [:]
            screens["ready"] = window.waitForScreen { $0.contains { $0.hasPrefix("ready: hold any key") } }
            // Hold a key: the heartbeat glyph turns with the beat while holding.
            var glyphs: Set<String> = []
            let end = ContinuousClock.now.advanced(by: .milliseconds(2_500))
            while ContinuousClock.now < end {
                window.type(" ")
                usleep(40_000)
                let lines = window.screen()
                if let line = lines.first(where: { $0.contains("holding") }) {
                    screens["holding"] = lines
                    if line.contains("♥") { glyphs.insert("♥") }
                    if line.contains("♡") { glyphs.insert("♡") }
                }
            }
            seen.texts["glyphs"] = glyphs.sorted().joined()
            screens["releasing"] = window.waitForScreen { $0.contains { $0.hasPrefix("releasing") && $0.contains("[") } }
            seen.texts["releasing colours"] = window.screen(escapes: true).joined(separator: "\n")
            screens["napping"] = window.waitForScreen { $0.contains { $0.hasPrefix("napping") && $0.contains("█") } }
            screens["ringing"] = window.waitForScreen { $0.contains { $0.hasPrefix("RINGING") } && askedWord($0) != nil }
            seen.texts["ringing colours"] = window.screen(escapes: true).joined(separator: "\n")
            window.type("s")
            screens["snoozed"] = window.waitForScreen { $0.contains { $0.hasPrefix("snoozed") } }
            if let again = window.waitForScreen(.seconds(30), { $0.contains { $0.hasPrefix("RINGING") } }), let word = askedWord(again) {
                window.type(word)
                window.press("Enter")
            }
            seen.steps["ended"] = waitFor { window.status != nil }
            seen.numbers["status"] = Double(window.status ?? -1)
            for (phase, lines) in screens { seen.texts[phase] = lines.joined(separator: "\n") }
        }
        let context = "\(seen.texts)"
        for phase in ["ready", "holding", "releasing", "napping", "ringing", "snoozed"] {
            let screen = try #require(seen.texts[phase], "the \(phase) screen was seen: \(context)")
            // The area (the last two lines) never wraps: each line fits the width (tmux would
            // show a wrapped line as two).
            for line in screen.split(separator: "\n").suffix(2) {
                #expect(line.count < width, "\(phase) at \(width): '\(line)'")
            }
        }
        let holding = seen.texts["holding"] ?? ""
        #expect(holding.contains("holding") && holding.contains("let go as you fall asleep"), "\(holding)")
        #expect(seen.texts["glyphs"] == "♡♥", "the heartbeat glyph turned: \(seen.texts["glyphs"] ?? "")")
        let releasing = seen.texts["releasing"] ?? ""
        #expect(releasing.contains("wake at "), "\(releasing)")
        #expect(releasing.contains("hold a key again"), "\(releasing)")
        let napping = seen.texts["napping"] ?? ""
        #expect(napping.contains("napping  ") && napping.contains("s  [") && napping.contains("]"), "remaining time and progress: \(napping)")
        #expect(napping.contains("+/- one minute"), "\(napping)")
        if width >= 80 {
            // The failsafe's time only where there is room.
            #expect(napping.contains("(latest "), "\(napping)")
        }
        let ringing = seen.texts["ringing"] ?? ""
        #expect(ringing.contains("RINGING") && ringing.contains("then Enter to stop"), "\(ringing)")
        let snoozed = seen.texts["snoozed"] ?? ""
        #expect(snoozed.contains("snoozed") && snoozed.contains("then Enter to stop") && snoozed.contains("rings at"), "\(snoozed)")
        // Colour only without NO_COLOR (tmux shows attributes as escape sequences).
        let coloured = (seen.texts["releasing colours"] ?? "") + (seen.texts["ringing colours"] ?? "")
        #expect(coloured.contains("\u{1B}[") == !noColour, "\(coloured.debugDescription)")
        #expect(seen["ended"] && seen.numbers["status"] == 0, "\(context)")
    }

    @Test func oneEnterSpaceOrDDoesNotStopTheAlarmAWrongWordDoesNotTheWordDoes() async throws {
        let seen = try await script { home, seen in
            let window = try TerminalWindow(home: home, width: 80, [
                "nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--device", "null", "--events", "jsonl",
            ])
            defer { window.close() }
            guard let ringing = window.waitForScreen(.seconds(30), { askedWord($0) != nil }), let word = askedWord(ringing) else { return }
            seen.texts["word"] = word
            window.press("Enter")
            window.press("Space")
            window.type("d")
            window.press("Enter")
            usleep(800_000)
            seen.steps["rings after Enter, space, d"] = home.state()?["phase"] as? String == "ringing" && window.status == nil
            // A wrong word, then Backspace over a typo, then the word.
            window.type(word == "apple" ? "lemon" : "apple")
            window.press("Enter")
            seen.steps["told it is wrong"] = window.waitForScreen { $0.contains { $0.contains("not the word: type \(word)") } } != nil
            seen.steps["rings after a wrong word"] = home.state()?["phase"] as? String == "ringing" && window.status == nil
            window.type(String(word.dropLast()) + "x")
            window.press("BSpace")
            seen.texts["typed"] = window.waitForScreen { $0.contains { $0.hasSuffix("> " + word.dropLast()) } }?.joined(separator: "\n")
            window.type(String(word.last!))
            window.press("Enter")
            seen.steps["ended"] = waitFor { window.status != nil }
            seen.numbers["status"] = Double(window.status ?? -1)
            seen.texts["outcome"] = home.lines(home.folder.path("events.jsonl")).last?["outcome"] as? String
            seen.texts["last words"] = window.screen().last { $0.contains("alarm stopped") }
        }
        // How long the nap was (1 s, from the end of the release to the alarm), and a greeting for the hour.
        let greetings = ["Good morning.", "Good afternoon.", "Good evening.", "It is the middle of the night: welcome back."]
        #expect(seen.texts["last words"].map { words in words.hasPrefix("snoozefuse: alarm stopped. You slept 1s. ") && greetings.contains { words.hasSuffix($0) } } == true,
                "\(seen.texts)")
        #expect(seen["rings after Enter, space, d"], "\(seen.texts)")
        #expect(seen["told it is wrong"], "\(seen.texts)")
        #expect(seen["rings after a wrong word"])
        #expect(seen.texts["typed"] != nil, "Backspace took the typo back: \(seen.texts)")
        #expect(seen["ended"] && seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "dismissed")
        let word = try #require(seen.texts["word"])
        #expect(!word.contains("s") && !word.contains("q"), "the word has no key that snoozes or cancels")
    }

    @Test func sSnoozesAndTheAlarmReturnsPlusAndMinusMoveItQNeedsAConfirmation() async throws {
        let seen = try await script { home, seen in
            let window = try TerminalWindow(home: home, width: 80, [
                "nap", "--no-hold", "--release", "0", "--nap", "2m", "--max", "10m", "--snooze", "2", "--device", "null",
                "--events", "jsonl", "--dismiss", "key",
            ])
            defer { window.close() }
            seen.steps["napping"] = window.waitForScreen { $0.contains { $0.hasPrefix("napping") } } != nil
            // + then - then - : the alarm moves by a minute each time, in the events.
            window.type("+")
            _ = waitFor { eventKinds(home).filter { $0 == "adjusted:napping" }.count == 1 }
            window.type("-")
            _ = waitFor { eventKinds(home).filter { $0 == "adjusted:napping" }.count == 2 }
            window.type("-")
            _ = waitFor { eventKinds(home).filter { $0 == "adjusted:napping" }.count == 3 }
            let adjusted = home.lines(home.folder.path("events.jsonl")).filter { $0["event"] as? String == "adjusted" }
            seen.texts["adjustments"] = adjusted.compactMap { $0["message"] as? String }.joined(separator: "; ")
            seen.numbers["until after +"] = adjusted.first?["until"] as? Double ?? 0
            seen.numbers["until after - -"] = adjusted.last?["until"] as? Double ?? 0
            // q, then any other key: the nap goes on.
            window.type("q")
            seen.steps["asked"] = window.waitForScreen { $0.contains { $0.contains("cancel nap? y yes") } } != nil
            window.type("n")
            seen.steps["kept"] = window.waitForScreen { $0.contains { $0.contains("+/- one minute · q cancels") } } != nil
            seen.steps["still napping"] = home.state()?["phase"] as? String == "napping" && window.status == nil
            // Down to the shortest wait (10 s from now), then s snoozes once it rings.
            for _ in 0 ..< 3 { window.type("-") }
            seen.steps["rang"] = waitFor(.seconds(30)) { eventKinds(home).contains("alarm:") }
            window.type("s")
            seen.steps["snoozed"] = waitFor { eventKinds(home).contains("phase:snoozed") }
            seen.steps["rang again"] = waitFor { eventKinds(home).filter { $0 == "phase:ringing" }.count == 2 }
            // q then y cancels (key mode: q is offered while ringing).
            window.type("q")
            window.type("y")
            seen.steps["ended"] = waitFor { window.status != nil }
            seen.numbers["status"] = Double(window.status ?? -1)
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen.texts["adjustments"] == "the alarm moved by +1m; the alarm moved by -1m; the alarm moved by -1m", "\(seen.texts)")
        let plus = try #require(seen.numbers["until after +"]), minus = try #require(seen.numbers["until after - -"])
        #expect(abs(plus - 180) < 2, "2 min nap + 1 min: \(plus)")
        #expect(abs(minus - 60) < 2, "then two minutes less: \(minus)")
        #expect(seen["asked"] && seen["kept"] && seen["still napping"], "\(seen.texts)")
        #expect(seen["rang"] && seen["snoozed"] && seen["rang again"], "\(seen.texts)")
        #expect(seen["ended"] && seen.numbers["status"] == 1, "cancelled: \(seen.texts)")
    }

    @Test func aKeyHeldForThreeSecondsStopsTheAlarmAShorterHoldDoesNot() async throws {
        let seen = try await script { home, seen in
            let window = try TerminalWindow(home: home, width: 80, [
                "nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--device", "null", "--events", "jsonl",
                "--dismiss", "hold",
            ])
            defer { window.close() }
            seen.steps["asks for a hold"] = window.waitForScreen { $0.contains { $0.contains("hold any key for 3 s to stop") } } != nil
            window.hold(seconds: 1.5)
            usleep(1_000_000)
            seen.steps["rings after a short hold"] = home.state()?["phase"] as? String == "ringing" && window.status == nil
            window.hold(seconds: 3.6)
            seen.steps["ended"] = waitFor { window.status != nil }
            seen.numbers["status"] = Double(window.status ?? -1)
            seen.texts["outcome"] = home.lines(home.folder.path("events.jsonl")).last?["outcome"] as? String
        }
        #expect(seen["asks for a hold"], "\(seen.texts)")
        #expect(seen["rings after a short hold"], "\(seen.texts)")
        #expect(seen["ended"] && seen.numbers["status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "dismissed")
    }

    /// The terminal is given back as it was: after the alarm is stopped, and after SIGTERM.
    @Test(arguments: ["dismissed", "SIGTERM"])
    func theTerminalIsRestored(ending: String) async throws {
        let seen = try await script { home, seen in
            let window = try TerminalWindow(home: home, width: 80, [
                "nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "1m", "--device", "null", "--dismiss", "key",
            ])
            defer { window.close() }
            seen.steps["ringing"] = window.waitForScreen { $0.contains { $0.hasPrefix("RINGING") } } != nil
            if ending == "SIGTERM", let pid = (home.state()?["pid"] as? NSNumber)?.int32Value {
                kill(pid, SIGTERM)
            } else {
                window.press("Enter")
            }
            seen.steps["ended"] = waitFor { window.status != nil && window.terminalSettings.after != nil }
            seen.numbers["status"] = Double(window.status ?? -1)
            seen.texts["before"] = window.terminalSettings.before
            seen.texts["after"] = window.terminalSettings.after
        }
        #expect(seen["ringing"] && seen["ended"], "\(seen.texts)")
        #expect(seen.numbers["status"] == (ending == "SIGTERM" ? 1 : 0))
        let before = try #require(seen.texts["before"]), after = try #require(seen.texts["after"])
        #expect(before.contains("icanon") && before.contains("echo"), "a cooked terminal to start with: \(before)")
        #expect(before == after)
    }

    @Test func stopFromAnotherTerminalAsksWhatTheNapsTerminalAsks() async throws {
        let seen = try await script { home, seen in
            let window = try TerminalWindow(home: home, width: 80, [
                "nap", "--no-hold", "--release", "0", "--nap", "3", "--max", "1m", "--device", "null", "--events", "jsonl",
            ])
            defer { window.close() }
            seen.steps["napping"] = window.waitForScreen { $0.contains { $0.hasPrefix("napping") } } != nil
            // Before the alarm, stop without a terminal cancels only with --yes.
            let unconfirmed = try home.run(["stop"])
            seen.numbers["unconfirmed status"] = Double(unconfirmed.status)
            seen.texts["unconfirmed"] = unconfirmed.standardError
            seen.steps["goes on"] = home.state()?["phase"] as? String == "napping"
            seen.steps["rang"] = waitFor { eventKinds(home).contains("alarm:") }
            // Ringing: without a terminal, the word cannot be typed.
            let scripted = try home.run(["stop"])
            seen.numbers["scripted status"] = Double(scripted.status)
            seen.texts["scripted"] = scripted.standardError
            seen.steps["still ringing"] = home.state()?["phase"] as? String == "ringing"
            // On another terminal: it shows the word; a wrong one keeps ringing, the word stops it.
            let wrong = try TerminalWindow(home: home, width: 80, name: "wrong", ["stop"], events: "wrong.out")
            defer { wrong.close() }
            if let asked = wrong.waitForScreen(.seconds(30), { askedWord($0) != nil }), let word = askedWord(asked) {
                wrong.type(word == "apple" ? "lemon" : "apple")
                wrong.press("Enter")
            }
            seen.steps["wrong ended"] = waitFor { wrong.status != nil }
            seen.numbers["wrong status"] = Double(wrong.status ?? -1)
            seen.steps["rings after a wrong word"] = home.state()?["phase"] as? String == "ringing"
            let other = try TerminalWindow(home: home, width: 80, name: "other", ["stop"], events: "other.out")
            defer { other.close() }
            if let asked = other.waitForScreen(.seconds(30), { askedWord($0) != nil }), let word = askedWord(asked) {
                other.type(word)
                other.press("Enter")
            }
            seen.steps["stopped"] = waitFor { window.status != nil }
            seen.numbers["other status"] = Double(other.status ?? -1)
            seen.numbers["nap status"] = Double(window.status ?? -1)
            seen.texts["outcome"] = home.lines(home.folder.path("events.jsonl")).last?["outcome"] as? String
        }
        #expect(seen["napping"], "\(seen.texts)")
        #expect(seen.numbers["unconfirmed status"] == 1 && seen.texts["unconfirmed"]?.contains("add --yes") == true, "\(seen.texts)")
        #expect(seen["goes on"])
        #expect(seen["rang"])
        #expect(seen.numbers["scripted status"] == 1 && seen.texts["scripted"]?.contains("on a terminal") == true, "\(seen.texts)")
        #expect(seen["still ringing"])
        #expect(seen["wrong ended"] && seen.numbers["wrong status"] == 1, "\(seen.texts)")
        #expect(seen["rings after a wrong word"])
        #expect(seen["stopped"] && seen.numbers["other status"] == 0 && seen.numbers["nap status"] == 0, "\(seen.texts)")
        #expect(seen.texts["outcome"] == "dismissed")
    }
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// QuickParse (the short commands parsed without ArgumentParser's reflection, issue 23) and
/// ArgumentParser give the same command for every form QuickParse takes, and QuickParse leaves
/// every other form to ArgumentParser; its table of names is what the command definitions say.
@Suite("QuickParse agrees with ArgumentParser")
struct QuickParseTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What each parser made of `arguments` (the binary's --quick-parse-check: nothing runs).
    func parsed(_ arguments: [String]) async throws -> (quick: String, full: String) {
        let state = try isolatingNapState(ProcessInfo.processInfo.environment)
        defer { withExtendedLifetime(state) {} }
        let result = try await runProcess(snoozefuse, ["--quick-parse-check"] + arguments, environment: state.environment)
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let quick = lines.first { $0.hasPrefix("quick: ") }.map { String($0.dropFirst(7)) } ?? "?"
        let full = lines.first { $0.hasPrefix("full: ") }.map { String($0.dropFirst(6)) } ?? "?"
        return (quick, full)
    }

    @Test(arguments: [
        ["--version"], ["status"], ["status", "--json"], ["status", "--follow"], ["status", "--format", "json"],
        ["status", "--format", "waybar", "--follow"], ["status", "--json", "--format", "text"], ["stop"], ["stop", "-y"],
        ["stop", "--yes"], ["snooze"], ["snooze", "5m"], ["snooze", "90"], ["snooze", "1h2m3s"], ["snooze", "--", "10m"],
        ["add", "1m"], ["add", "--", "-45s"], ["add", "--", "2m"], ["presets", "list"], ["presets", "list", "--json"],
        ["sounds", "play"], ["sounds", "play", "chime"], ["sounds", "play", "a b.wav", "--device", "null", "--duration", "2", "--volume", "100", "--fade-in", "0"],
        ["sounds", "play", "--volume", "0", "--events", "jsonl", "--", "-odd.wav"], ["sounds", "play", "--duration", "1h2m", "--fade-in", "3s", "x.caf"],
    ])
    func theFormsItTakesGiveArgumentParsersCommand(_ arguments: [String]) async throws {
        let (quick, full) = try await parsed(arguments)
        #expect(quick != "none" && quick != "?", "\(arguments): QuickParse should take it")
        #expect(quick == full, "\(arguments)")
    }

    @Test(arguments: [
        ["status", "--help"], ["status", "-h"], ["status", "--version"], ["status", "--format=json"], ["status", "--format", "bogus"],
        ["status", "--format"], ["status", "--json", "--json"], ["status", "extra"], ["stop", "--yes", "-y"], ["stop", "-yy"],
        ["snooze", "soon"], ["snooze", "5m", "6m"], ["add"], ["add", "-45s"], ["add", "1x"], ["add", "--", "-"], ["presets"],
        ["presets", "list", "--help"], ["nap"], ["history", "list"], [], ["presets list"], ["presets list", "--json"], ["status "],
        ["sounds", "play", "--volume", "101"], ["sounds", "play", "--volume", "loud"], ["sounds", "play", "--duration", "soon"],
        ["sounds", "play", "--events", "xml"], ["sounds", "play", "a", "b"], ["sounds", "play", "--volume=5"], ["sounds", "play", "--volume", "-5"],
        ["sounds", "play", "--help"], ["sounds", "play", "--device"], ["sounds"],
    ])
    func everyOtherFormIsLeftToArgumentParser(_ arguments: [String]) async throws {
        let (quick, _) = try await parsed(arguments)
        #expect(quick == "none", "\(arguments)")
    }

    /// 300 argument lists drawn (with a fixed seed) from the commands' words, flags, values and
    /// a few wrong ones: wherever QuickParse takes a list, its command is ArgumentParser's.
    @Test func anyArgumentsItTakesGiveArgumentParsersCommand() async throws {
        let heads = [["status"], ["stop"], ["snooze"], ["add"], ["presets", "list"], ["presets"], [], ["sounds", "play"]]
        let tokens = ["--json", "--follow", "--format", "json", "text", "waybar", "bogus", "-y", "--yes", "--", "5m", "-45s", "90",
                      "1h2m", "x", "-", "--help", "-h", "--version", "--format=json", "list", "status", "-yy", "",
                      "--volume", "--device", "--duration", "--fade-in", "--events", "jsonl", "null", "chime", "100", "0", "101"]
        var seed: UInt64 = 0x5EED_23
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var taken = 0
        for _ in 0 ..< 300 {
            let arguments = heads[next(heads.count)] + (0 ..< next(4)).map { _ in tokens[next(tokens.count)] }
            let (quick, full) = try await parsed(arguments)
            #expect(quick == "none" || quick == full, "\(arguments)")
            if quick != "none" { taken += 1 }
        }
        // The draw is not all refusals: QuickParse took a fair share of it.
        #expect(taken >= 30, "QuickParse took \(taken) of 300")
    }

    @Test func itsTableIsWhatTheCommandDefinitionsSay() async throws {
        let script = Self.packageRoot.appendingPathComponent("Scripts/quick-parse-table.py").path
        let result = try await runProcess(executableInPath("python3"), [script, snoozefuse.path, "--check"])
        #expect(result.status == 0, "\(result.standardError)")
    }
}

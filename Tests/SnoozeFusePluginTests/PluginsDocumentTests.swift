import Foundation
import SnoozeFuseAudio
@testable import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

/// PLUGINS.md is what a plugin author writes from: its table of limits is the program's constants,
/// its exit codes of `plugins check` are what the program exits with, and its skeleton builds and
/// passes the check (an author following it found the hang limit, the exit codes and the summary
/// each said differently in the document and by the program).
@Suite("PLUGINS.md says what the program does")
struct PluginsDocumentTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    static func document() throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent("PLUGINS.md"), encoding: .utf8)
    }

    /// The section under `heading`, to the next `## `.
    static func section(_ heading: String) throws -> Substring {
        let text = try document()
        guard let start = text.range(of: "\n" + heading + "\n") else { return "" }
        let rest = text[start.upperBound...]
        return rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
    }

    /// The rows `| name | value |` of "Limits and exit codes".
    static func table() throws -> [String: String] {
        var rows: [String: String] = [:]
        for line in try section("## Limits and exit codes").split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2, cells[0] != "name" else { continue }
            rows[cells[0]] = cells[1]
        }
        return rows
    }

    /// A duration as the table writes it: `10 s`, `0.5 s`, `0.25 s`.
    static func written(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard attoseconds != 0 else { return "\(seconds) s" }
        var fraction = String(String(attoseconds).reversed().drop { $0 == "0" }.reversed())
        fraction = String(repeating: "0", count: 18 - String(attoseconds).count) + fraction
        return "\(seconds).\(fraction) s"
    }

    @Test func everyLimitInTheTableIsTheProgramsOwn() throws {
        let now = ContinuousClock.now
        let source = SourceLiveness(started: now).limits, emitter = EmitterLiveness(started: now).limits
        let limits: [String: String] = [
            "scan start limit": Self.written(PluginScanner.startLimit),
            "scan load limit": Self.written(PluginScanner.loadLimit),
            "config check limit": Self.written(PluginConfigCheck.deadline),
            "source start-up": Self.written(source.startup),
            "source gap limit": Self.written(source.budget),
            "emitter start-up": Self.written(emitter.startup),
            "emitter pulse limit": Self.written(emitter.budget),
            "end grace": Self.written(PluginChildProcess.termGrace),
            "emitter end limit": Self.written(PluginChildProcess.emitterEndLimit),
            "alarm silence limit": Self.written(AlarmRenderer.silenceLimit),
            "check start limit": Self.written(PluginValidation.startLimit),
            "check load limit": Self.written(PluginCheckPhase.load.limit),
            "check create limit": Self.written(PluginCheckPhase.create.limit),
            "check render limit": Self.written(PluginCheckPhase.render.limit),
            "check render audio": "\(PluginCheck.renderSeconds) s",
            "check realtime audio": "\(PluginCheck.watchedSeconds) s",
            "check emit limit": Self.written(PluginCheck.emitDeadline),
            "check kill grace": Self.written(PluginValidation.grace),
            "check busy allowance": "\(PluginValidation.busyMachineAllowance)",
        ]
        let table = try Self.table()
        #expect(Self.written(.milliseconds(250)) == "0.25 s" && Self.written(.seconds(10)) == "10 s")
        for (name, value) in limits.sorted(by: { $0.key < $1.key }) {
            #expect(table[name] == value, "PLUGINS.md says \(name) is \(table[name] ?? "nothing"); the program's is \(value)")
        }
        let exits = Set(table.keys.filter { $0.hasPrefix("exit ") })
        #expect(Set(table.keys).subtracting(exits) == Set(limits.keys), "rows the test does not know: \(table.keys.sorted())")
        #expect(exits == ["exit 0", "exit 3", "exit 64", "exit 65", "exit 70"], "\(exits.sorted())")
    }

    /// Each exit of `plugins check` the table lists, made to happen: 0 for the document's own
    /// skeleton (built from its code block), 3 for a check that could not run, 65 for a file that
    /// is no plugin, 64 for a command line without a path, 70 without the host program beside
    /// the binary. The skeleton's summary says all its checks passed; a skipped one is never
    /// counted as passed.
    @Test func everyExitInTheTableHappensAsItSays() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let skeleton = try Self.section("## A minimal sound source")
        let code = try #require(skeleton.components(separatedBy: "```c\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let source = folder.path + "/hum.c"
        try code.write(toFile: source, atomically: true, encoding: .utf8)
        let hum = try folder.buildC("hum.so", source: source)
        let passed = try runMergingOutput(snoozefuse, ["plugins", "check", hum])
        #expect(passed.status == 0, "\(passed.output)")
        #expect(passed.output.contains("\(hum): all 7 checks passed"), "\(passed.output)")

        let rumble = builtPlugin("rumble")
        let skipped = try runMergingOutput(snoozefuse, ["plugins", "check", rumble, "--config", "device=/nonexistent/event99"])
        #expect(skipped.status == 3, "\(skipped.output)")
        #expect(skipped.output.contains("not run (they need --config or a device): exit 3, or 0 with --allow-skips"), "\(skipped.output)")
        #expect(!skipped.output.contains("all "), "a skipped check is not a passed one: \(skipped.output)")

        let notAPlugin = folder.path + "/text.so"
        try "not a plugin\n".write(toFile: notAPlugin, atomically: true, encoding: .utf8)
        let failed = try runMergingOutput(snoozefuse, ["plugins", "check", notAPlugin])
        #expect(failed.status == 65, "\(failed.output)")
        #expect(failed.output.contains("\(notAPlugin): 1 problem in 2 checks run"), "\(failed.output)")

        #expect(try runMergingOutput(snoozefuse, ["plugins", "check"]).status == 64)

        let alone = folder.path + "/snoozefuse"
        // Copied by cp, not by this process: a copy this process writes can be inherited, open for
        // writing, by a child another test forks meanwhile, and its exec then fails (ETXTBSY).
        _ = try runMergingOutput("/bin/cp", [snoozefuse, alone])
        let noHost = try runMergingOutput(alone, ["plugins", "check", hum])
        #expect(noHost.status == 70, "\(noHost.output)")
        #expect(noHost.output.contains("the plugin host program is not installed"), "\(noHost.output)")
    }
}

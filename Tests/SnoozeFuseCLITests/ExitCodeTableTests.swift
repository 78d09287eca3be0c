import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// README and code agree on every exit code (issue 42): the README's table is read, and each code
/// it lists is made to happen with the built binary, as the table says; a code the table lacks,
/// or one it lists that nothing here makes happen, fails the test. (`nap --preset nope` exited 64
/// where the table said 66.)
@Suite("The README's exit codes are the program's")
struct ExitCodeTableTests {
    /// The codes of the README's "## Exit codes" table.
    static func documentedCodes() throws -> [Int32] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\n## Exit codes\n"))
        let section = readme[start.upperBound...]
        let table = section[..<(section.range(of: "\n## ")?.lowerBound ?? section.endIndex)]
        return table.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| ") else { return nil }
            return Int32(line.dropFirst(2).prefix { $0.isNumber })
        }
    }

    @Test func everyDocumentedCodeHappensAsDocumented() async throws {
        let documented = try Self.documentedCodes()
        let seen = try await script { home, seen in
            func exit(_ label: String, _ arguments: [String], environment extra: [String: String] = [:]) throws {
                var environment = home.environment
                for (key, value) in extra { environment[key] = value }
                let result = try runProcessBlocking(BuiltProducts.executable("snoozefuse"), arguments, environment: environment)
                seen.numbers[label] = Double(result.status)
                seen.texts[label] = result.standardError
            }
            let quick = ["nap", "--no-hold", "--release", "0", "--device", "null", "--quiet"]
            // 0: dismissed or rang its limit.
            try exit("0", quick + ["--nap", "0", "--ring-limit", "1"])
            // 3: plugins check with a check that could not run.
            try exit("3", ["plugins", "check", BuiltProducts.folder.appendingPathComponent("libsnoozefuse-rumble.so").path, "--config", "device=/nonexistent/event99"])
            // 64: a bad value; 65: bad sound data; 66: a missing file, an unknown preset.
            try exit("64", quick + ["--volume", "0"])
            let notSound = home.folder.path("not-sound.wav")
            try Data("not a sound\n".utf8).write(to: URL(fileURLWithPath: notSound))
            try exit("65", quick + ["--sound", notSound, "--dry-run"])
            try exit("66", quick + ["--sound", home.folder.path("missing.wav"), "--dry-run"])
            try exit("66 preset", quick + ["--preset", "nope", "--dry-run"])
            // 69: no nap to stop; 78: a variable the nap refuses.
            try exit("69", ["stop"])
            try exit("78", quick + ["--dry-run"], environment: ["SNOOZEFUSE_VOLUME": "loud"])
            // 70: no plugin host beside the program.
            let alone = home.folder.path("alone")
            try FileManager.default.createDirectory(atPath: alone, withIntermediateDirectories: true)
            // Copied by cp, not by this process: a copy this process writes can be inherited, open
            // for writing, by a child another test forks meanwhile, and its exec then fails (ETXTBSY).
            _ = try runTool("cp", [BuiltProducts.executable("snoozefuse").path, alone + "/snoozefuse"])
            let result70 = try runProcessBlocking(URL(fileURLWithPath: alone + "/snoozefuse"), ["plugins", "check", notSound], environment: home.environment)
            seen.numbers["70"] = Double(result70.status)
            // 1: cancelled by SIGTERM; 75: a second nap while it runs; 130: Ctrl-C.
            let first = try home.launch(quick + ["--nap", "120"])
            seen.steps["napping"] = waitFor { home.state()?["phase"] as? String == "napping" }
            try exit("75", quick + ["--nap", "1"])
            first.signal(SIGTERM)
            seen.numbers["1"] = Double(first.wait())
            let second = try home.launch(quick + ["--nap", "120"], events: "second.jsonl")
            seen.steps["second napping"] = waitFor { home.state()?["phase"] as? String == "napping" && home.state()?["pid"] as? Int == Int(second.pid) }
            second.signal(SIGINT)
            seen.numbers["130"] = Double(second.wait())
        }
        #expect(seen["napping"] && seen["second napping"], "\(seen.texts)")
        #expect(seen.numbers["66 preset"] == 66, "\(seen.texts)")
        let made = Set(seen.numbers.compactMap { label, status in Int32(label).flatMap { Double($0) == status ? $0 : nil } })
        let tried = Set(seen.numbers.keys.compactMap { Int32($0) })
        for code in tried.sorted() where !made.contains(code) {
            Issue.record("exit \(code) was made to happen but the program exited \(seen.numbers["\(code)"] ?? -1): \(seen.texts["\(code)"] ?? "")")
        }
        #expect(Set(documented) == tried, "the README lists \(documented.sorted()); the test makes \(tried.sorted()) happen")
    }
}

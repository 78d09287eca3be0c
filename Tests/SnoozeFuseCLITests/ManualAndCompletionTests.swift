import Foundation
import Testing
import SnoozeFuseTestSupport

/// The manual page and the shell completions that `make install` installs: the page renders with
/// `man -l` and documents every command and option the binary has (so it cannot go stale), and each
/// completion script loads in its shell and completes.
@Suite("snoozefuse.1 and the bash, zsh and fish completions")
struct ManualAndCompletionTests {
    static let page = InstallTests.packageRoot.appendingPathComponent("Documentation/snoozefuse.1")

    @Test func manRendersThePageWithoutAWarning() async throws {
        let result = try await runProcess(executableInPath("man"), ["-l", Self.page.path],
                                          environment: ProcessInfo.processInfo.environment.merging(["MANPAGER": "cat", "MANWIDTH": "80"]) { $1 })
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty, "troff warnings: \(result.standardError)")
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION"] {
            #expect(result.standardOutput.contains(section))
        }
        #expect(result.standardOutput.contains("snoozefuse — A nap timer and alarm engine"))
    }

    /// Every character of the help is in the page, in a UTF-8 locale and in plain C: generate-manual
    /// dropped each one that is not ASCII ("Alarm volume, 1100", "(40120)"); Scripts/make-man.sh
    /// now writes them as roff escapes.
    @Test(arguments: ["C.UTF-8", "C"])
    func thePageKeepsEveryCharacter(locale: String) async throws {
        let result = try await runProcess(executableInPath("man"), ["-l", Self.page.path],
                                          environment: ProcessInfo.processInfo.environment.merging(
                                              ["MANPAGER": "cat", "MANWIDTH": "200", "LC_ALL": locale, "LANG": locale]) { $1 })
        #expect(result.status == 0, "\(result.standardError)")
        let text = result.standardOutput
        if locale == "C.UTF-8" {
            #expect(text.contains("Alarm volume, 1–100 (linear amplitude)."), "\(text.prefix(3000))")
            #expect(text.contains("in beats per minute (40–120)."))
        } else {
            // Without UTF-8, man writes what ASCII can say of them: never nothing.
            #expect(!text.contains("Alarm volume, 1100"), "\(text.prefix(3000))")
            #expect(text.contains("Alarm volume, 1"), "\(text.prefix(3000))")
        }
        #expect(!Self.pageSource().contains(where: { !$0.isASCII }), "the page's source is ASCII: man renders it in any locale")
    }

    static func pageSource() -> String { (try? String(contentsOf: page, encoding: .utf8)) ?? "" }

    /// Every command and every option of `--experimental-dump-help` is in the page (Scripts/make-man.sh
    /// writes it again when they change).
    @Test func thePageDocumentsEveryCommandAndOption() async throws {
        let source = try String(contentsOf: Self.page, encoding: .utf8)
        // An option's item: `.It Fl -name Ar value`, or `.It Fl y , -name` with a short name.
        let items = source.split(separator: "\n").filter { $0.hasPrefix(".It Fl ") }.map { " " + $0 + " " }
        let dump = try await runProcess(snoozefuse, ["--experimental-dump-help"])
        #expect(dump.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.standardOutput.utf8)) as? [String: Any])
        var missing: [String] = []
        func visit(_ command: [String: Any], path: String) {
            guard command["shouldDisplay"] as? Bool ?? true else { return }
            let name = command["commandName"] as? String ?? "?"
            if !path.isEmpty, !source.contains(".It Em \(name)") { missing.append("command \(path) \(name)") }
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool ?? true {
                for option in argument["names"] as? [[String: Any]] ?? [] where option["kind"] as? String == "long" {
                    let flag = option["name"] as? String ?? "?"
                    if !items.contains(where: { $0.contains(" -\(flag) ") }) { missing.append("\(path) \(name) --\(flag)") }
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { visit(sub, path: path.isEmpty ? name : "\(path) \(name)") }
        }
        visit(try #require(root["command"] as? [String: Any]), path: "")
        #expect(missing.isEmpty, "not in Documentation/snoozefuse.1 (run Scripts/make-man.sh): \(missing)")
    }

    @Test func theBashCompletionLoadsAndCompletesCommands() async throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-completion")
        let script = folder.path("snoozefuse.bash")
        let generated = try await runProcess(snoozefuse, ["--generate-completion-script", "bash"])
        try generated.standardOutput.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await runProcess(executableInPath("bash"), ["--norc", "-c", """
            source '\(script)' || exit 3
            complete -p snoozefuse || exit 4
            COMP_WORDS=(snoozefuse na); COMP_CWORD=1; COMP_LINE='snoozefuse na'; COMP_POINT=13
            _snoozefuse
            echo "${COMPREPLY[@]}"
            """])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("complete -o filenames -F _snoozefuse snoozefuse"), "\(result.standardOutput)")
        #expect(result.standardOutput.split(separator: "\n").last?.split(separator: " ").contains("nap") == true, "\(result.standardOutput)")
    }

    /// The person's own names complete (issue 42: the completion offered nothing after --preset,
    /// --sound or `presets show`): saved presets after --preset and `presets show|remove` (only
    /// saved ones for remove), sounds after --sound and `sounds play|export`, imported ones alone
    /// for `sounds remove|rename`; and the settings' names after `config get|set|unset`.
    @Test func theBashCompletionCompletesTheUsersPresetAndSoundNames() throws {
        let home = try NapHome()
        #expect(try home.run(["presets", "save", "power", "--nap", "15m"]).status == 0)
        let script = home.folder.path("snoozefuse.bash")
        let generated = try runProcessBlocking(snoozefuse, ["--generate-completion-script", "bash"])
        try generated.standardOutput.write(toFile: script, atomically: true, encoding: .utf8)
        func complete(_ words: [String]) throws -> [String] {
            let line = words.joined(separator: " ")
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            var environment = home.environment
            environment["PATH"] = BuiltProducts.folder.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            let result = try runProcessBlocking(executableInPath("bash"), ["--norc", "-c", """
                source '\(script)' || exit 3
                COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=\(line.count)
                _snoozefuse snoozefuse '\(words[words.count - 1])' '\(words[words.count - 2])'
                printf '%s\\n' "${COMPREPLY[@]}"
                """], environment: environment)
            return result.standardOutput.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["snoozefuse", "nap", "--preset", "po"]) == ["power"])
        #expect(try complete(["snoozefuse", "nap", "--preset", ""]).sorted() == ["basic", "power", "quick-test"])
        #expect(try complete(["snoozefuse", "presets", "show", "p"]) == ["power"])
        #expect(try complete(["snoozefuse", "presets", "remove", ""]) == ["power"], "only saved presets can be removed")
        #expect(try complete(["snoozefuse", "nap", "--sound", "ch"]) == ["chime"])
        #expect(try complete(["snoozefuse", "sounds", "play", "ge"]) == ["gentle"])
        #expect(try complete(["snoozefuse", "sounds", "remove", ""]).isEmpty, "built-in sounds cannot be removed")
        // The settings' names after `config get|set|unset`.
        #expect(try complete(["snoozefuse", "config", "set", "vol"]) == ["volume"])
        #expect(try complete(["snoozefuse", "config", "get", "sleep-"]).sorted() == ["sleep-device", "sleep-sound", "sleep-volume"])
        #expect(try complete(["snoozefuse", "config", "unset", "pres"]) == ["preset"])
    }

    @Test func theZshCompletionLoadsAsACompletionFunction() async throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-completion")
        let generated = try await runProcess(snoozefuse, ["--generate-completion-script", "zsh"])
        try generated.standardOutput.write(toFile: folder.path("_snoozefuse"), atomically: true, encoding: .utf8)
        #expect(generated.standardOutput.hasPrefix("#compdef snoozefuse"))
        // As installed: a file `_snoozefuse` in a folder of fpath, picked up by compinit.
        let result = try await runProcess(executableInPath("zsh"), ["-f", "-c", """
            fpath=('\(folder.url.path)' $fpath)
            autoload -Uz compinit && compinit -u -D -d '\(folder.path("zcompdump"))' || exit 3
            print -r -- "registered: ${_comps[snoozefuse]}"
            autoload -Uz +X _snoozefuse || exit 4
            whence -w _snoozefuse
            """])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("registered: _snoozefuse"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("_snoozefuse: function"), "\(result.standardOutput)")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }

    @Test func theFishCompletionLoadsAndCompletesCommandsAndValues() async throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-completion")
        let script = folder.path("snoozefuse.fish")
        let generated = try await runProcess(snoozefuse, ["--generate-completion-script", "fish"])
        try generated.standardOutput.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await runProcess(executableInPath("fish"), ["--no-config", "-c", """
            source '\(script)'; or exit 3
            complete -C 'snoozefuse na'
            complete -C 'snoozefuse nap --dismiss '
            """], environment: ProcessInfo.processInfo.environment.merging(["HOME": folder.url.path]) { $1 })
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" }
        #expect(lines.contains("nap"), "\(result.standardOutput)")
        #expect(Set(["word", "hold", "key"]).isSubset(of: Set(lines)), "the values of --dismiss: \(result.standardOutput)")
    }

    @Test func makeInstallInstallsThePageAndTheCompletions() async throws {
        let scratch = try TemporaryFolder(prefix: "snoozefuse-install")
        let prefix = scratch.url.appendingPathComponent("usr")
        let install = try await runProcess(InstallTests.packageRoot.appendingPathComponent("Scripts/install.sh"), [BuiltProducts.folder.path, prefix.path])
        #expect(install.status == 0, "\(install.standardError)")
        for file in ["share/man/man1/snoozefuse.1", "share/bash-completion/completions/snoozefuse",
                     "share/zsh/site-functions/_snoozefuse", "share/fish/vendor_completions.d/snoozefuse.fish"] {
            let path = prefix.appendingPathComponent(file).path
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(size > 500, "\(file) installed")
        }
        // man finds the page through the prefix, as it would in /usr/local.
        let man = try await runProcess(executableInPath("man"), ["-M", prefix.appendingPathComponent("share/man").path, "snoozefuse"],
                                       environment: ProcessInfo.processInfo.environment.merging(["MANPAGER": "cat"]) { $1 })
        #expect(man.status == 0 && man.standardOutput.contains("SNOOZEFUSE(1)"), "\(man.standardError)")
    }
}

import Foundation
import Testing
import SnoozeFuseTestSupport

/// `Scripts/install.sh` (what `make install` runs) lays out PREFIX so that the installed binary
/// finds its plugins and built-in sounds from its own location, with nothing else set up.
@Suite("make install layout (Scripts/install.sh on the built products)")
struct InstallTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theInstalledBinaryFindsItsPluginsAndSounds() async throws {
        let scratch = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let prefix = scratch.appendingPathComponent("opt/snoozefuse")
        let script = Self.packageRoot.appendingPathComponent("Scripts/install.sh")
        let install = try await runProcess(script, [BuiltProducts.folder.path, prefix.path])
        #expect(install.status == 0, "stderr: \(install.standardError)")

        let plugins = prefix.appendingPathComponent("lib/snoozefuse/plugins")
        let installedPlugins = try FileManager.default.contentsOfDirectory(atPath: plugins.path).sorted()
        #expect(installedPlugins == ["command", "led", "noise", "rumble", "terminal", "tone"].map { "libsnoozefuse-\($0).so" })
        let mode = try FileManager.default.attributesOfItem(atPath: plugins.appendingPathComponent("libsnoozefuse-noise.so").path)[.posixPermissions] as? Int
        #expect(mode == 0o644, "plugins must not be writable by others (or snoozefuse refuses them)")

        // A clean environment: no user plugins or sounds, only what the prefix holds.
        let environment = ["HOME": scratch.path, "XDG_DATA_HOME": scratch.appendingPathComponent("data").path,
                           "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let binary = prefix.appendingPathComponent("bin/snoozefuse")
        let list = try await runProcess(binary, ["plugins", "list", "--json"], environment: environment)
        #expect(list.status == 0, "stderr: \(list.standardError)")
        for id in ["tone", "noise", "terminal", "command", "led", "rumble"] {
            #expect(list.standardOutput.contains("\"org.snoozefuse.\(id)\""), "\(id) missing from: \(list.standardOutput)")
        }
        #expect(list.standardOutput.contains(plugins.path), "loaded from the prefix")

        let sounds = try await runProcess(binary, ["sounds", "list", "--json"], environment: environment)
        #expect(sounds.status == 0, "stderr: \(sounds.standardError)")
        for name in ["beep", "chime", "rising", "digital", "gentle"] {
            #expect(sounds.standardOutput.contains(prefix.appendingPathComponent("share/snoozefuse/sounds/\(name).caf").path))
        }

        // And a nap with a built-in sound and a plugin source from the prefix runs to its end.
        let nap = try await runProcess(binary, ["nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1",
                                                "--ring-limit", "1", "--device", "null", "--source", "tone",
                                                "--sleep-sound", "noise", "--events", "jsonl", "--quiet"], environment: environment)
        #expect(nap.status == 0, "stderr: \(nap.standardError)")
        #expect(nap.standardOutput.contains("\"outcome\":\"ring_limit\""))
        #expect(warningLines(in: nap.standardOutput).isEmpty, "\(nap.standardOutput)")
    }

    @Test func aSystemdUserUnitResumesAnInterruptedNapAtLogin() async throws {
        let scratch = try TemporaryFolder(prefix: "snoozefuse-install")
        let prefix = scratch.url.appendingPathComponent("opt/snoozefuse")
        let install = try await runProcess(Self.packageRoot.appendingPathComponent("Scripts/install.sh"), [BuiltProducts.folder.path, prefix.path])
        #expect(install.status == 0, "stderr: \(install.standardError)")
        let unit = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/snoozefuse-resume.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix.path)/bin/snoozefuse resume --if-interrupted"), "\(unit)")
        #expect(unit.contains("WantedBy=default.target"))
        #expect(FileManager.default.isExecutableFile(atPath: prefix.appendingPathComponent("lib/snoozefuse/snoozefuse-plugin-host").path))
        // What the unit runs does nothing, quietly, when no nap was interrupted.
        let resume = try await runProcess(prefix.appendingPathComponent("bin/snoozefuse"), ["resume", "--if-interrupted"])
        #expect(resume.status == 0 && resume.standardError.isEmpty, "\(resume.standardError)")
    }

    @Test func installingFromAFolderWithoutABuildSaysWhatToDo() async throws {
        let empty = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: empty) }
        let script = Self.packageRoot.appendingPathComponent("Scripts/install.sh")
        let result = try await runProcess(script, [empty.path, empty.appendingPathComponent("prefix").path])
        #expect(result.status == 66)
        #expect(result.standardError.contains("\(empty.path)/snoozefuse is missing: build first"))
        #expect(!FileManager.default.fileExists(atPath: empty.appendingPathComponent("prefix").path), "nothing half-installed")
    }
}

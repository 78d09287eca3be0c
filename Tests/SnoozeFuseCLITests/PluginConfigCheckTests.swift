import Foundation
import SnoozeFuseTestSupport
import Testing

/// `nap --source/--emitter ID:config` with the built-in plugins (from the build folder): each
/// plugin judges its configuration in a short-lived child before the nap begins.
@Suite("nap checks plugin configurations before it begins")
struct PluginConfigCheckTests {
    /// A short nap: no hold, no release, a one-second nap and ring, on the null device.
    func nap(_ plugins: [String]) async throws -> ProcessResult {
        try await runProcess(snoozefuse, [
            "nap", "--no-hold", "--preset", "quick-test", "--release", "0", "--nap", "1", "--ring-limit", "1",
            "--device", "null", "--events", "jsonl", "--quiet",
        ] + plugins)
    }

    @Test func aBadValueExits78NamingThePluginTheKeyAndTheAcceptedValues() async throws {
        let result = try await nap(["--emitter", "terminal:bell=yes"])
        #expect(result.status == 78, "\(result.standardError)")
        #expect(result.standardError.contains(
            "snoozefuse: --emitter terminal:bell=yes: plugin org.snoozefuse.terminal refuses this configuration: bell=yes: expected 0 or 1"),
            "\(result.standardError)")
        #expect(result.standardError.contains("  bell=0|1: ring the bell with full-strength pulses (default 0)"))
        #expect(result.standardOutput.isEmpty, "the nap never began: \(result.standardOutput)")
    }

    @Test func everyRefusalIsReportedAtOnceForSourcesAndEmitters() async throws {
        let result = try await nap(["--source", "tone:pattern=polka", "--emitter", "command:timeout=5,colour=red"])
        #expect(result.status == 78, "\(result.standardError)")
        #expect(result.standardError.contains(
            "--source tone:pattern=polka: plugin org.snoozefuse.tone refuses this configuration: pattern=polka: expected beep, chime or siren"),
            "\(result.standardError)")
        #expect(result.standardError.contains("  pattern=beep|chime|siren: the pattern (default beep)"))
        #expect(result.standardError.contains(
            "--emitter command:timeout=5,colour=red: plugin org.snoozefuse.command refuses this configuration: unknown key in \"colour=red\" (command accepts min-interval, timeout, run)"),
            "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test func anUnknownKeyOfASourceExits78() async throws {
        let result = try await nap(["--source", "noise:colour=red"])
        #expect(result.status == 78, "\(result.standardError)")
        #expect(result.standardError.contains("unknown key \"colour\" (noise accepts color, volume, seed)"), "\(result.standardError)")
    }

    @Test func aSleepSoundsConfigurationIsCheckedToo() async throws {
        let result = try await nap(["--sleep-sound", "noise:color=purple"])
        #expect(result.status == 78, "\(result.standardError)")
        #expect(result.standardError.contains(
            "--sleep-sound noise:color=purple: plugin org.snoozefuse.noise refuses this configuration: color=purple: expected white, pink or brown"),
            "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    /// `--dry-run` passed what the nap then refused (exit 0): it checks the same, with the same
    /// exits, and a good configuration passes without a nap or a line of warning.
    @Test func dryRunRefusesWhatTheNapWouldRefuse() async throws {
        let dry = ["nap", "--no-hold", "--dry-run"]
        let refused = try await runProcess(snoozefuse, dry + ["--emitter", "terminal:bell=yes", "--source", "tone:pattern=polka"])
        #expect(refused.status == 78, "\(refused.standardError)")
        #expect(refused.standardError.contains("--emitter terminal:bell=yes: plugin org.snoozefuse.terminal refuses this configuration: bell=yes: expected 0 or 1"),
                "\(refused.standardError)")
        #expect(refused.standardError.contains("--source tone:pattern=polka: plugin org.snoozefuse.tone refuses this configuration"), "\(refused.standardError)")
        #expect(refused.standardOutput.contains("emitter"), "the settings are printed first: \(refused.standardOutput)")
        let unknown = try await runProcess(snoozefuse, dry + ["--json", "--source", "no-such-plugin"])
        #expect(unknown.status == 66, "\(unknown.standardError)")
        #expect(unknown.standardError.contains("no-such-plugin"), "\(unknown.standardError)")
        let missingSound = try await runProcess(snoozefuse, dry + ["--sound", "/nonexistent/alarm.wav"])
        #expect(missingSound.status == 66, "\(missingSound.standardError)")
        let good = try await runProcess(snoozefuse, dry + ["--source", "noise:color=white", "--emitter", "terminal:bell=0,tty=/dev/null"])
        #expect(good.status == 0, "\(good.standardError)")
        #expect(good.standardError.isEmpty, "\(good.standardError)")
    }

    @Test func goodConfigurationsNapAsBefore() async throws {
        let result = try await nap(["--source", "noise:color=white,volume=0.2", "--emitter", "terminal:bell=0,tty=/dev/null",
                                    "--emitter", "command:min-interval=0,run=true"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(warningLines(in: result.standardError).isEmpty, "\(result.standardError)")
        #expect(result.standardOutput.contains("\"outcome\":\"ring_limit\""), "\(result.standardOutput)")
    }

    /// The nap says which source plays (it never did): the `alarm` event's `sound`, for a plugin
    /// source and for a sound.
    @Test func theAlarmEventSaysWhichSourcePlays() async throws {
        let plugin = try await nap(["--source", "noise:color=white,volume=0.2"])
        #expect(plugin.standardOutput.contains(#""sound":"plugin org.snoozefuse.noise""#), "\(plugin.standardOutput)")
        let sound = try await nap(["--sound", "chime"])
        #expect(sound.standardOutput.contains(#""sound":"sound chime""#), "\(sound.standardOutput)")
    }

    @Test func aMissingDeviceIsNotAConfigurationErrorTheNapGoesOnAndSaysSo() async throws {
        let result = try await nap(["--emitter", "rumble:device=/nonexistent/event0"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("cannot open device=/nonexistent/event0: No such file or directory"), "\(result.standardError)")
        #expect(result.standardOutput.contains("\"outcome\":\"ring_limit\""))
    }
}

import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

/// The flag of a nap setting: its help and value name come from the setting itself, so `--help`,
/// `config list` and the README say the same thing.
func settingHelp(_ key: NapSettingKey) -> ArgumentHelp {
    ArgumentHelp(key.help, valueName: key.valueName)
}

/// The timer and alarm flags `nap` and `presets save` share, kept as typed (a duration's value is
/// the next argument whatever it looks like, so `--nap -5` or `--volume -1` is refused as out of
/// range, not as a missing value): each is read by its
/// setting's one parser (`NapSettingKey.parse`), the parser of the environment, the settings and
/// the presets too, so a value is refused with the same message wherever it comes from (exit 64).
struct NapSettingOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: settingHelp(.release)) var release: String?
    @Option(parsing: .unconditional, help: settingHelp(.nap)) var nap: String?
    @Option(parsing: .unconditional, help: settingHelp(.max)) var max: String?
    @Option(name: .customLong("ring-limit"), parsing: .unconditional, help: settingHelp(.ringLimit)) var ringLimit: String?
    @Option(parsing: .unconditional, help: settingHelp(.snooze)) var snooze: String?
    @Option(help: settingHelp(.sound), completion: .custom { _, _, prefix in CompletionNames.sounds(prefix: prefix) }) var sound: String?
    @Option(parsing: .unconditional, help: settingHelp(.volume)) var volume: String?
    @Option(name: .customLong("fade-in"), parsing: .unconditional, help: settingHelp(.fadeIn)) var fadeIn: String?
    @Option(help: settingHelp(.device)) var device: String?
    @Option(name: .customLong("system-volume"), parsing: .unconditional, help: settingHelp(.systemVolume)) var systemVolume: String?
    @Option(help: settingHelp(.route)) var route: String?
    @Option(name: .customLong("fix-volume"), help: settingHelp(.fixVolume)) var fixVolume: String?
    @Flag(name: .customLong("no-fix-volume"), help: "The same as --fix-volume false: leave the sinks' mute and volume as they are.") var noFixVolume = false
    @Option(help: settingHelp(.source)) var source: String?
    @Option(name: .customLong("emitter"), help: settingHelp(.emitter)) var emitters: [String] = []
    @Option(parsing: .unconditional, help: settingHelp(.bpm)) var bpm: String?
    @Option(name: .customLong("sleep-sound"), help: settingHelp(.sleepSound)) var sleepSound: String?
    @Option(name: .customLong("sleep-volume"), parsing: .unconditional, help: settingHelp(.sleepVolume)) var sleepVolume: String?
    @Option(name: .customLong("sleep-device"), help: settingHelp(.sleepDevice)) var sleepDevice: String?
    @Option(help: settingHelp(.dismiss), completion: .list(DismissMode.allCases.map(\.rawValue))) var dismiss: String?
    @Option(name: .customLong("idle-after"), parsing: .unconditional, help: settingHelp(.idleAfter)) var idleAfter: String?

    /// The flags given, by setting.
    var given: [NapSettingKey: [String]] {
        let single: [(NapSettingKey, String?)] = [
            (.release, release), (.nap, nap), (.max, max), (.ringLimit, ringLimit), (.snooze, snooze), (.sound, sound),
            (.volume, volume), (.fadeIn, fadeIn), (.device, device), (.systemVolume, systemVolume), (.route, route),
            (.fixVolume, noFixVolume ? "false" : fixVolume), (.source, source),
            (.bpm, bpm), (.sleepSound, sleepSound), (.sleepVolume, sleepVolume), (.sleepDevice, sleepDevice),
            (.dismiss, dismiss), (.idleAfter, idleAfter),
        ]
        var given: [NapSettingKey: [String]] = [:]
        for case let (key, value?) in single { given[key] = [value] }
        if !emitters.isEmpty { given[.emitter] = emitters }
        return given
    }

    func validate() throws {
        try checkSettingFlags(given)
    }
}

/// Reads every flag given with its setting's parser; the first refused one is a usage error.
func checkSettingFlags(_ flags: [NapSettingKey: [String]]) throws {
    for (key, values) in flags.sorted(by: { $0.key < $1.key }) {
        do { _ = try key.parse(values) } catch { throw ValidationError(error.message) }
    }
}

/// A nap's settings from `flags`, the environment, the preset and the configuration, as the nap
/// would take them; a database left out is a warning on standard error, a setting that does not
/// resolve is the nap's own exit status and message.
func resolveNapSettings(flags: [NapSettingKey: [String]]) throws -> ResolvedNapSettings {
    let resolved: ResolvedNapSettings
    let storeWarning: String?
    do throws(NapSetupError) {
        (resolved, storeWarning) = try UserData().resolveNap(flags: flags)
    } catch {
        throw ExitStatus.reporting(error)
    }
    if let storeWarning { writeLine("snoozefuse: warning: \(storeWarning)", to: STDERR_FILENO) }
    return resolved
}

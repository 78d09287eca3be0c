import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import Testing

/// A saved preset for the tests.
func savedPreset(_ name: String, _ values: [String: [String]]) -> NapPreset {
    NapPreset(name: name, values: values)
}

@Suite("Nap settings: one parser for every source, and the precedence of SPEC §3")
struct NapSettingsTests {
    /// Every layer wins when it is the strongest one left: flag, environment, the preset named
    /// with --preset, the settings, the default preset, the built-in default.
    @Test func eachLayerWinsOverTheOnesBelowIt() throws {
        let mine = savedPreset("mine", ["release": ["1m"], "nap": ["11m"], "max": ["1h"]])
        let usual = savedPreset("usual", ["release": ["2m"], "nap": ["12m"], "max": ["1h"]])
        let all = NapSettingLayers(
            flags: [.nap: ["10m"], .preset: ["mine"]], environment: ["SNOOZEFUSE_NAP": "15m"],
            settings: ["nap": ["13m"], "preset": ["usual"]], savedPresets: [mine, usual])
        var layers = all
        /// The nap's length and where it came from, as `nap --dry-run` says them.
        func nap() throws -> String {
            let setting = try NapSettingsResolver.resolve(layers)[.nap]
            return "\(setting.value?.description ?? "none") from \(setting.source.description(of: .nap))"
        }
        #expect(try nap() == "10m from --nap")
        layers.flags[.nap] = nil
        #expect(try nap() == "15m from SNOOZEFUSE_NAP")
        layers.environment = [:]
        #expect(try nap() == "11m from preset mine", "the named preset beats the settings")
        layers.flags[.preset] = nil
        #expect(try nap() == "13m from config", "the settings beat the default preset")
        layers.settings["nap"] = nil
        #expect(try nap() == "12m from default preset usual")
        layers.settings["preset"] = nil
        #expect(try nap() == "20m from default preset basic", "basic unless changed")
        let builtIn = try NapSettingsResolver.resolve(layers)[.volume]
        #expect(builtIn.value == .number(80) && builtIn.source == .builtIn)
    }

    /// `SNOOZEFUSE_PRESET` names a preset as `--preset` does (its values beat the settings); the
    /// `preset` setting is the default preset (its values come after the settings).
    @Test func whereThePresetIsNamedDecidesWhereItsValuesRank() throws {
        let loud = savedPreset("loud", ["release": ["1m"], "nap": ["11m"], "max": ["1h"], "volume": ["100"]])
        var layers = NapSettingLayers(environment: ["SNOOZEFUSE_PRESET": "loud"], settings: ["volume": ["40"]], savedPresets: [loud])
        let named = try NapSettingsResolver.resolve(layers)
        #expect(named[.volume].value == .number(100) && named[.volume].source == .preset("loud"))
        #expect(named[.preset].source == .environment)
        layers.environment = [:]
        layers.settings["preset"] = ["LOUD"]
        let byDefault = try NapSettingsResolver.resolve(layers)
        #expect(byDefault[.volume].value == .number(40) && byDefault[.volume].source == .config)
        #expect(byDefault[.release].source == .defaultPreset("loud"))
        #expect(byDefault[.preset].value == .text("loud") && byDefault[.preset].source == .config)
        #expect(byDefault.preset.name == "loud")
    }

    @Test func theConfigurationIsWhatTheSettingsSay() throws {
        let layers = NapSettingLayers(
            flags: [.emitter: ["led", "terminal:bell=1"], .noHold: ["true"], .quiet: ["true"]],
            environment: ["SNOOZEFUSE_SOUND": "chime", "SNOOZEFUSE_RING_LIMIT": "2m", "SNOOZEFUSE_SLEEP_SOUND": "noise:color=brown"],
            settings: ["volume": ["55"], "fade-in": ["0"], "device": ["null"], "snooze": ["3m"], "events": ["jsonl"]])
        let resolved = try NapSettingsResolver.resolve(layers)
        let configuration = resolved.configuration(showsCountdown: false, usesColour: false)
        #expect(configuration.timers == SessionTimers(release: .seconds(30), nap: .seconds(1200), max: .seconds(1800),
                                                      snooze: .seconds(180), ringLimit: .seconds(120)))
        #expect(configuration.sound == "chime")
        #expect(configuration.volume == 55)
        #expect(configuration.fadeIn == .zero)
        #expect(configuration.device == "null")
        #expect(configuration.emitters == ["led", "terminal:bell=1"])
        #expect(configuration.sleepSound == "noise:color=brown")
        #expect(configuration.presetName == "basic")
        #expect(!configuration.holdMode && !resolved.holdMode)
        #expect(resolved.quiet)
        #expect(resolved.events == "jsonl")
        #expect(resolved[.systemVolume].value == nil && resolved[.systemVolume].source == .builtIn)
    }

    @Test func aListInTheEnvironmentHoldsOnePluginALine() throws {
        let resolved = try NapSettingsResolver.resolve(NapSettingLayers(environment: ["SNOOZEFUSE_EMITTER": "led\nterminal:bell=1,symbol=+"]))
        #expect(resolved[.emitter].value == .list(["led", "terminal:bell=1,symbol=+"]))
        #expect(NapSettingKey.ringLimit.environmentVariable == "SNOOZEFUSE_RING_LIMIT")
        #expect(NapSettingKey.noHold.flag == "--no-hold")
    }

    /// A refused flag is a usage error with the parser's message; the same value from anywhere
    /// else is a configuration error (78) that names where it came from and carries that message.
    @Test(arguments: [
        (NapSettingKey.volume, "0", "--volume 0 would make the alarm silent"),
        (.max, "0", "max must be longer than zero"),
        (.nap, "soon", "--nap: \"soon\" is not a duration. Use 90 (seconds)"),
        (.bpm, "200", "--bpm 200 is out of range"),
        (.emitter, ":color=brown", "\":color=brown\" is not a plugin: expected ID or ID:key=value,..."),
        (.noHold, "maybe", "--no-hold is true or false"),
        (.events, "xml", "--events: \"xml\" is not an event format"),
        (.device, "", "--device needs a PCM name"),
        (.hold, "mouse", "--hold: \"mouse\" is not a hold; use key"),
        (.idleAfter, "0", "--idle-after must be 1s to 10m, not 0s"),
        (.idleAfter, "11m", "--idle-after must be 1s to 10m, not 11m"),
    ])
    func aRefusedValueIsRefusedTheSameWayFromEverySource(key: NapSettingKey, value: String, message: String) throws {
        let parsed = #expect(throws: NapSettingError.self) { try key.parse([value]) }
        #expect(parsed?.message.contains(message) == true, "\(parsed?.message ?? "")")
        let flag = #expect(throws: NapSetupError.self) { try NapSettingsResolver.resolve(NapSettingLayers(flags: [key: [value]])) }
        #expect(flag?.kind == .usage)
        #expect(flag?.lines == [parsed?.message ?? "?"])
        if !value.isEmpty {
            let environment = #expect(throws: NapSetupError.self) {
                try NapSettingsResolver.resolve(NapSettingLayers(environment: [key.environmentVariable: value]))
            }
            #expect(environment?.kind == .badConfiguration)
            #expect(environment?.lines.first?.hasPrefix("\(key.environmentVariable)=\(value): \(parsed?.message ?? "?")") == true, "\(environment?.lines ?? [])")
        }
        let config = #expect(throws: NapSetupError.self) { try NapSettingsResolver.resolve(NapSettingLayers(settings: [key.rawValue: [value]])) }
        #expect(config?.kind == .badConfiguration)
        #expect(config?.lines.first?.contains("the setting \(key.rawValue) is \(value): \(parsed?.message ?? "?")") == true, "\(config?.lines ?? [])")
        var values = ["release": ["1m"], "nap": ["1m"], "max": ["2m"]]
        values[key.rawValue] = [value]
        let preset = savedPreset("odd", values)
        let inPreset = #expect(throws: NapSetupError.self) {
            try NapSettingsResolver.resolve(NapSettingLayers(flags: [.preset: ["odd"]], savedPresets: [preset]))
        }
        #expect(inPreset?.kind == .badConfiguration)
        #expect(inPreset?.lines.first?.contains("the preset \"odd\" holds \(key.rawValue) \(value): \(parsed?.message ?? "?")") == true)
    }

    /// What holds the nap: `--hold none` is `--no-hold`; a `--hold` beats a `no-hold` from a weaker
    /// layer, and `--no-hold` beats everything (each as the nap's own `flags` gives them).
    @Test func whatHoldsTheNapFollowsHoldAndNoHoldByWhereEachCameFrom() throws {
        func hold(_ layers: NapSettingLayers) throws -> HoldSource { try NapSettingsResolver.resolve(layers).hold }
        #expect(try hold(NapSettingLayers()) == .key)
        #expect(try hold(NapSettingLayers(flags: [.hold: ["none"]])) == .none)
        #expect(try hold(NapSettingLayers(flags: [.hold: ["none"]])).waitsForHold == false)
        #expect(try hold(NapSettingLayers(flags: [.noHold: ["true"]])) == .none)
        #expect(try hold(NapSettingLayers(settings: ["hold": ["desktop"]])) == .desktop)
        #expect(try hold(NapSettingLayers(flags: [.hold: ["desktop"]], settings: ["no-hold": ["true"]])) == .desktop,
                "a hold named on the command line beats a no-hold setting")
        #expect(try hold(NapSettingLayers(settings: ["hold": ["desktop"], "no-hold": ["true"]])) == .none, "no-hold beats a hold of the same layer")
        #expect(try hold(NapSettingLayers(flags: [.hold: ["desktop"], .noHold: ["true"]])) == .none, "--no-hold beats --hold")
        #expect(try hold(NapSettingLayers(environment: ["SNOOZEFUSE_HOLD": "desktop"], settings: ["no-hold": ["true"]])) == .desktop)
        // What the dry run says the nap uses instead of the value named.
        #expect(try NapSettingsResolver.resolve(NapSettingLayers(flags: [.hold: ["desktop"], .noHold: ["true"]])).overridden(.hold) == "none")
        #expect(try NapSettingsResolver.resolve(NapSettingLayers(flags: [.hold: ["desktop"]])).overridden(.hold) == nil)
        #expect(try NapSettingsResolver.resolve(NapSettingLayers(flags: [.hold: ["desktop"], .noHold: ["true"]])).overridden(.volume) == nil)
    }

    /// `--idle-after` named for a nap the desktop does not hold is a warning that says what holds it.
    @Test func idleAfterWithoutADesktopHoldIsAWarning() throws {
        func warnings(_ layers: NapSettingLayers) throws -> [String] { try NapSettingsResolver.resolve(layers).warnings }
        #expect(try warnings(NapSettingLayers(flags: [.idleAfter: ["15s"]])).contains("--idle-after applies only with --hold desktop; this nap is held by a key"))
        #expect(try warnings(NapSettingLayers(flags: [.idleAfter: ["15s"], .noHold: ["true"]]))
            .contains("--idle-after applies only with --hold desktop; this nap is held by nothing"))
        #expect(try warnings(NapSettingLayers(environment: ["SNOOZEFUSE_IDLE_AFTER": "15s"]))
            .contains("idle-after (SNOOZEFUSE_IDLE_AFTER) applies only with --hold desktop; this nap is held by a key"))
        #expect(try warnings(NapSettingLayers(flags: [.idleAfter: ["15s"], .hold: ["desktop"]])).isEmpty)
        #expect(try warnings(NapSettingLayers(settings: ["idle-after": ["15s"]])).isEmpty, "a kept setting is for desk naps, not a mistake")
        #expect(try NapSettingsResolver.resolve(NapSettingLayers(flags: [.idleAfter: ["15s"], .hold: ["desktop"]])).configuration(showsCountdown: false, usesColour: false).idleAfter == .seconds(15))
    }

    /// Named with --preset, a preset that is not there is missing input, as the README says (66;
    /// it was a usage error, 64); named in the settings, a configuration error.
    @Test func anUnknownPresetIsMissingInputAsAFlagAndAConfigurationErrorAsASetting() {
        let flag = #expect(throws: NapSetupError.self) { try NapSettingsResolver.resolve(NapSettingLayers(flags: [.preset: ["nope"]])) }
        #expect(flag?.kind == .missingInput)
        #expect(flag?.lines.first?.hasPrefix("unknown preset \"nope\" for --preset. Presets: basic, quick-test") == true)
        let setting = #expect(throws: NapSetupError.self) {
            try NapSettingsResolver.resolve(NapSettingLayers(settings: ["preset": ["gone"]], storeProblem: nil))
        }
        #expect(setting?.kind == .badConfiguration)
        #expect(setting?.lines.first?.hasPrefix("the setting preset is gone: unknown preset \"gone\". Presets: basic") == true, "\(setting?.lines ?? [])")
        // Named in the environment, the variable is named, not the flag.
        let environment = #expect(throws: NapSetupError.self) {
            try NapSettingsResolver.resolve(NapSettingLayers(environment: ["SNOOZEFUSE_PRESET": "nope"]))
        }
        #expect(environment?.kind == .badConfiguration)
        #expect(environment?.lines.first?.hasPrefix("SNOOZEFUSE_PRESET=nope: unknown preset \"nope\". Presets: basic") == true, "\(environment?.lines ?? [])")
        #expect(environment?.lines.first?.contains("--preset") == false, "\(environment?.lines ?? [])")
        let unreadable = #expect(throws: NapSetupError.self) {
            try NapSettingsResolver.resolve(NapSettingLayers(flags: [.preset: ["mine"]], storeProblem: "library.sqlite: it is not an SQLite database"))
        }
        #expect(unreadable?.lines.first?.contains("Your saved presets could not be read: library.sqlite: it is not an SQLite database") == true)
    }

    @Test func everyNapFlagHasASetting() {
        let flags = ["--preset", "--release", "--nap", "--max", "--ring-limit", "--snooze", "--sound", "--volume", "--fade-in",
                     "--device", "--system-volume", "--route", "--fix-volume", "--source", "--emitter", "--bpm", "--sleep-sound", "--sleep-volume",
                     "--sleep-device", "--dismiss", "--hold", "--idle-after", "--no-hold", "--quiet", "--verbose", "--events"]
        #expect(NapSettingKey.allCases.map(\.flag) == flags)
        #expect(NapSettingKey.presetKeys.map(\.rawValue) == ["release", "nap", "max", "ring-limit", "snooze", "sound", "volume", "fade-in",
                                                            "device", "system-volume", "route", "fix-volume", "source", "emitter", "bpm", "sleep-sound",
                                                            "sleep-volume", "sleep-device", "dismiss", "idle-after"])
        for key in NapSettingKey.allCases {
            #expect(NapSettingKey(named: key.rawValue) == key && NapSettingKey(named: key.flag) == key)
        }
    }
}

public import Foundation
public import SnoozeFuseCore

/// A preset: a built-in one (the timers only) or one the user saved (the timers, and perhaps the
/// alarm's choices). Its values are kept as text, by key, and read when a nap uses them.
public struct NapPreset: Sendable, Hashable {
    public var name: String
    /// Values by setting key (``NapSettingKey/rawValue``); keys this release does not know are kept
    /// and ignored.
    public var values: [String: [String]]
    public var isBuiltIn: Bool
    /// What a built-in preset is for.
    public var summary: String?
    /// When a saved preset was saved.
    public var savedAt: Date?

    public init(name: String, values: [String: [String]], isBuiltIn: Bool = false, summary: String? = nil, savedAt: Date? = nil) {
        self.name = name
        self.values = values
        self.isBuiltIn = isBuiltIn
        self.summary = summary
        self.savedAt = savedAt
    }

    /// A built-in preset as values.
    public init(_ preset: Preset) {
        self.init(name: preset.name, values: [
            NapSettingKey.release.rawValue: [preset.timers.release.compactDescription],
            NapSettingKey.nap.rawValue: [preset.timers.nap.compactDescription],
            NapSettingKey.max.rawValue: [preset.timers.max.compactDescription],
        ], isBuiltIn: true, summary: preset.summary)
    }

    /// The built-in presets, in the order they are listed.
    public static var builtIn: [NapPreset] { Preset.builtIn.map(NapPreset.init) }

    /// The preset's values this release knows, in key order (text, unchecked).
    public var knownValues: [(key: NapSettingKey, values: [String])] {
        NapSettingKey.allCases.compactMap { key in values[key.rawValue].map { (key, $0) } }
    }

    /// `30s → 20m, failsafe 30m`, then what else it holds.
    public var shortDescription: String {
        func first(_ key: NapSettingKey) -> String { values[key.rawValue]?.first ?? "?" }
        var text = "\(first(.release)) → \(first(.nap)), failsafe \(first(.max))"
        let others = knownValues.filter { ![.release, .nap, .max].contains($0.key) }
        if !others.isEmpty { text += "; " + others.map { "\($0.key.rawValue) \($0.values.joined(separator: "; "))" }.joined(separator: ", ") }
        return text
    }
}

/// Where a nap's setting came from, strongest first (SPEC §3): a flag, the environment, the
/// preset named with `--preset` (or `SNOOZEFUSE_PRESET`), the settings (`snoozefuse config`), the
/// default preset (itself a setting, `basic` unless changed), and the program's own default.
public enum NapSettingSource: Sendable, Hashable {
    case flag
    case environment
    case preset(String)
    case config
    case defaultPreset(String)
    case builtIn
    /// Made from `--until`'s time of day (the nap and the failsafe): the text as typed.
    case until(String)

    /// 0 for the strongest layer (the flag), up to 5 for the built-in default.
    var rank: Int {
        switch self {
        case .flag, .until: 0
        case .environment: 1
        case .preset: 2
        case .config: 3
        case .defaultPreset: 4
        case .builtIn: 5
        }
    }

    /// The layer's name in JSON: `flag`, `environment`, `preset`, `config`, `default-preset`, `built-in`.
    public var layer: String {
        switch self {
        case .flag: "flag"
        case .environment: "environment"
        case .preset: "preset"
        case .config: "config"
        case .defaultPreset: "default-preset"
        case .builtIn: "built-in"
        case .until: "until"
        }
    }

    /// For people: `--nap`, `SNOOZEFUSE_NAP`, `preset quick-test`, `config`,
    /// `default preset basic`, `built-in default`.
    public func description(of key: NapSettingKey) -> String {
        switch self {
        case .flag: key.flag
        case .environment: key.environmentVariable
        case .preset(let name): "preset \(name)"
        case .config: "config"
        case .defaultPreset(let name): "default preset \(name)"
        case .builtIn: "built-in default"
        case .until(let text): "--until \(text)"
        }
    }
}

/// What a nap's settings are made from, strongest first.
public struct NapSettingLayers: Sendable {
    /// The flags given, as typed (a list flag once per value).
    public var flags: [NapSettingKey: [String]]
    /// The process's environment (only the `SNOOZEFUSE_*` variables of settings are read).
    public var environment: [String: String]
    /// The settings (`snoozefuse config`), by key, as stored.
    public var settings: [String: [String]]
    /// The saved presets (the built-in ones are always there).
    public var savedPresets: [NapPreset]
    /// Why the settings and saved presets could not be read, when they could not (they are then
    /// empty, and a saved preset named for the nap is reported with this reason).
    public var storeProblem: String?

    public init(flags: [NapSettingKey: [String]] = [:], environment: [String: String] = [:], settings: [String: [String]] = [:],
                savedPresets: [NapPreset] = [], storeProblem: String? = nil) {
        self.flags = flags
        self.environment = environment
        self.settings = settings
        self.savedPresets = savedPresets
        self.storeProblem = storeProblem
    }

    /// The preset called `name`: a built-in first, then a saved one (names compared without case).
    public func preset(named name: String) -> NapPreset? {
        let folded = name.lowercased()
        return (NapPreset.builtIn + savedPresets).first { $0.name.lowercased() == folded }
    }

    /// Why no preset is called `name`, saying where it was named (`place`: "for --preset", "for
    /// --from", nothing when the message goes after the place) and the presets there are.
    public func unknownPresetMessage(_ name: String, place: String) -> String {
        var message = "unknown preset \"\(name)\"\(place.isEmpty ? "" : " " + place). Presets: \((NapPreset.builtIn + savedPresets).map(\.name).joined(separator: ", ")) (`snoozefuse presets list` shows them)."
        if let storeProblem { message += " Your saved presets could not be read: \(storeProblem)" }
        return message
    }
}

/// A nap's settings, each with where it came from: what `nap` runs with, and what
/// `nap --dry-run` shows.
public struct ResolvedNapSettings: Sendable, Hashable {
    public struct Setting: Sendable, Hashable {
        public var key: NapSettingKey
        /// nil: none (no ring limit, no plugin …).
        public var value: NapSettingValue?
        public var source: NapSettingSource
    }

    /// Every setting, in key order.
    public var settings: [Setting]
    /// The preset the nap starts from.
    public var preset: NapPreset

    public subscript(key: NapSettingKey) -> Setting {
        settings.first { $0.key == key } ?? Setting(key: key, value: nil, source: .builtIn)
    }

    /// What holds the nap: `hold`, except that `no-hold` true from a layer as strong or stronger
    /// makes it none (`--hold desktop` beats a `no-hold` setting; `--no-hold` beats everything).
    public var hold: HoldSource {
        let chosen = self[.hold].value?.text.flatMap(HoldSource.init(rawValue:)) ?? .key
        guard self[.noHold].value?.flag == true else { return chosen }
        return self[.hold].source.rank < self[.noHold].source.rank ? chosen : .none
    }
    public var holdMode: Bool { hold.waitsForHold }

    /// What the nap uses instead of `key`'s own value, where another setting overrides it (`hold`
    /// under a `no-hold` as strong or stronger: ``hold``); nil where the value is what it uses.
    public func overridden(_ key: NapSettingKey) -> String? {
        guard key == .hold, let named = self[.hold].value?.text, named != hold.rawValue else { return nil }
        return hold.rawValue
    }
    public var idleAfter: Duration { self[.idleAfter].value?.duration ?? .seconds(10) }
    public var quiet: Bool { self[.quiet].value?.flag ?? false }
    public var verbose: Bool { self[.verbose].value?.flag ?? false }
    public var dismissal: DismissMode { self[.dismiss].value?.text.flatMap(DismissMode.init(rawValue:)) ?? .word }
    /// `jsonl`, or nil for no events.
    public var events: String? { self[.events].value?.text }

    /// What the timers will do that a person may not expect, one line each: a nap of zero (the
    /// alarm rings as the release ends), a failsafe shorter than release and nap together (it
    /// rings before the nap ends). Both are allowed: a script or a test may mean them.
    public var warnings: [String] {
        let timers = timers
        func named(_ key: NapSettingKey) -> String {
            let source = self[key].source
            return source == .flag ? key.flag : "\(key.rawValue) (\(source.description(of: key)))"
        }
        var warnings: [String] = []
        if timers.nap == .zero {
            warnings.append("\(named(.nap)) 0: the alarm rings as soon as the release ends")
        }
        // Named for this nap (a flag, the environment), not kept in a preset for desk naps.
        if self[.idleAfter].source.rank <= 1, hold != .desktop {
            warnings.append("\(named(.idleAfter)) applies only with --hold desktop; this nap is held by \(hold == .none ? "nothing" : "a key")")
        }
        if timers.max < timers.release + timers.nap {
            let max = timers.max.compactDescription
            warnings.append("\(named(.max)) \(max) is shorter than release \(timers.release.compactDescription) + nap \(timers.nap.compactDescription): the failsafe rings at \(max), before the nap ends")
        }
        return warnings
    }

    /// The nap's timers (the basic preset's where a setting has none).
    public var timers: SessionTimers {
        func duration(_ key: NapSettingKey) -> Duration? { self[key].value?.duration }
        return SessionTimers(
            release: duration(.release) ?? Preset.basic.timers.release, nap: duration(.nap) ?? Preset.basic.timers.nap,
            max: duration(.max) ?? Preset.basic.timers.max, snooze: duration(.snooze) ?? Preset.basic.timers.snooze,
            ringLimit: duration(.ringLimit))
    }

    /// The wall-clock time the alarm rings (`--until`, see ``wake(at:as:now:calendar:)``); nil:
    /// the timers decide.
    public internal(set) var wakeAt: Date?

    /// The nap these settings describe.
    public func configuration(showsCountdown: Bool, usesColour: Bool, movesCursor: Bool = true) -> NapConfiguration {
        func duration(_ key: NapSettingKey) -> Duration? { self[key].value?.duration }
        func number(_ key: NapSettingKey) -> Int? { self[key].value?.number }
        func text(_ key: NapSettingKey) -> String? { self[key].value?.text }
        return NapConfiguration(
            timers: timers, presetName: preset.name, hold: hold, idleAfter: idleAfter, sound: text(.sound), volume: number(.volume) ?? 80,
            fadeIn: duration(.fadeIn) ?? .seconds(10), device: text(.device) ?? "default", systemVolume: number(.systemVolume),
            route: text(.route).flatMap(AlarmRoute.init(parsing:)) ?? .wake, fixesVolume: self[.fixVolume].value?.flag ?? true,
            source: text(.source), emitters: self[.emitter].value?.list ?? [], bpm: number(.bpm) ?? 60,
            sleepSound: text(.sleepSound), sleepVolume: number(.sleepVolume) ?? 60, sleepDevice: text(.sleepDevice),
            dismissal: dismissal, showsCountdown: showsCountdown, usesColour: usesColour, movesCursor: movesCursor,
            wakeAt: wakeAt)
    }
}

/// Resolves a nap's settings from their layers: a pure function, the one place the precedence of
/// SPEC §3 lives.
public enum NapSettingsResolver {
    /// Each setting from the strongest layer that has it: the flag, the environment, the preset
    /// named with `--preset` (or `SNOOZEFUSE_PRESET`), the settings, the default preset (the
    /// `preset` setting, else `basic`), the built-in default.
    ///
    /// A value is read by the same parser wherever it comes from. A refused flag is a usage error
    /// (exit 64); a refused value from the environment, a preset or the settings is a
    /// configuration error (exit 78) that says where it came from. An unknown preset named with
    /// `--preset` is missing input (exit 66, as an unknown sound); named anywhere else, a
    /// configuration error.
    public static func resolve(_ layers: NapSettingLayers) throws(NapSetupError) -> ResolvedNapSettings {
        // The preset first: where it was named decides where its values rank.
        var settings: [ResolvedNapSettings.Setting] = []
        let (presetValue, presetSource) = try value(of: .preset, layers: layers, preset: nil, named: false)
        let presetName = presetValue?.text ?? Preset.basic.name
        guard let preset = layers.preset(named: presetName) else {
            // Named with --preset: a preset that is not there, as an unknown sound is (66);
            // named anywhere else, that place's configuration is wrong (78).
            if case .flag = presetSource { throw NapSetupError(.missingInput, [layers.unknownPresetMessage(presetName, place: "for --preset")]) }
            // Where it was named, the failure says first.
            throw failure(.preset, source: presetSource, message: layers.unknownPresetMessage(presetName, place: ""), text: [presetName])
        }
        settings.append(.init(key: .preset, value: .text(preset.name), source: presetSource))
        let named = presetSource == .flag || presetSource == .environment
        for key in NapSettingKey.allCases where key != .preset {
            let (value, source) = try value(of: key, layers: layers, preset: preset, named: named)
            settings.append(.init(key: key, value: value, source: source))
        }
        return ResolvedNapSettings(settings: settings, preset: preset)
    }

    /// `key`'s value and source: the first layer that has it.
    private static func value(of key: NapSettingKey, layers: NapSettingLayers, preset: NapPreset?,
                              named: Bool) throws(NapSetupError) -> (NapSettingValue?, NapSettingSource) {
        var candidates: [(NapSettingSource, [String])] = []
        if let flag = layers.flags[key], !flag.isEmpty { candidates.append((.flag, flag)) }
        if let variable = layers.environment[key.environmentVariable], !variable.isEmpty {
            let values = key.isList ? variable.split(separator: "\n").map(String.init) : [variable]
            candidates.append((.environment, values))
        }
        if named, let preset, let values = preset.values[key.rawValue] { candidates.append((.preset(preset.name), values)) }
        if let values = layers.settings[key.rawValue], !values.isEmpty { candidates.append((.config, values)) }
        if !named, let preset, let values = preset.values[key.rawValue] { candidates.append((.defaultPreset(preset.name), values)) }
        guard let (source, texts) = candidates.first else { return (key.builtInDefault, .builtIn) }
        do {
            return (try key.parse(texts), source)
        } catch {
            throw failure(key, source: source, message: error.message, text: texts)
        }
    }

    /// A refused value, as the error its source calls for.
    private static func failure(_ key: NapSettingKey, source: NapSettingSource, message: String, text: [String]) -> NapSetupError {
        let shown = text.joined(separator: "; ")
        switch source {
        case .flag, .until:
            return NapSetupError(.usage, [message])
        case .environment:
            return NapSetupError(.badConfiguration, ["\(key.environmentVariable)=\(shown): \(message)"])
        case .preset(let name), .defaultPreset(let name):
            return NapSetupError(.badConfiguration, ["the preset \"\(name)\" holds \(key.rawValue) \(shown): \(message) (`snoozefuse presets save \(name) \(key.flag) VALUE` changes it)"])
        case .config:
            return NapSetupError(.badConfiguration, ["the setting \(key.rawValue) is \(shown): \(message) (`snoozefuse config set \(key.rawValue) VALUE` changes it, `snoozefuse config unset \(key.rawValue)` removes it)"])
        case .builtIn:
            return NapSetupError(.internalError, ["the built-in default of \(key.rawValue) is refused: \(message)"])
        }
    }
}

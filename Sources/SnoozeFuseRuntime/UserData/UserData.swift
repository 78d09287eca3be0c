public import Foundation
import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem

/// The user's presets, settings and nap history, in the database (`library.sqlite` in the data
/// folder), for the commands that show and change them and for `nap`, which reads them.
///
/// Every failure is a ``NapSetupError``: a refused name or value (64), an unknown preset (66), or
/// a database that cannot be used (78), whose message names the file and says what to do. Nothing
/// here changes a database it refuses: a damaged file, or one from a newer release, stays as it is.
public struct UserData: Sendable {
    let paths: StorePaths

    /// The data of the user `environment` describes (its XDG folders).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws(NapSetupError) {
        do { paths = try StorePaths(environment: environment) } catch { throw Self.failure(error) }
    }

    init(paths: StorePaths) { self.paths = paths }

    /// The database's path, for messages.
    public var databasePath: String { paths.database.path }

    // MARK: Opening

    func reader() throws(NapSetupError) -> StoreDatabase? {
        do { return try StoreDatabase.openForReading(path: paths.databasePath) } catch { throw Self.failure(error) }
    }

    func writer() throws(NapSetupError) -> StoreDatabase {
        do { return try StoreDatabase.openForWriting(file: paths.database, checkIntegrity: true) } catch { throw Self.failure(error) }
    }

    /// Runs a store call, its failure as a ``NapSetupError``.
    func store<R>(_ body: () throws(StoreError) -> R) throws(NapSetupError) -> R {
        do { return try body() } catch { throw Self.failure(error) }
    }

    /// A store failure for people: the file, what went wrong, and what to do.
    static func failure(_ error: StoreError) -> NapSetupError {
        switch error.kind {
        case .notFound: return NapSetupError(.missingInput, [error.description])
        case .nameTaken: return NapSetupError(.usage, [error.description])
        case .damaged:
            let path = error.subject
            return NapSetupError(.badConfiguration, [
                "\(path): the database is damaged: \(error.message). snoozefuse leaves it as it is.",
                "To recover what it holds: sqlite3 '\(path)' .recover | sqlite3 '\(path).recovered', then mv '\(path)' '\(path).damaged'; mv '\(path).recovered' '\(path)'; chmod 600 '\(path)'.",
                "Or start afresh: mv '\(path)' '\(path).damaged' (your sound files are kept and listed again; presets, settings and nap history start empty).",
            ])
        case .badConfiguration, .fileSystem, .database, .busy, .newerRelease:
            return NapSetupError(.badConfiguration, [error.description])
        case .libraryUnavailable:
            // As every library loaded at first use: exit 70, naming the package (README's exit codes).
            return NapSetupError(.internalError, [error.description])
        }
    }

    // MARK: What a nap reads

    /// How long a nap waits for the database before it goes on without it.
    public static let napReadLimit: Duration = .seconds(2)

    /// The layers of a nap's settings: `flags`, `environment`, and the settings and saved presets
    /// in the database. A database that cannot be read, or does not answer within
    /// ``napReadLimit`` (another command holds it, a slow or hung disk), does not stop or hold up a
    /// nap (an alarm must not depend on it): its settings and saved presets are then left out, and
    /// ``NapSettingLayers/storeProblem`` says why. The reads run on a thread of their own.
    public func napLayers(flags: [NapSettingKey: [String]], environment: [String: String]) -> NapSettingLayers {
        var layers = NapSettingLayers(flags: flags, environment: environment)
        let read = BoundedCall.start(named: "sf-settings") { [self] () -> Result<([String: [String]], [NapPreset])?, NapSetupError> in
            do throws(NapSetupError) {
                guard let database = try reader() else { return .success(nil) }
                let settings = try store { () throws(StoreError) in try database.settings() }
                let presets = try store { () throws(StoreError) in try database.presets() }.map(NapPreset.init)
                return .success((settings, presets))
            } catch {
                return .failure(error)
            }
        }
        switch read.wait(atMost: Self.napReadLimit) {
        case .success(let found?)?:
            (layers.settings, layers.savedPresets) = found
        case .success(nil)?:
            break
        case .failure(let error)?:
            layers.storeProblem = error.lines.joined(separator: " ")
        case nil:
            layers.storeProblem = "the database \(paths.database.path) did not answer within \(Self.napReadLimit.components.seconds)s (another command holds it, or its disk does not answer)"
        }
        return layers
    }

    /// Resolves a nap's settings (see ``NapSettingsResolver``); the second value says why the
    /// settings and saved presets were left out, when they were.
    public func resolveNap(flags: [NapSettingKey: [String]],
                           environment: [String: String] = ProcessInfo.processInfo.environment) throws(NapSetupError) -> (ResolvedNapSettings, warning: String?) {
        let layers = napLayers(flags: flags, environment: environment)
        let resolved = try NapSettingsResolver.resolve(layers)
        return (resolved, layers.storeProblem.map { "your settings and saved presets are not used for this nap: \($0)" })
    }

    // MARK: Presets

    /// The built-in presets, then the saved ones (by name).
    public func presets() throws(NapSetupError) -> [NapPreset] {
        guard let database = try reader() else { return NapPreset.builtIn }
        return NapPreset.builtIn + (try store { () throws(StoreError) in try database.presets() }).map(NapPreset.init)
    }

    /// The preset called `name` (exit 66 when there is none).
    public func preset(named name: String) throws(NapSetupError) -> NapPreset {
        let all = try presets()
        guard let preset = all.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw NapSetupError(.missingInput, ["no preset is called \"\(name)\". Presets: \(all.map(\.name).joined(separator: ", ")) (`snoozefuse presets list` shows them)."])
        }
        return preset
    }

    /// What ``savePreset(named:flags:from:now:)`` did.
    public struct SavedPreset: Sendable {
        public var preset: NapPreset
        /// The preset its other values came from.
        public var base: String
        /// Whether it replaced a saved preset of that name.
        public var replaced: Bool
    }

    /// Saves the preset `name`: the values of `base` (default: the saved preset of that name, else
    /// the default preset), with `flags` over them, each checked as the flag is. Built-in names
    /// are refused (exit 64), and so are settings a preset cannot hold.
    public func savePreset(named name: String, flags: [NapSettingKey: [String]], from base: String?,
                           now: Date = Date()) throws(NapSetupError) -> SavedPreset {
        let name = name.trimmingCharacters(in: .whitespaces)
        if let problem = Self.presetNameProblem(name) { throw NapSetupError(.usage, [problem]) }
        if let refused = flags.keys.sorted().first(where: { !$0.isPresetValue }) {
            throw NapSetupError(.usage, ["a preset holds the timers and the alarm's choices, not \(refused.flag)"])
        }
        for (key, values) in flags.sorted(by: { $0.key < $1.key }) {
            do { _ = try key.parse(values) } catch { throw NapSetupError(.usage, [error.message]) }
        }
        let database = try writer()
        // Read and written in one transaction: a save made meanwhile by another process is kept.
        var problem: NapSetupError?
        var made: SavedPreset?
        _ = try store { () throws(StoreError) in
            try database.savePreset(named: name) { stored, settings in
                let saved = stored.map(NapPreset.init)
                let existing = saved.first { $0.name.lowercased() == name.lowercased() }
                let layers = NapSettingLayers(settings: settings, savedPresets: saved)
                let baseName = base ?? existing?.name ?? layers.settings[NapSettingKey.preset.rawValue]?.first ?? Preset.basic.name
                guard let basePreset = layers.preset(named: baseName) else {
                    problem = NapSetupError(base == nil ? .badConfiguration : .missingInput, [layers.unknownPresetMessage(baseName, place: base == nil ? "(your default preset)" : "for --from")])
                    return nil
                }
                var values = basePreset.values.filter { NapSettingKey(rawValue: $0.key)?.isPresetValue ?? false }
                for key in [NapSettingKey.release, .nap, .max] where values[key.rawValue] == nil {
                    values[key.rawValue] = NapPreset(Preset.basic).values[key.rawValue]
                }
                // Stored as the parser reads them back (`1500` as `25m`).
                for (key, texts) in flags { values[key.rawValue] = (try? key.parse(texts))?.texts ?? texts }
                let preset = StoredPreset(name: name, values: values, savedAt: now)
                made = SavedPreset(preset: NapPreset(preset), base: basePreset.name, replaced: existing != nil)
                return preset
            }
        }
        guard let made else {
            throw problem ?? NapSetupError(.internalError, ["the preset \"\(name)\" was not saved, and nothing said why"])
        }
        return made
    }

    /// Removes the saved preset `name`. Built-in presets are refused (64), and so is the default
    /// preset while the `preset` setting names it; an unknown name exits 66.
    public func removePreset(named name: String) throws(NapSetupError) -> NapPreset {
        if Preset.builtIn(named: name.lowercased()) != nil {
            throw NapSetupError(.usage, ["\"\(name)\" is a built-in preset; built-in presets cannot be removed."])
        }
        let database = try writer()
        if let preset = try store({ () throws(StoreError) in try database.settings() })[NapSettingKey.preset.rawValue]?.first,
           preset.lowercased() == name.lowercased() {
            throw NapSetupError(.usage, ["\"\(preset)\" is your default preset (`snoozefuse config get preset`); choose another first (`snoozefuse config set preset basic`, or `config unset preset`)."])
        }
        return NapPreset(try store { () throws(StoreError) in try database.removePreset(named: name) })
    }

    /// Why `name` cannot be a saved preset's name, or nil.
    static func presetNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a preset needs a name" }
        if Preset.builtIn.contains(where: { $0.name.lowercased() == name.lowercased() }) {
            return "\"\(name)\" is a built-in preset; built-in presets cannot be overwritten. Save under another name."
        }
        if name.hasPrefix("-") { return "a preset's name cannot start with \"-\" (it would read as a flag): \"\(name)\"" }
        if name.count > 64 { return "a preset's name has at most 64 characters; \"\(name.prefix(20))…\" has \(name.count)" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "/" }) {
            return "a preset's name cannot hold control characters or \"/\""
        }
        return nil
    }

    // MARK: Settings

    /// What names the sound `name` as the alarm or the sleep sound, for people: `the setting
    /// sound`, `preset "power" (sleep-sound)`. A sound removed or renamed leaves these naming
    /// nothing: every nap with them would exit 66, so `sounds remove` and `rename` say so then.
    public func users(ofSound name: String) throws(NapSetupError) -> [String] {
        let keys: [NapSettingKey] = [.sound, .sleepSound]
        var users: [String] = []
        let settings = try settings()
        for key in keys where settings[key] == [name] { users.append("the setting \(key.rawValue)") }
        for preset in try presets() where !preset.isBuiltIn {
            for key in keys where preset.values[key.rawValue] == [name] {
                users.append("preset \"\(preset.name)\"" + (key == .sound ? "" : " (\(key.rawValue))"))
            }
        }
        return users
    }

    /// The settings, by key (settings this release does not know are left out).
    public func settings() throws(NapSetupError) -> [NapSettingKey: [String]] {
        guard let database = try reader() else { return [:] }
        let stored = try store { () throws(StoreError) in try database.settings() }
        return Dictionary(uniqueKeysWithValues: stored.compactMap { entry in NapSettingKey(rawValue: entry.key).map { ($0, entry.value) } })
    }

    /// The setting called `name` (exit 64 for an unknown one, listing them).
    public static func settingKey(_ name: String) throws(NapSetupError) -> NapSettingKey {
        guard let key = NapSettingKey(named: name) else {
            throw NapSetupError(.usage, ["there is no setting \"\(name)\"; the settings are the nap flags: \(NapSettingKey.allCases.map(\.rawValue).joined(separator: ", ")) (`snoozefuse config list`)."])
        }
        return key
    }

    /// Sets `key` to `values`, checked as its flag checks them (exit 64 with the flag's message);
    /// `preset` must name a preset there is. Returns the value as stored.
    public func set(_ key: NapSettingKey, to values: [String]) throws(NapSetupError) -> NapSettingValue {
        let value: NapSettingValue
        do { value = try key.parse(values) } catch { throw NapSetupError(.usage, [error.message]) }
        let database = try writer()
        if key == .preset, let name = value.text {
            let layers = NapSettingLayers(savedPresets: try store { () throws(StoreError) in try database.presets() }.map(NapPreset.init))
            guard let preset = layers.preset(named: name) else {
                throw NapSetupError(.usage, [layers.unknownPresetMessage(name, place: "for the setting preset")])
            }
            try store { () throws(StoreError) in try database.setSetting(key.rawValue, to: [preset.name]) }
            return .text(preset.name)
        }
        try store { () throws(StoreError) in try database.setSetting(key.rawValue, to: value.texts) }
        return value
    }

    /// Removes the setting `key`; returns whether it was set.
    public func unset(_ key: NapSettingKey) throws(NapSetupError) -> Bool {
        let database = try writer()
        return try store { () throws(StoreError) in try database.unsetSetting(key.rawValue) }
    }
}

extension NapPreset {
    init(_ stored: StoredPreset) {
        self.init(name: stored.name, values: stored.values, savedAt: stored.savedAt)
    }
}

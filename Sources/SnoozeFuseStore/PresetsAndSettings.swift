public import Foundation
import GRDB

/// A preset the user saved: a name and the nap settings it holds, by key (`release`, `volume`,
/// `emitter` …), each key with one or more values in order. The store does not interpret them:
/// the runtime validates what goes in and what comes out.
public struct StoredPreset: Sendable, Hashable {
    public var name: String
    public var values: [String: [String]]
    public var savedAt: Date

    public init(name: String, values: [String: [String]], savedAt: Date) {
        self.name = name
        self.values = values
        self.savedAt = savedAt
    }
}

// The `presets`/`presetValues` and `settings` tables: one row per value, so `sqlite3` shows them
// plainly and a key can hold several values (`emitter`).
extension StoreDatabase {
    static let presetsMigration = "v2: presets"
    static let settingsMigration = "v3: settings"

    // MARK: Presets

    /// Every saved preset, by name (compared without case).
    public func presets() throws(StoreError) -> [StoredPreset] {
        guard has(Self.presetsMigration) else { return [] }
        return try read("cannot read the presets", Self.presets)
    }

    private static func presets(_ db: Database) throws -> [StoredPreset] {
        var values: [String: [String: [String]]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT preset, key, value FROM presetValues ORDER BY preset, key, position") {
            // Read as text whatever a hand put there (bytes that are not UTF-8 trapped).
            let preset = text(row[0])
            values[preset.lowercased(), default: [:]][text(row[1]), default: []].append(text(row[2]))
        }
        return try Row.fetchAll(db, sql: "SELECT name, savedAt FROM presets ORDER BY name COLLATE NOCASE").map { row in
            let name = text(row[0])
            return StoredPreset(name: name, values: values[name.lowercased()] ?? [:], savedAt: Self.date(text(row[1])))
        }
    }

    /// The saved preset called `name` (compared without case), if any.
    public func preset(named name: String) throws(StoreError) -> StoredPreset? {
        try presets().first { $0.name.lowercased() == name.lowercased() }
    }

    /// Saves `preset`, replacing a saved one of the same name (compared without case) in one
    /// transaction: a reader sees the old preset or the new one, never a mixture.
    public func savePreset(_ preset: StoredPreset) throws(StoreError) {
        try write("cannot save the preset \"\(preset.name)\"") { db in try Self.save(preset, in: db) }
    }

    /// Saves what `make` makes of the saved presets and the settings as they are when the write
    /// lock is held, in that one transaction, so a preset changed by another process meanwhile is
    /// changed again, not overwritten with an older copy (two `presets save` at once keep both).
    /// `make` returns nil to save nothing; `name` is for messages.
    public func savePreset(named name: String,
                           making make: (_ saved: [StoredPreset], _ settings: [String: [String]]) -> StoredPreset?) throws(StoreError) -> StoredPreset? {
        try write("cannot save the preset \"\(name)\"") { db in
            guard let preset = make(try Self.presets(db), try Self.settings(db)) else { return nil }
            try Self.save(preset, in: db)
            return preset
        }
    }

    private static func save(_ preset: StoredPreset, in db: Database) throws {
        try db.execute(sql: "DELETE FROM presets WHERE name = ?", arguments: [preset.name])
        try db.execute(sql: "INSERT INTO presets (name, savedAt) VALUES (?, ?)",
                       arguments: [preset.name, Self.timestamp(preset.savedAt)])
        for (key, values) in preset.values {
            for (position, value) in values.enumerated() {
                try db.execute(sql: "INSERT INTO presetValues (preset, key, position, value) VALUES (?, ?, ?, ?)",
                               arguments: [preset.name, key, position, value])
            }
        }
    }

    /// Removes the saved preset called `name` and returns what it was; throws
    /// ``StoreError/Kind/notFound`` when there is none.
    @discardableResult
    public func removePreset(named name: String) throws(StoreError) -> StoredPreset {
        guard let existing = try preset(named: name) else {
            throw StoreError(.notFound, subject: name, message: "no saved preset has this name (`snoozefuse presets list` shows them)")
        }
        try write("cannot remove the preset \"\(name)\"") { db in
            try db.execute(sql: "DELETE FROM presets WHERE name = ?", arguments: [existing.name])
        }
        return existing
    }

    // MARK: Settings

    /// Every setting, by key.
    public func settings() throws(StoreError) -> [String: [String]] {
        guard has(Self.settingsMigration) else { return [:] }
        return try read("cannot read the settings", Self.settings)
    }

    private static func settings(_ db: Database) throws -> [String: [String]] {
        var settings: [String: [String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM settings ORDER BY key, position") {
            settings[text(row[0]), default: []].append(text(row[1]))
        }
        return settings
    }

    /// Sets `key` to `values` (replacing what it had), in one transaction.
    public func setSetting(_ key: String, to values: [String]) throws(StoreError) {
        try write("cannot save the setting \(key)") { db in
            try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [key])
            for (position, value) in values.enumerated() {
                try db.execute(sql: "INSERT INTO settings (key, position, value) VALUES (?, ?, ?)", arguments: [key, position, value])
            }
        }
    }

    /// Removes the setting `key`; returns whether it was set.
    @discardableResult
    public func unsetSetting(_ key: String) throws(StoreError) -> Bool {
        try write("cannot remove the setting \(key)") { db in
            try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [key])
            return db.changesCount > 0
        }
    }
}

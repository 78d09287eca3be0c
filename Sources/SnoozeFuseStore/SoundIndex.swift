public import Foundation
import GRDB

/// One imported sound as the index records it.
public struct StoredSound: Sendable, Hashable {
    /// The name people use (`--sound NAME`, `sounds remove NAME`): unique, compared without case.
    public var name: String
    /// The file name it was imported from (no folder).
    public var originalFileName: String
    public var frames: Int64
    public var sampleRate: Int
    public var channels: Int
    public var durationSeconds: Double
    /// The stored file's encoding, e.g. `CAF, Signed 16 bit PCM`.
    public var format: String
    /// The source's container and encoding, e.g. `WAV (Microsoft), Signed 24 bit PCM`.
    public var sourceFormat: String
    /// SHA-256 of the decoded audio as stored (see `AudioDigest` in the sound library), lowercase hex.
    /// Unique: the same audio is stored once.
    public var sha256: String
    public var importedAt: Date
    /// The file's name in the sounds folder.
    public var storedFileName: String

    public init(
        name: String, originalFileName: String, frames: Int64, sampleRate: Int, channels: Int,
        durationSeconds: Double, format: String, sourceFormat: String, sha256: String,
        importedAt: Date, storedFileName: String
    ) {
        self.name = name
        self.originalFileName = originalFileName
        self.frames = frames
        self.sampleRate = sampleRate
        self.channels = channels
        self.durationSeconds = durationSeconds
        self.format = format
        self.sourceFormat = sourceFormat
        self.sha256 = sha256
        self.importedAt = importedAt
        self.storedFileName = storedFileName
    }
}

/// The SQLite index of imported sounds (`library.sqlite`), through GRDB; callers see only values and
/// ``StoreError``. The schema is created and upgraded by a migrator, one named migration per change.
public final class SoundIndex: Sendable {
    public let path: String
    private let queue: DatabaseQueue

    /// Opens (creating, mode 0600) the index at `file`, in a folder that exists, and migrates it.
    public init(file: URL) throws(StoreError) {
        path = file.path
        try PrivateFiles.ensurePrivateFile(file)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.label = "snoozefuse.sounds"
            queue = try DatabaseQueue(path: file.path, configuration: configuration)
            try Self.migrator.migrate(queue)
        } catch {
            throw Self.failure(error, path: file.path, "cannot open the sound index; if it is damaged, move it away and import the sounds again")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: sounds") { db in
            try db.execute(sql: """
                CREATE TABLE sounds (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
                    originalFileName TEXT NOT NULL,
                    frames INTEGER NOT NULL,
                    sampleRate INTEGER NOT NULL,
                    channels INTEGER NOT NULL,
                    durationSeconds REAL NOT NULL,
                    format TEXT NOT NULL,
                    sourceFormat TEXT NOT NULL,
                    sha256 TEXT NOT NULL UNIQUE,
                    importedAt TEXT NOT NULL,
                    storedFileName TEXT NOT NULL UNIQUE
                )
                """)
        }
        return migrator
    }

    /// Every imported sound, by name.
    public func all() throws(StoreError) -> [StoredSound] {
        try read("cannot read the sound index") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM sounds ORDER BY name COLLATE NOCASE").map(Self.sound)
        }
    }

    /// The sound called `name` (compared without case), if any.
    public func sound(named name: String) throws(StoreError) -> StoredSound? {
        try read("cannot read the sound index") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM sounds WHERE name = ?", arguments: [name]).map(Self.sound)
        }
    }

    /// The sound whose audio has this digest, if any.
    public func sound(sha256: String) throws(StoreError) -> StoredSound? {
        try read("cannot read the sound index") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM sounds WHERE sha256 = ?", arguments: [sha256]).map(Self.sound)
        }
    }

    /// Adds `sound`; throws ``StoreError/Kind/nameTaken`` if its name is used.
    public func insert(_ sound: StoredSound) throws(StoreError) {
        if try self.sound(named: sound.name) != nil {
            throw StoreError(.nameTaken, subject: sound.name, message: "a sound with this name exists; choose another name")
        }
        try write("cannot add \"\(sound.name)\" to the sound index") { db in
            try db.execute(sql: """
                INSERT INTO sounds (name, originalFileName, frames, sampleRate, channels, durationSeconds,
                                    format, sourceFormat, sha256, importedAt, storedFileName)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    sound.name, sound.originalFileName, sound.frames, sound.sampleRate, sound.channels,
                    sound.durationSeconds, sound.format, sound.sourceFormat, sound.sha256,
                    Self.timestamp(sound.importedAt), sound.storedFileName,
                ])
        }
    }

    /// Removes the sound called `name` and returns what it was.
    public func remove(named name: String) throws(StoreError) -> StoredSound {
        guard let existing = try sound(named: name) else {
            throw StoreError(.notFound, subject: name, message: "no imported sound has this name (`snoozefuse sounds list` shows them)")
        }
        try write("cannot remove \"\(name)\" from the sound index") { db in
            try db.execute(sql: "DELETE FROM sounds WHERE storedFileName = ?", arguments: [existing.storedFileName])
        }
        return existing
    }

    /// Renames a sound; `newName` must be free (a change of case only is allowed).
    public func rename(_ name: String, to newName: String) throws(StoreError) -> StoredSound {
        guard var existing = try sound(named: name) else {
            throw StoreError(.notFound, subject: name, message: "no imported sound has this name (`snoozefuse sounds list` shows them)")
        }
        if let other = try sound(named: newName), other.storedFileName != existing.storedFileName {
            throw StoreError(.nameTaken, subject: newName, message: "a sound with this name exists; remove it or choose another name")
        }
        try write("cannot rename \"\(name)\" in the sound index") { db in
            try db.execute(sql: "UPDATE sounds SET name = ? WHERE storedFileName = ?",
                           arguments: [newName, existing.storedFileName])
        }
        existing.name = newName
        return existing
    }

    // MARK: Plumbing

    private func read<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try queue.read(body) } catch { throw Self.failure(error, path: path, what) }
    }

    private func write<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try queue.write(body) } catch { throw Self.failure(error, path: path, what) }
    }

    private static func failure(_ error: any Error, path: String, _ what: String) -> StoreError {
        StoreError(.database, subject: path, message: "\(what): \(error)")
    }

    private static func sound(_ row: Row) -> StoredSound {
        StoredSound(
            name: row["name"], originalFileName: row["originalFileName"], frames: row["frames"],
            sampleRate: row["sampleRate"], channels: row["channels"], durationSeconds: row["durationSeconds"],
            format: row["format"], sourceFormat: row["sourceFormat"], sha256: row["sha256"],
            importedAt: date(row["importedAt"]), storedFileName: row["storedFileName"])
    }

    /// Import times are stored as ISO 8601 UTC text, so `sqlite3` shows them readably.
    private static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    private static func date(_ text: String) -> Date {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? .distantPast
    }
}

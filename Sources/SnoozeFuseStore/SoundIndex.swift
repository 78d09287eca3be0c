public import Foundation
import GRDB
import Glibc

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
///
/// The database is in WAL mode (set once, when it is created or first migrated): readers never wait
/// for a writer, so looking a sound up by name (``openForReading(file:)``) works while another
/// process imports. The index is a cache of what the sound files say about themselves (each stored
/// file carries its name and metadata; see the sound library): a missing, empty or damaged index
/// can always be rebuilt from the files.
public final class SoundIndex: Sendable {
    public let path: String
    private let queue: DatabaseQueue

    /// What ``init(file:movingDamagedAside:)`` found at the index's path.
    public enum Condition: Sendable, Equatable {
        /// A usable index was there.
        case existing
        /// There was no file; a new, empty index was created.
        case missing
        /// The file was empty (0 bytes); it was made a new, empty index.
        case empty
        /// The file was not a usable index (`reason`); it was renamed to `movedTo` (kept, never
        /// overwritten) and a new, empty index was created in its place.
        case damaged(reason: String, movedTo: String)
    }

    /// What opening found (always ``Condition/existing`` for a reader).
    public let condition: Condition

    /// How long a writer waits for another process's SQLite write lock.
    static let writerBusyTimeout: TimeInterval = 5
    /// How long a reader waits: in WAL mode readers are not blocked by writers, so this covers only
    /// an index still in the previous release's rollback-journal mode, or a checkpoint's recovery.
    static let readerBusyTimeout: TimeInterval = 1

    /// Opens the index at `file` for reading and writing: creates it (mode 0600) if it is missing,
    /// migrates it, and puts it in WAL mode. A file that is not a usable index is moved aside (renamed
    /// `library.sqlite.damaged-<UTC time>`, with its `-wal`/`-shm` files; never overwritten) and a new
    /// index is made, when `movingDamagedAside` (the caller holds the sounds folder's lock, so no
    /// other process is doing the same); otherwise it is a ``StoreError/Kind/damaged`` error.
    public init(file: URL, movingDamagedAside: Bool, now: Date = Date()) throws(StoreError) {
        path = file.path
        var condition = Condition.existing
        var status = stat()
        if lstat(file.path, &status) != 0 {
            condition = .missing
        } else if (status.st_mode & S_IFMT) == S_IFREG && status.st_size == 0 {
            condition = .empty
        }
        try PrivateFiles.ensurePrivateFile(file, what: "sound index")
        do {
            queue = try Self.openWriter(file.path)
        } catch where error.kind == .damaged && movingDamagedAside {
            let movedTo = try Self.moveAside(file, now: now)
            condition = .damaged(reason: error.message, movedTo: movedTo)
            try PrivateFiles.ensurePrivateFile(file, what: "sound index")
            queue = try Self.openWriter(file.path)
        }
        self.condition = condition
    }

    private init(path: String, queue: DatabaseQueue) {
        self.path = path
        self.queue = queue
        condition = .existing
    }

    /// Opens the index at `file` read-only, for look-ups: never creates, migrates, moves or writes
    /// anything, takes no lock of the sounds folder, and waits for SQLite's locks at most
    /// ``readerBusyTimeout``. Returns nil when there is no index yet (no file, or an empty one).
    ///
    /// - Throws: ``StoreError/Kind/damaged`` (not a usable index), ``StoreError/Kind/busy``,
    ///   ``StoreError/Kind/fileSystem(errno:)`` (cannot be read).
    public static func openForReading(file: URL) throws(StoreError) -> SoundIndex? {
        var status = stat()
        if stat(file.path, &status) != 0 {
            if errno == ENOENT { return nil }
            throw PrivateFiles.fileError(errno, file.path, "cannot read the sound index")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(.damaged, subject: file.path, message: "the sound index is not a regular file")
        }
        if status.st_size == 0 { return nil }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(readerBusyTimeout)
            configuration.label = "snoozefuse.sounds.reader"
            let queue = try DatabaseQueue(path: file.path, configuration: configuration)
            let index = SoundIndex(path: file.path, queue: queue)
            try index.read("cannot read the sound index") { db in try checkSchema(db, path: file.path) }
            return index
        } catch let error as StoreError {
            throw error
        } catch {
            throw failure(error, path: file.path, "cannot open the sound index")
        }
    }

    private static func openWriter(_ path: String) throws(StoreError) -> DatabaseQueue {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(writerBusyTimeout)
            configuration.label = "snoozefuse.sounds"
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try migrator.migrate(queue)
            try queue.read { db in
                try checkSchema(db, path: path)
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                if check != ["ok"] {
                    throw StoreError(.damaged, subject: path, message: "SQLite's integrity check failed: \(check.prefix(3).joined(separator: "; "))")
                }
            }
            // WAL (persistent, so this runs once per database): readers never wait for a writer.
            if try queue.read({ db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }) != "wal" {
                // Another connection in rollback mode makes the switch fail with SQLITE_BUSY; the
                // next open tries again.
                _ = try? queue.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
            }
            return queue
        } catch let error as StoreError {
            throw error
        } catch {
            throw failure(error, path: path, "cannot open the sound index")
        }
    }

    /// Fails unless the `sounds` table has every column this version reads.
    private static func checkSchema(_ db: Database, path: String) throws {
        do {
            _ = try Row.fetchAll(db, sql: """
                SELECT name, originalFileName, frames, sampleRate, channels, durationSeconds, format,
                       sourceFormat, sha256, importedAt, storedFileName FROM sounds LIMIT 0
                """)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            throw StoreError(.damaged, subject: path, message: "it has no table of sounds this version can read (\(error.message ?? "\(error)"))")
        }
    }

    /// Renames the damaged index (and its `-wal`/`-shm` files) to `<name>.damaged-<UTC time>`,
    /// never replacing a file, and returns the new path.
    private static func moveAside(_ file: URL, now: Date) throws(StoreError) -> String {
        let stamp = now.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted))
        var attempt = 1
        while true {
            let target = file.path + ".damaged-" + stamp + (attempt == 1 ? "" : "-\(attempt)")
            // link + unlink: atomic, and fails (EEXIST) instead of replacing an existing file.
            if link(file.path, target) == 0 {
                for suffix in ["-wal", "-shm"] where PrivateFiles.exists(file.path + suffix) {
                    if link(file.path + suffix, target + suffix) == 0 { unlink(file.path + suffix) }
                }
                if unlink(file.path) != 0 {
                    throw PrivateFiles.fileError(errno, file.path, "moved a copy of the damaged sound index to \(target) but cannot remove it from its place")
                }
                return target
            }
            if errno != EEXIST || attempt > 100 {
                throw PrivateFiles.fileError(errno, file.path, "the sound index is damaged and cannot be moved aside to \(target); nothing was changed")
            }
            attempt += 1
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

    /// The stored file names every row points to.
    public func storedFileNames() throws(StoreError) -> Set<String> {
        try read("cannot read the sound index") { db in
            Set(try String.fetchAll(db, sql: "SELECT storedFileName FROM sounds"))
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

    /// A GRDB or SQLite error as a ``StoreError`` that names its real cause.
    private static func failure(_ error: any Error, path: String, _ what: String) -> StoreError {
        if let error = error as? StoreError { return StoreError(error.kind, subject: path, message: error.message) }
        guard let error = error as? DatabaseError else {
            return StoreError(.database, subject: path, message: "\(what): \(error)")
        }
        let detail = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return StoreError(.damaged, subject: path, message: "it is not an SQLite database (\(detail))")
        case .SQLITE_CORRUPT:
            return StoreError(.damaged, subject: path, message: "the SQLite database is corrupt (\(detail))")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.busy, subject: path, message: "\(what): another process holds the sound index's lock (\(detail)); try again when it is done")
        case .SQLITE_READONLY:
            return StoreError(.fileSystem(errno: EACCES), subject: path, message: "\(what): the sound index or its folder is read-only (\(detail)); make both writable for your user (chmod u+w)")
        case .SQLITE_FULL:
            return StoreError(.fileSystem(errno: ENOSPC), subject: path, message: "\(what): the disk is full (\(detail))")
        default:
            return StoreError(.database, subject: path, message: "\(what): \(error)")
        }
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

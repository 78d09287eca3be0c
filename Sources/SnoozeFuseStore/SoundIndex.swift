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
    /// EBU R 128 integrated loudness (LUFS) and true peak (dBTP) measured at import; nil for a sound
    /// imported before they were measured (or silent, for the loudness).
    public var loudness: Double?
    public var truePeak: Double?

    public init(
        name: String, originalFileName: String, frames: Int64, sampleRate: Int, channels: Int,
        durationSeconds: Double, format: String, sourceFormat: String, sha256: String,
        importedAt: Date, storedFileName: String, loudness: Double? = nil, truePeak: Double? = nil
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
        self.loudness = loudness
        self.truePeak = truePeak
    }
}

/// The index of imported sounds: the `sounds` table of the database (``StoreDatabase``,
/// `library.sqlite`); callers see only values and ``StoreError``.
///
/// The database is in WAL mode: readers never wait for a writer, so looking a sound up by name
/// (``openForReading(file:)``) works while another process imports. The index is a cache of what
/// the sound files say about themselves (each stored file carries its name and metadata; see the
/// sound library): a missing, empty or damaged index can always be rebuilt from the files. (The
/// presets, settings and nap history in the same file cannot; see ``Condition/damaged(reason:movedTo:)``.)
public final class SoundIndex: Sendable {
    public let path: String
    private let database: StoreDatabase

    /// What ``init(file:movingDamagedAside:now:)`` found at the index's path.
    public enum Condition: Sendable, Equatable {
        /// A usable index was there.
        case existing
        /// There was no file; a new, empty index was created.
        case missing
        /// The file was empty (0 bytes); it was made a new, empty index.
        case empty
        /// The file was not a usable database (`reason`); it was renamed to `movedTo` (kept, never
        /// overwritten) and a new, empty one was created in its place. Whatever presets, settings
        /// and nap history it held are in `movedTo`.
        case damaged(reason: String, movedTo: String)
    }

    /// What opening found (always ``Condition/existing`` for a reader).
    public let condition: Condition

    /// How long a reader waits: in WAL mode readers are not blocked by writers, so this covers only
    /// an index still in the previous release's rollback-journal mode, or a checkpoint's recovery.
    static let readerBusyTimeout: TimeInterval = 1

    /// Opens the index at `file` for reading and writing: creates it (mode 0600) if it is missing,
    /// migrates it, and puts it in WAL mode. A file that is not a usable database is moved aside
    /// (renamed `library.sqlite.damaged-<UTC time>`, with its `-wal`/`-shm` files; never
    /// overwritten) and a new one is made, when `movingDamagedAside` (the caller holds the sounds
    /// folder's lock, so no other process is doing the same); otherwise it is a
    /// ``StoreError/Kind/damaged`` error. A database from a newer release is never moved: it is
    /// refused (``StoreError/Kind/newerRelease``).
    public init(file: URL, movingDamagedAside: Bool, now: Date = Date()) throws(StoreError) {
        path = file.path
        var condition = Condition.existing
        var status = stat()
        if lstat(file.path, &status) != 0 {
            condition = .missing
        } else if (status.st_mode & S_IFMT) == S_IFREG && status.st_size == 0 {
            condition = .empty
        }
        do {
            database = try Self.openWriter(file)
        } catch where error.kind == .damaged && movingDamagedAside {
            let movedTo = try Self.moveAside(file, now: now)
            condition = .damaged(reason: error.message, movedTo: movedTo)
            database = try Self.openWriter(file)
        }
        self.condition = condition
    }

    private init(database: StoreDatabase) {
        path = database.path
        self.database = database
        condition = .existing
    }

    /// Opens the index at `file` read-only, for look-ups: never creates, migrates, moves or writes
    /// anything, takes no lock of the sounds folder, and waits for SQLite's locks at most
    /// ``readerBusyTimeout``. Returns nil when there is no index yet (no file, or an empty one).
    ///
    /// - Throws: ``StoreError/Kind/damaged`` (not a usable index), ``StoreError/Kind/newerRelease``,
    ///   ``StoreError/Kind/busy``, ``StoreError/Kind/fileSystem(errno:)`` (cannot be read).
    public static func openForReading(file: URL) throws(StoreError) -> SoundIndex? {
        guard let database = try StoreDatabase.openForReading(file: file, what: "sound index", busyTimeout: readerBusyTimeout,
                                                              label: "snoozefuse.sounds.reader") else { return nil }
        let index = SoundIndex(database: database)
        try index.read("cannot read the sound index") { db in try checkSchema(db, path: file.path) }
        return index
    }

    private static func openWriter(_ file: URL) throws(StoreError) -> StoreDatabase {
        let database = try StoreDatabase.openForWriting(file: file, what: "sound index", checkIntegrity: true, label: "snoozefuse.sounds")
        try database.read("cannot read the sound index", noun: "sound index") { db in try checkSchema(db, path: file.path) }
        return database
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
                                    format, sourceFormat, sha256, importedAt, storedFileName, loudness, truePeak)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    sound.name, sound.originalFileName, sound.frames, sound.sampleRate, sound.channels,
                    sound.durationSeconds, sound.format, sound.sourceFormat, sound.sha256,
                    StoreDatabase.timestamp(sound.importedAt), sound.storedFileName,
                    sound.loudness.flatMap { $0.isFinite ? $0 : nil }, sound.truePeak.flatMap { $0.isFinite ? $0 : nil },
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
        try database.read(what, noun: "sound index", body)
    }

    private func write<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try database.write(what, noun: "sound index", body)
    }

    /// The sound of `row`, read whatever a hand or a damaged file put in it: SQLite keeps any type
    /// in any column, and GRDB's typed reads trap on one they cannot convert (text in `frames`,
    /// 1e300 in `channels`, bytes that are not UTF-8 in `name`). A number a sound cannot have
    /// reads as 0 (its file, which plays, is read again by libsndfile), text as the text it can be.
    private static func sound(_ row: Row) -> StoredSound {
        StoredSound(
            name: text(row, "name"), originalFileName: text(row, "originalFileName"),
            frames: integer(row, "frames", 0 ... Int64.max), sampleRate: Int(integer(row, "sampleRate", 1 ... 10_000_000)),
            channels: Int(integer(row, "channels", 1 ... 1024)), durationSeconds: real(row, "durationSeconds").map { $0 >= 0 ? $0 : 0 } ?? 0,
            format: text(row, "format"), sourceFormat: text(row, "sourceFormat"), sha256: text(row, "sha256"),
            importedAt: StoreDatabase.date(text(row, "importedAt")), storedFileName: text(row, "storedFileName"),
            loudness: Self.finite(real(row, "loudness")), truePeak: Self.finite(real(row, "truePeak")))
    }

    private static func text(_ row: Row, _ column: String) -> String {
        StoreDatabase.text(row[column])
    }

    /// A whole number in `range`, else 0.
    private static func integer(_ row: Row, _ column: String, _ range: ClosedRange<Int64>) -> Int64 {
        let value: Int64? = switch (row[column] as DatabaseValue).storage {
        case .int64(let number): number
        case .double(let number): Int64(exactly: number.rounded(.towardZero))
        case .string, .blob, .null: nil
        }
        return value.flatMap { range.contains($0) ? $0 : nil } ?? 0
    }

    /// A finite number, or nil.
    private static func real(_ row: Row, _ column: String) -> Double? {
        switch (row[column] as DatabaseValue).storage {
        case .double(let number): number.isFinite ? number : nil
        case .int64(let number): Double(number)
        case .string, .blob, .null: nil
        }
    }

    /// A number read from the index, when it is one a sound can have (not NaN, not infinite, not
    /// absurd: a file edited by hand).
    private static func finite(_ value: Double?) -> Double? {
        value.flatMap { $0.isFinite && abs($0) < 1_000 ? $0 : nil }
    }
}

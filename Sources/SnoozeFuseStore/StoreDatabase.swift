public import Foundation
import GRDB
import Glibc
import Synchronization

/// snoozefuse's one SQLite database, `library.sqlite` in the data folder (SPEC §4): the index of
/// imported sounds, the user's presets and settings, and the history of naps. Callers see values
/// and ``StoreError`` only; GRDB stays inside this module.
///
/// - WAL mode (set once, when the database is created or first opened for writing): readers never
///   wait for a writer, and a writer waits for another writer at most ``writerBusyTimeout``.
/// - Versioned migrations (``migrations``), applied in one `BEGIN IMMEDIATE` transaction, so that
///   several processes opening a new or older database at once migrate it exactly once: the
///   others wait for the write lock and then find nothing left to do.
/// - A database from a newer release (it lists migrations this release does not know, or its
///   `PRAGMA user_version`, set to the number of migrations when they run, is higher) is refused
///   (``StoreError/Kind/newerRelease``) before anything is written: not even its journal mode is
///   changed, so it stays byte for byte what it was.
/// - A file that is not SQLite, or is shorter than its own header says (truncated), is
///   ``StoreError/Kind/damaged`` before SQLite is asked to open it. Nothing here ever overwrites,
///   moves or deletes the file; what to do with a damaged one is the caller's decision (the sound
///   library moves it aside; the other commands report it).
/// - The file is created with mode 0600 in a folder created with mode 0700; an existing file or
///   folder keeps its mode (see ``PrivateFiles``).
public final class StoreDatabase: Sendable {
    public let path: String
    let queue: DatabaseQueue
    /// The migrations the file had when it was opened (all of them once a writer opened it).
    let applied: Set<String>
    private let identity: FileIdentity?

    /// How long a writer waits for another process's write lock (an import, a nap's record).
    public static let writerBusyTimeout: TimeInterval = 5
    /// How long a reader waits. In WAL mode readers are not blocked by writers, so this covers a
    /// database still in the previous release's rollback-journal mode, or WAL recovery.
    public static let readerBusyTimeout: TimeInterval = 5

    private init(path: String, queue: DatabaseQueue, applied: Set<String>) {
        self.path = path
        self.queue = queue
        self.applied = applied
        identity = FileIdentity(path)
        if let identity { Self.openFiles.withLock { $0[identity, default: 0] += 1 } }
    }

    deinit {
        // Closed before it stops counting as open (see ``openFiles``).
        try? queue.close()
        if let identity { Self.openFiles.withLock { $0[identity, default: 1] -= 1 } }
        // Kept, closed, for the life of the process: disposing of GRDB's dispatch queue starts
        // libdispatch's worker pool, whose monitor then wakes the process every second; a nap
        // that read its settings must not wake until its alarm (SPEC §8).
        Self.closedQueues.withLock { $0.append(queue) }
    }

    /// The queues of closed databases (see `deinit`): a few hundred bytes each, a few a process.
    /// (Store sits beside SnoozeFuseSystem, not above it: its two locks are Synchronization's own,
    /// which ThreadSanitizer does not see into; `make test-tsan` counts their reports apart.)
    private static let closedQueues = Mutex<[DatabaseQueue]>([])

    /// The database files this process has open, and how many times. Closing any descriptor of a
    /// file drops every POSIX lock the process holds on it, SQLite's included: so the file is
    /// opened outside SQLite (to create it or read its header) only while no connection of this
    /// process has it open, and those checks were made when the first one opened it.
    private static let openFiles = Mutex<[FileIdentity: Int]>([:])

    private static func isOpenInThisProcess(_ path: String) -> Bool {
        guard let identity = FileIdentity(path) else { return false }
        return openFiles.withLock { ($0[identity] ?? 0) > 0 }
    }

    /// Creates the file (0600) and checks its header, unless this process has it open already.
    private static func prepare(_ file: URL, what: String, creating: Bool) throws(StoreError) {
        guard !isOpenInThisProcess(file.path) else { return }
        if creating { try PrivateFiles.ensurePrivateFile(file, what: what) }
        try StoreFileHeader.check(file.path, what: what)
    }

    // MARK: Opening

    /// Opens the database at `file` for reading and writing: creates its folder (0700) and the file
    /// (0600) when missing, refuses a damaged file or one from a newer release, puts it in WAL mode
    /// and migrates it. `what` names the file in messages ("sound index", "database"); with
    /// `checkIntegrity`, SQLite's `quick_check` runs too (a damaged file is found now, not later).
    public static func openForWriting(file: URL, what: String = "database", checkIntegrity: Bool = false,
                                      label: String = "snoozefuse.store") throws(StoreError) -> StoreDatabase {
        try SQLiteLibrary.load()
        try PrivateFiles.ensureFolder(file.deletingLastPathComponent())
        try prepare(file, what: what, creating: true)
        let isNew = StoreFileHeader.isEmpty(file.path)
        let queue: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(writerBusyTimeout)
            configuration.label = label
            queue = try DatabaseQueue(path: file.path, configuration: configuration)
        } catch {
            throw failure(error, path: file.path, what: what, "cannot open the \(what)")
        }
        let database = StoreDatabase(path: file.path, queue: queue, applied: Set(migrationIdentifiers))
        // Nothing is written before the file is known to be this release's (or an older one's) and
        // sound: a newer or damaged file is left exactly as it is.
        let recorded = try database.read("cannot read the \(what)", noun: what) { db in
            try refuseNewer(db, path: file.path, what: what)
        }
        if isNew { database.useWriteAheadLog() }
        let pending = !recorded.isSuperset(of: migrationIdentifiers)
        if pending || checkIntegrity {
            try database.read("cannot read the \(what)", noun: what) { db in
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                if check != ["ok"] {
                    throw StoreError(.damaged, subject: file.path, message: "SQLite's integrity check failed: \(check.prefix(3).joined(separator: "; "))")
                }
            }
        }
        if pending { try database.migrate(what: what) }
        if !isNew { database.useWriteAheadLog() }
        return database
    }

    /// WAL (persistent, so this changes the file once): readers never wait for a writer. While
    /// another process has the file open in rollback mode the switch fails with SQLITE_BUSY; the
    /// next open tries again.
    private func useWriteAheadLog() {
        guard (try? queue.read({ db in try String.fetchOne(db, sql: "PRAGMA journal_mode") })) != "wal" else { return }
        _ = try? queue.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
    }

    /// Opens the database at `file` read-only: never creates, migrates or writes anything. Returns
    /// nil when there is no database yet (no file, or an empty one). A database an older release
    /// wrote opens as it is (the tables it lacks read as empty); one from a newer release is
    /// refused.
    ///
    /// - Throws: ``StoreError/Kind/damaged``, ``StoreError/Kind/newerRelease``,
    ///   ``StoreError/Kind/busy``, ``StoreError/Kind/fileSystem(errno:)`` (cannot be read).
    public static func openForReading(file: URL, what: String = "database", busyTimeout: TimeInterval = readerBusyTimeout,
                                      label: String = "snoozefuse.store.reader") throws(StoreError) -> StoreDatabase? {
        try openForReading(path: file.path, what: what, busyTimeout: busyTimeout, label: label)
    }

    /// The same, for the file at `path`: a URL is made only when the file exists (a short command
    /// that finds no database, such as a first `presets list`, makes none; issue 23).
    public static func openForReading(path: String, what: String = "database", busyTimeout: TimeInterval = readerBusyTimeout,
                                      label: String = "snoozefuse.store.reader") throws(StoreError) -> StoreDatabase? {
        var status = stat()
        if stat(path, &status) != 0 {
            if errno == ENOENT { return nil }
            throw PrivateFiles.fileError(errno, path, "cannot read the \(what)")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(.damaged, subject: path, message: "the \(what) is not a regular file")
        }
        if status.st_size == 0 { return nil }
        try SQLiteLibrary.load()
        try prepare(URL(fileURLWithPath: path), what: what, creating: false)
        func open(sharedMemory: Bool) throws -> StoreDatabase {
            var configuration = Configuration()
            // Without shared memory, SQLite keeps the WAL's index in this process's memory, which
            // it does only for a connection opened for writing (a read-only one still asks for
            // the `-shm` file). Its statements are read-only (query_only); at its close SQLite may
            // checkpoint what the WAL holds, which on a full disk fails and leaves the WAL as it is.
            configuration.readonly = sharedMemory
            configuration.busyMode = .timeout(busyTimeout)
            configuration.label = label
            if !sharedMemory {
                // No `-shm` file: under an exclusive lock, held for as long as this short command reads.
                configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE; PRAGMA query_only = ON") }
            }
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            let applied = try queue.read { db in try refuseNewer(db, path: path, what: what) }
            return StoreDatabase(path: path, queue: queue, applied: applied)
        }
        do {
            return try open(sharedMemory: true)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where Self.wantsRoom(error) && DiskRoom.isFull(folderOf: path) {
            // A full disk: reading a WAL database needs its shared-memory file, which cannot be
            // made or grown now. Read without it; a read never needs room.
            do { return try open(sharedMemory: false) } catch { throw failure(error, path: path, what: what, "cannot read the \(what)") }
        } catch {
            throw failure(error, path: path, what: what, "cannot read the \(what)")
        }
    }

    /// Whether `error` is what SQLite says when a file of the database cannot be made or grown
    /// (an I/O error on its `-shm` or `-wal` file, a full disk, a file it cannot open).
    static func wantsRoom(_ error: DatabaseError) -> Bool {
        [.SQLITE_IOERR, .SQLITE_FULL, .SQLITE_CANTOPEN].contains(error.resultCode)
    }

    // MARK: Migrations

    /// One change of the schema: its identifier (recorded in `grdb_migrations`, the table GRDB's
    /// migrator used for the first one, so databases of earlier releases keep their history) and
    /// its SQL.
    struct Migration: Sendable {
        var identifier: String
        var sql: String
    }

    /// Every schema change this release knows, in order. Never edit one that shipped: add another.
    static let migrations: [Migration] = [
        Migration(identifier: "v1: sounds", sql: """
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
            """),
        Migration(identifier: "v2: presets", sql: """
            CREATE TABLE presets (
                name TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
                savedAt TEXT NOT NULL
            );
            CREATE TABLE presetValues (
                preset TEXT NOT NULL COLLATE NOCASE REFERENCES presets(name) ON DELETE CASCADE ON UPDATE CASCADE,
                key TEXT NOT NULL,
                position INTEGER NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (preset, key, position)
            )
            """),
        Migration(identifier: "v3: settings", sql: """
            CREATE TABLE settings (
                key TEXT NOT NULL,
                position INTEGER NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (key, position)
            )
            """),
        Migration(identifier: "v4: naps", sql: """
            CREATE TABLE naps (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                napId TEXT NOT NULL UNIQUE,
                startedAt TEXT NOT NULL,
                endedAt TEXT NOT NULL,
                fallAsleepSeconds REAL,
                napSeconds REAL,
                latenessMs REAL,
                outcome TEXT NOT NULL,
                alarmReason TEXT,
                snoozes INTEGER NOT NULL DEFAULT 0,
                sound TEXT,
                output TEXT,
                rungBy TEXT,
                recordedBy TEXT NOT NULL,
                preset TEXT
            );
            CREATE INDEX napsByStart ON naps (startedAt, id)
            """),
        Migration(identifier: "v5: naps taken over", sql: """
            ALTER TABLE naps ADD COLUMN takenOverBy TEXT
            """),
        Migration(identifier: "v6: naps' hold", sql: """
            ALTER TABLE naps ADD COLUMN hold TEXT
            """),
        Migration(identifier: "v7: sounds' loudness", sql: """
            ALTER TABLE sounds ADD COLUMN loudness REAL;
            ALTER TABLE sounds ADD COLUMN truePeak REAL
            """),
    ]

    /// The identifiers of this release's migrations.
    public static var migrationIdentifiers: [String] { migrations.map(\.identifier) }

    /// The migrations recorded in the file; throws ``StoreError/Kind/newerRelease`` when one of them
    /// is not this release's.
    private static func refuseNewer(_ db: Database, path: String, what: String) throws -> Set<String> {
        // The schema version this release writes is its number of migrations; 0 is a file of a
        // release before it was written (or a new one).
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version > migrations.count {
            throw StoreError(.newerRelease, subject: path,
                             message: "the \(what) was written by a newer release of snoozefuse (schema version \(version); this release knows up to \(migrations.count)); this release refuses it and leaves it exactly as it is. Use the newer release, or move the file aside to start a new one")
        }
        guard try db.tableExists("grdb_migrations") else { return [] }
        let applied = try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations")
        let unknown = applied.subtracting(migrationIdentifiers).sorted()
        if !unknown.isEmpty {
            throw StoreError(.newerRelease, subject: path,
                             message: "the \(what) was written by a newer release of snoozefuse (it has the schema changes \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")), which this release does not know); this release refuses it and leaves it exactly as it is. Use the newer release, or move the file aside to start a new one")
        }
        return applied
    }

    /// Applies the migrations the file lacks, all in one immediate transaction (the write lock is
    /// taken first, so a second process waits and then finds them applied).
    private func migrate(what: String) throws(StoreError) {
        let path = path
        try write("cannot bring the \(what) up to date", noun: what) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = try Self.refuseNewer(db, path: path, what: what)
            for migration in Self.migrations where !applied.contains(migration.identifier) {
                try db.execute(sql: migration.sql)
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
            }
            try db.execute(sql: "PRAGMA user_version = \(Self.migrations.count)")
        }
    }

    /// Whether the file has the tables of migration `identifier` (a reader of an older file may not).
    func has(_ identifier: String) -> Bool { applied.contains(identifier) }

    // MARK: Plumbing

    func read<T>(_ doing: String, noun: String = "database", _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try queue.read(body) } catch { throw Self.failure(error, path: path, what: noun, doing) }
    }

    func write<T>(_ doing: String, noun: String = "database", _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try queue.write(body) } catch { throw Self.failure(error, path: path, what: noun, doing) }
    }

    /// A GRDB or SQLite error as a ``StoreError`` that names its real cause; `noun` names the file
    /// ("sound index", "database") and `doing` what was being done.
    static func failure(_ error: any Error, path: String, what noun: String, _ doing: String) -> StoreError {
        if let error = error as? StoreError { return StoreError(error.kind, subject: path, message: error.message) }
        guard let error = error as? DatabaseError else {
            return StoreError(.database, subject: path, message: "\(doing): \(error)")
        }
        let detail = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return StoreError(.damaged, subject: path, message: "it is not an SQLite database (\(detail))")
        case .SQLITE_CORRUPT:
            return StoreError(.damaged, subject: path, message: "the SQLite database is corrupt (\(detail))")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.busy, subject: path, message: "\(doing): another process holds the \(noun)'s lock (\(detail)); try again when it is done")
        case .SQLITE_READONLY:
            return StoreError(.fileSystem(errno: EACCES), subject: path, message: "\(doing): the \(noun) or its folder is read-only (\(detail)); make both writable for your user (chmod u+w)")
        case .SQLITE_CANTOPEN:
            // A WAL database is read through its `-shm` file, which SQLite creates beside it.
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            do { try PrivateFiles.checkWritableFolder(folder) } catch { return error }
            return StoreError(.fileSystem(errno: EIO), subject: path, message: "\(doing): SQLite cannot open it (\(detail))")
        case .SQLITE_FULL:
            return full(path: path, what: noun, doing, detail)
        case .SQLITE_IOERR where DiskRoom.isFull(folderOf: path):
            // SQLite says "disk I/O error" when it cannot grow the WAL's shared-memory file.
            return full(path: path, what: noun, doing, detail)
        default:
            return StoreError(.database, subject: path, message: "\(doing): \(error)")
        }
    }

    /// The disk that holds the file at `path` is full: said as such, with the folder and the fix.
    private static func full(path: String, what noun: String, _ doing: String, _ detail: String) -> StoreError {
        let folder = PrivateFiles.folder(of: path)
        return StoreError(.fileSystem(errno: ENOSPC), subject: path,
                          message: "\(doing): the disk that holds \(folder) is full (ENOSPC: less than 64 KiB left, and SQLite could not grow the \(noun)'s files; \(detail)); free some space there (`df -h \(folder)` shows how much is left) and run the command again: what was saved before is kept")
    }

    /// Times are stored as ISO 8601 UTC text with milliseconds, so `sqlite3` shows them readably
    /// and they sort as text in time order.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The text of a value whatever SQLite holds (it keeps any type in any column, and GRDB's
    /// `String` read traps on bytes that are not UTF-8): bytes decoded with U+FFFD for what is
    /// not UTF-8, numbers written out, NULL as empty.
    static func text(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .string(let text): text
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .int64(let number): String(number)
        case .double(let number): "\(number)"
        case .null: ""
        }
    }

    static func date(_ text: String) -> Date {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? .distantPast
    }
}

/// The first 100 bytes of an SQLite file say what it is and how long it must be: a file that is
/// not SQLite, or shorter than its header says, is reported before SQLite is asked to open it,
/// with a message that says which.
enum StoreFileHeader {
    static let magic = Array("SQLite format 3\u{0}".utf8)

    /// Throws ``StoreError/Kind/damaged`` for a file that is not SQLite or is truncated; an empty
    /// file (a new database) passes.
    static func check(_ path: String, what: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw PrivateFiles.fileError(errno, path, "cannot read the \(what)") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw PrivateFiles.fileError(errno, path, "cannot read the \(what)") }
        let size = Int64(status.st_size)
        if size == 0 { return }
        var header = [UInt8](repeating: 0, count: 100)
        let count = pread(fd, &header, 100, 0)
        guard count >= 0 else { throw PrivateFiles.fileError(errno, path, "cannot read the \(what)") }
        guard count >= magic.count, Array(header[0 ..< magic.count]) == magic else {
            throw StoreError(.damaged, subject: path, message: "it is not an SQLite database (its \(size) bytes do not start with SQLite's header)")
        }
        guard count == 100 else {
            throw StoreError(.damaged, subject: path, message: "it is truncated: \(size) bytes, shorter than SQLite's 100-byte header")
        }
        // A journal or a write-ahead log beside it may still complete the file: SQLite decides then.
        if hasContents(path + "-wal") || hasContents(path + "-journal") { return }
        func number(_ offset: Int) -> Int64 { header[offset ..< offset + 4].reduce(0) { $0 << 8 | Int64($1) } }
        let rawPageSize = Int64(header[16]) << 8 | Int64(header[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        // The page count in the header is valid when the change counter matches "version valid for".
        let pages = number(28)
        guard pages > 0, number(24) == number(92) else { return }
        if size < pages * pageSize {
            throw StoreError(.damaged, subject: path, message: "it is truncated: \(size) bytes of the \(pages * pageSize) its header declares (\(pages) pages of \(pageSize) bytes)")
        }
    }

    /// Whether the file at `path` is empty (a database not written yet).
    static func isEmpty(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size == 0
    }

    private static func hasContents(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size > 0
    }
}

/// A file's device and inode: the same file whatever path names it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

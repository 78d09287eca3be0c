import Foundation
import Glibc
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// A data folder of one test, and `sqlite3` to look inside its database.
struct StoreFolder {
    let folder: TemporaryFolder
    /// `…/data/snoozefuse`, not created yet.
    var data: URL { folder.url.appendingPathComponent("data/snoozefuse", isDirectory: true) }
    var database: URL { data.appendingPathComponent("library.sqlite") }

    init() throws { folder = try TemporaryFolder(prefix: "snoozefuse-store") }

    func sql(_ query: String) throws -> String {
        try runTool("sqlite3", [database.path, query]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The schema changes the file records, in order.
    func migrations() throws -> [String] {
        try sql("SELECT identifier FROM grdb_migrations ORDER BY rowid").split(separator: "\n").map(String.init)
    }

    func bytes() throws -> Data { try Data(contentsOf: database) }
}

/// The schema and a row exactly as the release before this one wrote them (GRDB's migrator, the
/// sound index only, WAL).
let previousReleaseSchema = """
    PRAGMA journal_mode = WAL;
    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
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
    );
    INSERT INTO grdb_migrations VALUES ('v1: sounds');
    INSERT INTO sounds (name, originalFileName, frames, sampleRate, channels, durationSeconds, format, sourceFormat,
                        sha256, importedAt, storedFileName)
    VALUES ('rooster', 'rooster.wav', 44100, 44100, 1, 1.0, 'CAF, Signed 16 bit PCM', 'WAV (Microsoft), Signed 16 bit PCM',
            'abc123', '2026-01-02T03:04:05.678Z', 'abc123.caf');
    """

func permissions(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
}

/// Records `count` naps through a connection that is closed again before the test goes on.
func recordNaps(_ count: Int, in store: StoreFolder) throws {
    let database = try StoreDatabase.openForWriting(file: store.database)
    for number in 0 ..< count {
        try database.recordNap(sampleNap("nap-\(number)", started: "2026-01-01T10:\(String(format: "%02d", number % 60)):00.000Z"))
    }
}

func sampleNap(_ id: String, started: String, outcome: String = "dismissed") -> NapHistoryEntry {
    NapHistoryEntry(napID: id, startedAt: started, endedAt: started, fallAsleepSeconds: 42.5, napSeconds: 1200,
                    latenessMs: 0.25, outcome: outcome, alarmReason: "nap", snoozes: 1, sound: "beep",
                    output: "ALSA default", rungBy: "nap", recordedBy: "nap", preset: "basic")
}

@Suite("The one database on disk: migrations, newer releases, damage (SQLite files checked with sqlite3)")
struct StoreDatabaseTests {
    @Test func aNewDatabaseIsCreatedPrivateInWALModeWithEveryMigration() throws {
        let store = try StoreFolder()
        _ = try StoreDatabase.openForWriting(file: store.database)
        #expect(try store.migrations() == StoreDatabase.migrationIdentifiers)
        #expect(try store.sql("PRAGMA journal_mode") == "wal")
        #expect(try permissions(store.database.path) == 0o600)
        #expect(try permissions(store.data.path) == 0o700)
        #expect(try permissions(store.data.deletingLastPathComponent().path) == 0o700)
        #expect(try store.sql("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('sounds', 'presets', 'presetValues', 'settings', 'naps') ORDER BY name")
            == "naps\npresetValues\npresets\nsettings\nsounds")
    }

    @Test func anEmptyFileIsMigratedLikeANewOne() throws {
        let store = try StoreFolder()
        try FileManager.default.createDirectory(at: store.data, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: store.database.path, contents: Data(), attributes: [.posixPermissions: 0o600]))
        #expect(try StoreDatabase.openForReading(file: store.database) == nil, "an empty file is no database yet to a reader")
        _ = try StoreDatabase.openForWriting(file: store.database)
        #expect(try store.migrations() == StoreDatabase.migrationIdentifiers)
        #expect(try store.sql("PRAGMA journal_mode") == "wal")
    }

    /// A history an older release wrote (the naps table of v4: no takenOverBy, no hold column; the
    /// sounds table of v1, which v7 gives its loudness) reads, before any migration, with those
    /// columns empty; migrated, it keeps its naps.
    @Test func aHistoryWithoutTheLaterColumnsReadsBeforeItIsMigrated() throws {
        let store = try StoreFolder()
        try FileManager.default.createDirectory(at: store.data, withIntermediateDirectories: true)
        try runTool("sqlite3", [store.database.path, """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1: sounds'), ('v2: presets'), ('v3: settings'), ('v4: naps');
            CREATE TABLE sounds (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE COLLATE NOCASE,
                originalFileName TEXT NOT NULL, frames INTEGER NOT NULL, sampleRate INTEGER NOT NULL, channels INTEGER NOT NULL,
                durationSeconds REAL NOT NULL, format TEXT NOT NULL, sourceFormat TEXT NOT NULL, sha256 TEXT NOT NULL UNIQUE,
                importedAt TEXT NOT NULL, storedFileName TEXT NOT NULL UNIQUE);
            CREATE TABLE naps (id INTEGER PRIMARY KEY AUTOINCREMENT, napId TEXT NOT NULL UNIQUE, startedAt TEXT NOT NULL,
                endedAt TEXT NOT NULL, fallAsleepSeconds REAL, napSeconds REAL, latenessMs REAL, outcome TEXT NOT NULL,
                alarmReason TEXT, snoozes INTEGER NOT NULL DEFAULT 0, sound TEXT, output TEXT, rungBy TEXT,
                recordedBy TEXT NOT NULL, preset TEXT);
            INSERT INTO naps (napId, startedAt, endedAt, outcome, recordedBy) VALUES ('old', '2026-01-01T10:00:00.000Z', '2026-01-01T10:30:00.000Z', 'dismissed', 'nap');
            PRAGMA user_version = 4;
            """])
        let reader = try #require(try StoreDatabase.openForReading(file: store.database))
        let naps = try reader.naps()
        #expect(naps.map(\.napID) == ["old"] && naps.first?.takenOverBy == nil && naps.first?.hold == nil)
        #expect(try store.migrations().count == 4, "a reader changes nothing")
        let database = try StoreDatabase.openForWriting(file: store.database)
        #expect(try database.naps().map(\.napID) == ["old"])
        #expect(try store.migrations() == StoreDatabase.migrationIdentifiers)
    }

    /// The previous release's database (the sound index alone) gains presets, settings and the
    /// history, and keeps its sounds; a reader of it before the migration sees empty tables.
    @Test func thePreviousReleasesDatabaseIsMigratedAndKeepsItsSounds() throws {
        let store = try StoreFolder()
        try FileManager.default.createDirectory(at: store.data, withIntermediateDirectories: true)
        try runTool("sqlite3", [store.database.path, previousReleaseSchema])
        let reader = try #require(try StoreDatabase.openForReading(file: store.database))
        #expect(try reader.presets().isEmpty)
        #expect(try reader.settings().isEmpty)
        #expect(try reader.naps().isEmpty)
        #expect(try store.migrations() == ["v1: sounds"], "a reader changes nothing")

        let database = try StoreDatabase.openForWriting(file: store.database)
        #expect(try store.migrations() == StoreDatabase.migrationIdentifiers)
        #expect(try store.sql("SELECT name || '|' || storedFileName FROM sounds") == "rooster|abc123.caf")
        try database.setSetting("volume", to: ["60"])
        #expect(try database.settings() == ["volume": ["60"]])
        let index = try SoundIndex(file: store.database, movingDamagedAside: false)
        #expect(try index.all().map(\.name) == ["rooster"])
        #expect(index.condition == .existing)
    }

    /// A database that records a schema change this release does not know is refused by every way
    /// in (reader, writer, the sound index, with or without moving damaged files aside), and left
    /// byte for byte as it was.
    @Test func aDatabaseFromANewerReleaseIsRefusedAndLeftUnchanged() throws {
        let store = try StoreFolder()
        _ = try StoreDatabase.openForWriting(file: store.database).recordNap(sampleNap("one", started: "2026-01-01T10:00:00.000Z"))
        try runTool("sqlite3", [store.database.path, "INSERT INTO grdb_migrations VALUES ('v9: dreams'); PRAGMA wal_checkpoint(TRUNCATE);"])
        let before = try store.bytes()
        let openings: [(String, () throws -> Void)] = [
            ("writer", { _ = try StoreDatabase.openForWriting(file: store.database, checkIntegrity: true) }),
            ("reader", { _ = try StoreDatabase.openForReading(file: store.database) }),
            ("sound index", { _ = try SoundIndex(file: store.database, movingDamagedAside: true) }),
            ("sound look-up", { _ = try SoundIndex.openForReading(file: store.database) }),
        ]
        for (way, open) in openings {
            let error = #expect(throws: StoreError.self, "\(way)") { try open() }
            #expect(error?.kind == .newerRelease, "\(way): \(String(describing: error))")
            #expect(error?.subject == store.database.path)
            #expect(error?.message.contains("written by a newer release of snoozefuse") == true)
            #expect(error?.message.contains("\"v9: dreams\"") == true)
            #expect(try store.bytes() == before, "\(way) left the file as it was")
        }
        let moved = try FileManager.default.contentsOfDirectory(atPath: store.data.path).filter { $0.contains("damaged") }
        #expect(moved.isEmpty, "a newer database is not damaged: never moved aside")
    }

    /// `PRAGMA user_version` is this release's schema version (one per migration); a file whose
    /// version is beyond it came from a newer release, even when that release recorded its changes
    /// nowhere else, and is refused and left as it is like any newer file.
    @Test func aUserVersionBeyondThisReleaseIsRefusedAndLeftUnchanged() throws {
        let store = try StoreFolder()
        _ = try StoreDatabase.openForWriting(file: store.database).recordNap(sampleNap("one", started: "2026-01-01T10:00:00.000Z"))
        #expect(try store.sql("PRAGMA user_version") == "\(StoreDatabase.migrationIdentifiers.count)")
        try runTool("sqlite3", [store.database.path, "PRAGMA user_version = 99; PRAGMA wal_checkpoint(TRUNCATE);"])
        let before = try store.bytes()
        for (way, open) in [("writer", { _ = try StoreDatabase.openForWriting(file: store.database) }),
                            ("reader", { _ = try StoreDatabase.openForReading(file: store.database) })] as [(String, () throws -> Void)] {
            let error = #expect(throws: StoreError.self, "\(way)") { try open() }
            #expect(error?.kind == .newerRelease, "\(way): \(String(describing: error))")
            #expect(error?.message.contains("schema version 99") == true, "\(String(describing: error))")
            #expect(try store.bytes() == before, "\(way) left the file as it was")
        }
    }

    /// A truncated database and a file of garbage: damaged, named, and not changed by any way in.
    @Test("a damaged file is reported with its path and left as it is", arguments: ["truncated", "garbage", "short header"])
    func aDamagedFileIsReportedAndLeftAsItIs(damage: String) throws {
        let store = try StoreFolder()
        try recordNaps(400, in: store)
        try runTool("sqlite3", [store.database.path, "PRAGMA wal_checkpoint(TRUNCATE);"])
        let whole = try store.bytes()
        let damaged: Data = switch damage {
        case "truncated": whole.prefix(whole.count / 2)
        case "garbage": Data((0 ..< 8192).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        default: whole.prefix(60)
        }
        try damaged.write(to: store.database)
        let expected = switch damage {
        case "truncated": "it is truncated: \(whole.count / 2) bytes of the \(whole.count) its header declares"
        case "garbage": "it is not an SQLite database"
        default: "it is truncated: 60 bytes, shorter than SQLite's 100-byte header"
        }
        let openings: [(String, () throws -> Void)] = [
            ("writer", { _ = try StoreDatabase.openForWriting(file: store.database) }),
            ("reader", { _ = try StoreDatabase.openForReading(file: store.database) }),
            ("sound index", { _ = try SoundIndex(file: store.database, movingDamagedAside: false) }),
        ]
        for (way, open) in openings {
            let error = #expect(throws: StoreError.self, "\(way)") { try open() }
            #expect(error?.kind == .damaged, "\(way): \(String(describing: error))")
            #expect(error?.subject == store.database.path)
            #expect(error?.message.contains(expected) == true, "\(way): \(error?.message ?? "")")
            #expect(try store.bytes() == damaged, "\(way) did not touch the damaged file")
        }
    }

    /// Damage SQLite finds itself (a page of the naps table overwritten, the header intact): the
    /// writer's integrity check refuses the file before writing anything.
    @Test func corruptPagesAreFoundBeforeAnythingIsWritten() throws {
        let store = try StoreFolder()
        try recordNaps(400, in: store)
        try runTool("sqlite3", [store.database.path, "PRAGMA wal_checkpoint(TRUNCATE);"])
        var bytes = try store.bytes()
        let pageSize = Int(try store.sql("PRAGMA page_size")) ?? 4096
        let page = bytes.count / pageSize - 2
        bytes.replaceSubrange(page * pageSize ..< page * pageSize + 512, with: Data(repeating: 0xEE, count: 512))
        try bytes.write(to: store.database)

        let error = #expect(throws: StoreError.self) { _ = try StoreDatabase.openForWriting(file: store.database, checkIntegrity: true) }
        #expect(error?.kind == .damaged)
        #expect(try store.bytes() == bytes)
    }

    @Test func presetsSettingsAndNapsRoundTripAndANapIsRecordedOnce() throws {
        let store = try StoreFolder()
        let database = try StoreDatabase.openForWriting(file: store.database)
        let saved = Date(timeIntervalSince1970: 1_800_000_000.5)
        try database.savePreset(StoredPreset(name: "Power Nap", values: ["nap": ["15m"], "emitter": ["led", "terminal:bell=1"]], savedAt: saved))
        try database.savePreset(StoredPreset(name: "power nap", values: ["nap": ["12m"]], savedAt: saved))
        #expect(try database.presets().map(\.name) == ["power nap"], "the same name without case replaces it")
        #expect(try database.preset(named: "POWER NAP")?.values == ["nap": ["12m"]])
        try database.savePreset(StoredPreset(name: "long", values: ["emitter": ["b", "a"]], savedAt: saved))
        #expect(try database.preset(named: "long")?.values["emitter"] == ["b", "a"], "values keep their order")
        #expect(try database.removePreset(named: "Long").name == "long")
        #expect(try store.sql("SELECT count(*) FROM presetValues WHERE preset = 'long'") == "0")
        let missing = #expect(throws: StoreError.self) { try database.removePreset(named: "long") }
        #expect(missing?.kind == .notFound)

        try database.setSetting("emitter", to: ["a", "b"])
        try database.setSetting("volume", to: ["70"])
        try database.setSetting("volume", to: ["60"])
        #expect(try database.settings() == ["emitter": ["a", "b"], "volume": ["60"]])
        #expect(try database.unsetSetting("volume"))
        #expect(try !database.unsetSetting("volume"))

        #expect(try database.recordNap(sampleNap("b", started: "2026-01-02T10:00:00.000Z")))
        #expect(try database.recordNap(sampleNap("a", started: "2026-01-01T10:00:00.000Z")))
        #expect(try !database.recordNap(sampleNap("a", started: "2026-01-01T10:00:00.000Z", outcome: "interrupted")))
        #expect(try database.naps().map(\.napID) == ["a", "b"])
        #expect(try database.naps().first == sampleNap("a", started: "2026-01-01T10:00:00.000Z"))
        #expect(try database.naps(since: "2026-01-02T00:00:00.000Z").map(\.napID) == ["b"])
        #expect(try store.sql("SELECT outcome FROM naps WHERE napId = 'a'") == "dismissed")
    }
}

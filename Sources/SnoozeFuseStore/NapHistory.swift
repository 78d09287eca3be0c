import GRDB

/// One nap as the history records it (a row of the `naps` table). Plain text and numbers: the
/// runtime decides what goes in. Times are ISO 8601 UTC with milliseconds (they sort as text).
/// In JSON (`history --json`) its identity is `id` and its times `started` and `ended`.
public struct NapHistoryEntry: Sendable, Hashable, Codable {
    /// The nap's own identity (kept in its live state): a nap is recorded once, whoever records it.
    public var napID: String
    public var startedAt: String
    public var endedAt: String
    /// From the first hold to the final release; nil without a hold (`--no-hold`) or before one.
    public var fallAsleepSeconds: Double?
    /// From the start of the nap timer to the first alarm (or the end, when it never rang).
    public var napSeconds: Double?
    /// The first alarm's lateness: from its deadline to its first signal written.
    public var latenessMs: Double?
    /// `dismissed`, `ring_limit`, `cancelled`, `interrupted` or `missed`.
    public var outcome: String
    /// Why the alarm rang first: `nap` or `max` (the failsafe); nil when it never rang.
    public var alarmReason: String?
    public var snoozes: Int
    /// The alarm sound chosen (a name, a file or a source plugin).
    public var sound: String?
    /// The output the alarm first sounded on (`ALSA default`, `terminal bell` …).
    public var output: String?
    /// Who sounded the alarm first: `nap`, `guardian` or `resume`; nil when it never rang.
    public var rungBy: String?
    /// Who took the nap over when its process died or after a reboot (`guardian`, `resume`, or
    /// both as `guardian, resume`); nil when the nap held it to its end.
    public var takenOverBy: String?
    /// Which command wrote this row (`nap`, `guardian`, `resume`, `stop`).
    public var recordedBy: String
    public var preset: String?
    /// What held the nap before its release: `key`, `desktop` or `none`; nil for naps recorded
    /// before it was kept.
    public var hold: String?

    enum CodingKeys: String, CodingKey {
        case napID = "id", startedAt = "started", endedAt = "ended"
        case fallAsleepSeconds, napSeconds, latenessMs, outcome, alarmReason, snoozes, sound, output, rungBy, takenOverBy, recordedBy, preset, hold
    }

    public init(napID: String, startedAt: String, endedAt: String, fallAsleepSeconds: Double? = nil,
                napSeconds: Double? = nil, latenessMs: Double? = nil, outcome: String, alarmReason: String? = nil,
                snoozes: Int = 0, sound: String? = nil, output: String? = nil, rungBy: String? = nil,
                takenOverBy: String? = nil, recordedBy: String, preset: String? = nil, hold: String? = nil) {
        self.napID = napID
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.fallAsleepSeconds = fallAsleepSeconds
        self.napSeconds = napSeconds
        self.latenessMs = latenessMs
        self.outcome = outcome
        self.alarmReason = alarmReason
        self.snoozes = snoozes
        self.sound = sound
        self.output = output
        self.rungBy = rungBy
        self.takenOverBy = takenOverBy
        self.recordedBy = recordedBy
        self.preset = preset
        self.hold = hold
    }
}

extension StoreDatabase {
    static let napsMigration = "v4: naps"
    static let holdMigration = "v6: naps' hold"

    /// The columns of `naps` in the order ``naps(since:)`` reads them (also the CSV's columns).
    public static let napColumns = [
        "napId", "startedAt", "endedAt", "fallAsleepSeconds", "napSeconds", "latenessMs", "outcome",
        "alarmReason", "snoozes", "sound", "output", "rungBy", "recordedBy", "preset", "takenOverBy", "hold",
    ]

    /// The query ``naps(since:)`` runs, for comparing with `sqlite3` (the benchmark).
    public static let napsQuery = "SELECT \(napColumns.joined(separator: ", ")) FROM naps WHERE startedAt >= ? ORDER BY startedAt, id"

    /// The columns later migrations added, and which: a file an older release wrote and this one
    /// opens read-only (never migrating it) lacks them.
    static let laterColumns = ["takenOverBy": "v5: naps taken over", "hold": holdMigration]

    /// ``napsQuery`` for this file: NULL in place of each column it does not have yet.
    func napsQueryForThisFile() -> String {
        let columns = Self.napColumns.map { column in Self.laterColumns[column].map { has($0) ? column : "NULL" } ?? column }
        return "SELECT \(columns.joined(separator: ", ")) FROM naps WHERE startedAt >= ? ORDER BY startedAt, id"
    }

    /// Records `entry`; returns false (and changes nothing) when its nap is recorded already.
    @discardableResult
    public func recordNap(_ entry: NapHistoryEntry) throws(StoreError) -> Bool {
        try write("cannot record the nap in the history") { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO naps (\(Self.napColumns.joined(separator: ", ")))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    entry.napID, entry.startedAt, entry.endedAt, entry.fallAsleepSeconds, entry.napSeconds,
                    entry.latenessMs, entry.outcome, entry.alarmReason, entry.snoozes, entry.sound, entry.output,
                    entry.rungBy, entry.recordedBy, entry.preset, entry.takenOverBy, entry.hold,
                ])
            return db.changesCount > 0
        }
    }

    /// The naps started at or after `since` (ISO 8601 UTC text; every nap when nil), in the order
    /// they started.
    public func naps(since: String? = nil) throws(StoreError) -> [NapHistoryEntry] {
        var entries: [NapHistoryEntry] = []
        try forEachNap(since: since) { entries.append($0) }
        return entries
    }

    /// Calls `body` with each nap started at or after `since`, in the order they started, one at a
    /// time (a long history is never all in memory at once).
    public func forEachNap(since: String? = nil, _ body: (NapHistoryEntry) -> Void) throws(StoreError) {
        guard has(Self.napsMigration) else { return }
        try read("cannot read the nap history") { db in
            // A file opened read-only by a release that adds the hold column may not have it yet.
            let query = napsQueryForThisFile()
            let rows = try Row.fetchCursor(db, sql: query, arguments: [since ?? ""])
            // A number no nap records (infinity, from a database edited by hand) is none: JSON
            // cannot say it, and no listing could use it.
            func finite(_ row: Row, _ index: Int) -> Double? { (row[index] as Double?).flatMap { $0.isFinite ? $0 : nil } }
            while let row = try rows.next() {
                body(NapHistoryEntry(
                    napID: row[0], startedAt: row[1], endedAt: row[2], fallAsleepSeconds: finite(row, 3), napSeconds: finite(row, 4),
                    latenessMs: finite(row, 5), outcome: row[6], alarmReason: row[7], snoozes: row[8], sound: row[9],
                    output: row[10], rungBy: row[11], takenOverBy: row[14], recordedBy: row[12], preset: row[13], hold: row[15]))
            }
        }
    }
}

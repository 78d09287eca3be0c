public import Foundation
import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem

/// What the history keeps of a nap, gathered from its records as it runs (``observe(_:)``) and
/// saved in its live state at every change: so whoever ends it (the nap itself, its guardian,
/// `resume`, or the command that finds it interrupted) records the same facts, once (``napID``).
///
/// Instants are wall-clock seconds since 1970, each the session's origin plus the record's `t`
/// (the boot-time clock of the deadlines): the differences are exact, whatever the wall clock does.
public struct NapHistoryFacts: Codable, Sendable, Hashable {
    /// The nap's identity: the history has one row per nap.
    public var napID: String
    /// Who holds the nap now (`nap`, `guardian`, `resume`): who rings it if it rings.
    public var holder: String
    /// Whether the nap waited for a hold (only then is there a time to fall asleep).
    public var holdMode: Bool
    /// What held it (`key`, `desktop`, `none`); nil in the facts of an earlier release.
    public var hold: String?
    /// With a desktop hold: the idle time that ended the hold, in seconds. The person stopped
    /// using the machine this long before the release started: that is when they fell asleep.
    /// Nil once the hold was given up (the release then started without a quiet spell).
    public var idleAfter: Double?
    public var sound: String?
    public var preset: String?
    /// When the nap was set up (its start, when it never started).
    public var created: Double
    /// The session's start: the first hold, or the start of the release with `--no-hold`.
    public var started: Double?
    /// The final release: the hold that ended last before the nap timer started.
    public var fellAsleep: Double?
    /// When the nap timer started.
    public var napping: Double?
    /// When the alarm first rang, why, how late, on which output, and who rang it.
    public var firstRing: Double?
    public var reason: String?
    public var latenessMs: Double?
    public var output: String?
    public var rungBy: String?
    /// Who took the nap over, in order (`guardian`, `resume`).
    public var takenOverBy: String?
    public var snoozes = 0
    /// How it ended (`dismissed`, `ring_limit`, `cancelled`) and when.
    public var outcome: String?
    public var ended: Double?
    /// The start of the last release so far (the final one once the nap timer starts).
    var lastRelease: Double?
    /// The wall-clock time of this session's `t = 0` (a session taken over has its own).
    var origin: Double?

    public init(napID: String = UUID().uuidString.lowercased(), holder: String, holdMode: Bool, hold: String? = nil,
                idleAfter: Double? = nil, sound: String?, preset: String?, created: Double) {
        self.napID = napID
        self.holder = holder
        self.holdMode = holdMode
        self.hold = hold
        self.idleAfter = idleAfter
        self.sound = sound
        self.preset = preset
        self.created = created
    }

    enum CodingKeys: String, CodingKey {
        case napID, holder, holdMode, hold, idleAfter, sound, preset, created, started, fellAsleep, napping, firstRing, reason
        case latenessMs, output, rungBy, takenOverBy, snoozes, outcome, ended, lastRelease
    }

    /// The nap is taken over by `holder` (a guardian, `resume`): a session of its own, with its own
    /// clock origin, goes on from here.
    public mutating func takeOver(by holder: String) {
        self.holder = holder
        takenOverBy = takenOverBy.map { "\($0), \(holder)" } ?? holder
        origin = nil
    }

    /// Takes in one record of the session.
    ///
    /// Times are the session's `t` from its origin, read from its first `phase` record: what a
    /// session says before its first phase change (a guardian's warnings as it takes a nap over,
    /// long before the alarm it keeps) is stamped from another moment, and made a taken-over nap's
    /// NAPPED end when its process died (2 s of a 5 s nap).
    public mutating func observe(_ record: SessionRecord) {
        if origin == nil, record.event == .phase, let wall = WallClockText.secondsSince1970(iso8601: record.wall) { origin = wall - record.t }
        let at = (origin ?? created) + record.t
        switch record.event {
        case .phase:
            switch record.phase {
            case .holding?:
                if started == nil { started = at }
            case .releasing?:
                if started == nil { started = at }
                lastRelease = at
            case .napping?:
                if napping == nil {
                    napping = at
                    // The release starts --idle-after after the last input of a desktop hold.
                    if holdMode { fellAsleep = lastRelease.map { max($0 - (idleAfter ?? 0), started ?? $0) } }
                }
            case .ringing?:
                if firstRing == nil {
                    firstRing = at
                    rungBy = holder
                }
            case .snoozed?:
                snoozes += 1
            case .finished?, .cancelled?, .ready?, nil:
                break
            }
        case .alarm:
            if latenessMs == nil {
                latenessMs = record.latenessMs
                output = record.output
                reason = record.reason?.rawValue
            }
        case .end:
            outcome = record.outcome?.rawValue
            ended = at
        case .hold:
            // A desktop hold given up (its idle time could not be read) released the nap without
            // --idle-after of quiet: nothing tells when the person last used the machine.
            if record.what == HoldSource.none.rawValue { idleAfter = nil }
        default:
            break
        }
    }

    /// The history's row: ended as it ended, or with `outcome` (`interrupted`, `missed`) at
    /// `endedAt`, written by `recordedBy`.
    func entry(outcome: String? = nil, endedAt: Double? = nil, recordedBy: String) -> NapHistoryEntry {
        let start = started ?? created
        let end = endedAt ?? ended ?? Date().timeIntervalSince1970
        func rounded(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }
        return NapHistoryEntry(
            napID: napID, startedAt: WallClockText.iso8601(secondsSince1970: start),
            endedAt: WallClockText.iso8601(secondsSince1970: max(end, start)),
            fallAsleepSeconds: fellAsleep.map { rounded(max($0 - start, 0)) },
            napSeconds: napping.map { rounded(max((firstRing ?? end) - $0, 0)) },
            latenessMs: latenessMs, outcome: outcome ?? self.outcome ?? "cancelled", alarmReason: reason,
            snoozes: snoozes, sound: sound, output: output, rungBy: rungBy, takenOverBy: takenOverBy,
            recordedBy: recordedBy, preset: preset, hold: hold)
    }
}

/// Writes naps into the history (the `naps` table of the database), each once. A nap is first
/// kept in a file of its own (``StorePaths/pendingHistory``, written atomically), then written to
/// the database, then its file is removed: a database that is busy or broken when the nap ends
/// loses nothing, and the next `nap`, `history`, `status` or `stop` writes what waits
/// (``flushPending()``), once (a nap's row is keyed by its id).
struct NapHistoryLog: Sendable {
    let paths: StorePaths

    /// How long recording a nap may hold up what comes after it (the start of the next nap, the
    /// end of this one).
    static let writeLimit: Duration = .seconds(2)

    /// Records `entry` on a thread of its own, waiting for it at most ``writeLimit``; returns what
    /// to say when it could not be recorded, or not in time (the nap is not affected; it waits in
    /// its file, and a write that is late still completes if this process runs long enough).
    func record(_ entry: NapHistoryEntry) -> String? {
        let file = paths.database
        let pending = pendingFile(for: entry)
        let kept = keep(entry)
        let write = BoundedCall.start(named: "sf-history") { () -> String? in
            do throws(StoreError) {
                try StoreDatabase.openForWriting(file: file, checkIntegrity: true).recordNap(entry)
                try? AtomicFile.remove(pending)
                return nil
            } catch {
                return "this nap (\(entry.outcome)) could not be recorded in the history: \(UserData.failure(error).lines.joined(separator: " "))"
                    + (kept ? "; it waits in \(pending.path) and the next nap, history, status or stop writes it" : "")
            }
        }
        guard let said = write.wait(atMost: Self.writeLimit) else {
            return "this nap (\(entry.outcome)) is not in the history yet: the database \(file.path) did not answer within \(Self.writeLimit.components.seconds)s (another command holds it, or its disk does not answer)"
                + (kept ? "; it waits in \(pending.path) and the next nap, history, status or stop writes it" : "")
        }
        return said
    }

    /// Keeps `entry` in its own file beside the live state (atomically), for ``flushPending()`` to
    /// write: what a command holding the nap lock does, so that it never waits for the database
    /// while a new nap cannot start. Returns whether it is kept.
    @discardableResult
    func keep(_ entry: NapHistoryEntry) -> Bool {
        (try? AtomicFile.write(Self.encoded(entry), to: pendingFile(for: entry))) != nil
    }

    /// Records the nap whose live state is `live` as `outcome` (`interrupted`, `missed`): it ended
    /// without anyone ringing it to its end.
    func record(_ live: LiveSessionState, outcome: String, endedAt: Double, recordedBy: String) -> String? {
        record(live.historyFacts.entry(outcome: outcome, endedAt: endedAt, recordedBy: recordedBy))
    }

    /// A file of the pending history that is not a nap's entry, kept under a name of its own
    /// (`….json.unreadable-TIME`), never read again, never deleted, never replacing another.
    private static func keepAside(_ path: String) {
        var failure: Int32 = 0
        _ = AtomicFile.moveAside(path, suffix: ".unreadable", failure: &failure)
    }

    /// Writes every nap that waits in its file into the database and removes the file; returns
    /// what to say when some still wait (the database still busy or broken). Bounded like
    /// ``record(_:)``.
    func flushPending() -> String? {
        guard let names = FolderEntries.names(in: paths.pendingHistoryPath) else { return nil }
        let jsonFiles = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
        guard !jsonFiles.isEmpty else { return nil }
        let folder = paths.pendingHistory
        let files = jsonFiles.sorted().map { folder.appendingPathComponent($0) }
        let database = paths.database
        let write = BoundedCall.start(named: "sf-history") { () -> String? in
            var failure: String?
            for file in files {
                // A nap's entry is a few hundred bytes: a link, a device or a huge file in its
                // place is not read, and is kept aside as an entry that is not a nap is.
                let read: Data??
                do throws(StoreError) {
                    read = try AtomicFile.read(path: file.path, atMost: 1 << 20)
                } catch {
                    if case .damaged = error.kind { Self.keepAside(file.path) }
                    read = nil
                }
                guard let data = read.flatMap({ $0 }) else { continue }
                guard let entry = try? JSONDecoder().decode(NapHistoryEntry.self, from: data) else {
                    // Not a nap: kept aside under another name, never read again, never deleted.
                    Self.keepAside(file.path)
                    continue
                }
                do throws(StoreError) {
                    try StoreDatabase.openForWriting(file: database, checkIntegrity: false).recordNap(entry)
                    try? AtomicFile.remove(file)
                } catch {
                    failure = UserData.failure(error).lines.joined(separator: " ")
                    break
                }
            }
            return failure
        }
        let waiting = files.count
        guard let outcome = write.wait(atMost: Self.writeLimit) else {
            return "\(waiting) ended nap\(waiting == 1 ? "" : "s") still wait\(waiting == 1 ? "s" : "") in \(folder.path) for the history: the database \(database.path) did not answer within \(Self.writeLimit.components.seconds)s"
        }
        return outcome.map { "ended naps still wait in \(folder.path) for the history: \($0)" }
    }

    private func pendingFile(for entry: NapHistoryEntry) -> URL {
        let name = String(entry.napID.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
        return paths.pendingHistory.appendingPathComponent("\(name).json")
    }

    private static func encoded(_ entry: NapHistoryEntry) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(entry)) ?? Data()
    }
}

/// Naps that ended while the history could not be written, written now (`history`, `status`,
/// `stop`; `nap` does it when it starts).
public enum PendingHistory {
    /// Writes what waits; returns what to say when some still wait.
    public static func flush(environment given: [String: String]? = nil) -> String? {
        let environment = given ?? ProcessSpawn.currentEnvironment()
        guard let paths = try? StorePaths(environment: environment) else { return nil }
        return NapHistoryLog(paths: paths).flushPending()
    }
}

extension LiveSessionState {
    /// The facts saved with the state, or, for a state an earlier release saved, what it says.
    var historyFacts: NapHistoryFacts {
        if let history { return history }
        var facts = NapHistoryFacts(napID: "\(bootID)-\(pid)-\(started?.wall ?? updated.wall)", holder: holder.rawValue,
                                    holdMode: false, sound: setup.soundName, preset: setup.presetName,
                                    created: started?.wallSeconds ?? updated.wallSeconds)
        facts.started = started?.wallSeconds
        facts.snoozes = snoozes
        return facts
    }
}

import Foundation
import Glibc
import SnoozeFuseCore
import SnoozeFusePluginHost
import SnoozeFuseStore
import SnoozeFuseSystem

/// Keeps a nap's live state on disk (SPEC §9): written atomically at every change of its session,
/// removed when it ends. A full disk does not stop it: room is kept beside the state
/// (`session.spare`, made at the first write) and the state is written there when no new block can
/// be had (``DiskReserve``), so a guardian always finds the nap as it is. If it cannot be written
/// at all (a read-only state folder), it says so once: the nap goes on, but nothing could ring it
/// if its process died.
final class LiveSessionKeeper: Sendable {
    let paths: StorePaths
    let setup: SavedAlarmSetup
    let holder: LiveSessionState.Holder
    let terminal: String?
    let bootID = currentBootID()
    private let state = Locked(State())
    /// Held while the state is written: the nap's loop (its changes, the sink fixes) and the
    /// guardian's watch each save; one at a time, each the latest state (never an older one after
    /// a newer), into the one temporary file.
    private let writing = Locked(())
    private let warn: @Sendable (String) -> Void

    private struct State {
        var guardianPid: Int32?
        var latest: LiveSessionState?
        var warned = false
        /// Whether room was kept for the state yet (tried once, at the first write that worked).
        var reserveTried = false
        /// Whether the nap was told the disk is full.
        var saidFull = false
        /// Whether a state of this nap is on disk.
        var saved = false
        var history: (@Sendable () -> NapHistoryFacts?)?
        var sinkFixes: [SinkLevelFix] = []
    }

    init(paths: StorePaths, setup: SavedAlarmSetup, holder: LiveSessionState.Holder, terminal: String?,
         warn: @escaping @Sendable (String) -> Void) {
        self.paths = paths
        self.setup = setup
        self.holder = holder
        self.terminal = terminal
        self.warn = warn
    }

    /// The state last written.
    var current: LiveSessionState? { state.withLock { $0.latest } }

    /// The guardian that watches this process (nil: none does now), in this state and every later
    /// one; a state already saved is saved again with it.
    func setGuardian(_ pid: Int32?) {
        state.withLock { state in
            state.guardianPid = pid
            state.latest?.guardianPid = pid
        }
        writeLatest()
    }

    /// Where the nap's history facts come from (its session), saved with each state.
    func trackHistory(_ facts: @escaping @Sendable () -> NapHistoryFacts?) {
        state.withLock { $0.history = facts }
    }

    /// Saves `session` as it is at `now`; an ended session's state is removed.
    func save(_ session: Session<BootInstant>, now: BootInstant) {
        guard !session.phase.isTerminal else {
            remove()
            return
        }
        // The history's facts come from the session (its own lock), read before this one's.
        let history = state.withLock { $0.history }?()
        // The guardian and the sink fixes as they are when this state becomes the latest: one
        // that changes meanwhile is never lost to an older value.
        state.withLock { state in
            var live = LiveSessionState(session: session, now: now, wallNow: Date(), pid: getpid(), holder: holder,
                                        guardianPid: state.guardianPid, bootID: bootID, terminal: terminal, setup: setup,
                                        history: history)
            live.sinkFixes = state.sinkFixes.isEmpty ? nil : state.sinkFixes
            state.latest = live
        }
        writeLatest()
    }

    /// Keeps what the alarm changed on the sinks, in the state now and in every later one.
    func saveSinkFixes(_ fixes: [SinkLevelFix]) {
        state.withLock { state in
            state.sinkFixes = fixes
            state.latest?.sinkFixes = fixes.isEmpty ? nil : fixes
        }
        writeLatest()
    }

    /// Writes the latest state, if the nap has one (none once it is removed).
    private func writeLatest() {
        writing.withLock { _ in
            if let live = state.withLock({ $0.latest }) { write(live) }
        }
    }

    private func write(_ live: LiveSessionState) {
        let data = live.encoded()
        let reserve = DiskReserve(spare: paths.liveSessionSparePath)
        do {
            try AtomicFile.write(data, toPath: paths.liveSessionPath)
            // The copy a damaged state falls back to (written after it: never newer).
            try? AtomicFile.write(data, toPath: paths.liveSessionCopyPath)
            if state.withLock({ state in defer { state.reserveTried = true; state.saved = true }; return !state.reserveTried }) {
                try? reserve.ensure()
            }
        } catch {
            guard case .fileSystem(let code) = error.kind, DiskReserve.isNoRoom(code) else {
                warnOnce("cannot save the nap's live state (\(error)): if this process dies, nothing can ring its alarm")
                return
            }
            do throws(DiskReserve.Failure) {
                try reserve.replace(paths.liveSessionPath, with: data)
                if state.withLock({ state in defer { state.saidFull = true; state.saved = true }; return !state.saidFull }) {
                    warn("the disk that holds \(paths.liveSessionPath) is full: the nap's live state is written into the room kept for it beside it; free some space")
                }
            } catch {
                let saved = state.withLock { $0.saved }
                warnOnce("cannot save the nap's live state: the disk that holds \(paths.liveSessionPath) is full, and \(error); free some space: "
                    + (saved ? "if this process dies, its guardian rings the alarm as it was last saved" : "if this process dies, nothing can ring its alarm"))
            }
        }
    }

    /// Says `message` if nothing was said of the live state before.
    private func warnOnce(_ message: String) {
        let first = state.withLock { state -> Bool in
            defer { state.warned = true }
            return !state.warned
        }
        if first { warn(message) }
    }

    /// Removes the state: the nap has ended.
    func remove() {
        writing.withLock { _ in
            state.withLock { $0.latest = nil }
            Self.removeFiles(paths)
        }
    }

    /// Removes the live state and its copy: the nap ended, or was recorded as it stopped.
    static func removeFiles(_ paths: StorePaths) {
        try? AtomicFile.remove(paths.liveSession)
        try? AtomicFile.remove(paths.liveSessionCopy)
    }

    /// The live state on disk, if any: `session.json`, or when that is damaged, the copy of the
    /// last good one beside it.
    static func read(_ paths: StorePaths) -> LiveSessionState? {
        switch readFile(paths) {
        case .none: nil
        case .state(let live): live
        case .damaged(_, let fallback): fallback
        case .unreadable: nil
        }
    }

    /// What is on disk: no state, a whole one, or a file that exists and cannot be read (what is
    /// wrong with it, and the last good copy when there is one).
    static func readFile(_ paths: StorePaths) -> LiveStateFile {
        let data: Data?
        do throws(StoreError) {
            data = try AtomicFile.read(path: paths.liveSessionPath, atMost: LiveSessionState.largestFile)
        } catch {
            if case .fileSystem(let code) = error.kind, code == EACCES || code == EPERM {
                return .unreadable(reason: whyUnreadable(paths.liveSessionPath, code))
            }
            return .damaged(reason: error.description, fallback: copy(paths))
        }
        guard let data else { return .none }
        let reason: String
        do throws(JSONFieldError) {
            return .state(try LiveSessionState.read([UInt8](data)))
        } catch {
            reason = data.isEmpty ? "it is empty"
                : error.isSyntax ? "it is not whole JSON (\(data.count) bytes; cut short or overwritten: \(error.problem))"
                : "it is JSON but not a nap's live state (\(error))"
        }
        return .damaged(reason: reason, fallback: copy(paths))
    }

    private static func copy(_ paths: StorePaths) -> LiveSessionState? {
        (try? AtomicFile.read(path: paths.liveSessionCopyPath, atMost: LiveSessionState.largestFile)).flatMap { $0 }.flatMap(LiveSessionState.decode)
    }

    /// Under the nap lock: a damaged state is moved aside (never deleted) and, when no good copy
    /// of it is left, recorded in the history as an interrupted nap with what its file shows.
    /// Returns the state to go on with (a whole one, or the good copy) and what to say.
    static func setAsideIfDamaged(_ paths: StorePaths, recordedBy: String) -> (LiveSessionState?, String?) {
        let found = readFile(paths)
        if case .unreadable(let reason) = found {
            // Not damaged: someone else's, or its permissions changed. Nothing of it is touched.
            return (nil, "the live state \(paths.liveSession.path) cannot be read: \(reason); it is left as it is")
        }
        guard case .damaged(let reason, let fallback) = found else { return (read(paths), nil) }
        let modified = (try? FileManager.default.attributesOfItem(atPath: paths.liveSession.path)[.modificationDate] as? Date)?.timeIntervalSince1970
        let aside: URL
        switch moveAside(paths) {
        case .success(let moved):
            aside = moved
        case .failure(let error):
            return (fallback, "the live state \(paths.liveSession.path) cannot be read (\(reason)) nor moved aside (\(error.reason)); move it away yourself")
        }
        var said = "the live state \(paths.liveSession.path) could not be read (\(reason)); it is kept as \(aside.path)"
        if fallback != nil {
            said += ", and the copy of the last good state beside it stands in for it"
        } else {
            let when = WallClockText.iso8601(secondsSince1970: modified ?? Date().timeIntervalSince1970)
            let entry = NapHistoryEntry(napID: "damaged-\(aside.lastPathComponent)", startedAt: when, endedAt: when,
                                        outcome: "interrupted", recordedBy: recordedBy)
            // Kept for the history, written by the caller once it lets go of the nap lock.
            if NapHistoryLog(paths: paths).keep(entry) {
                said += "; the history keeps it as an interrupted nap (last written \(when))"
            } else if let warning = NapHistoryLog(paths: paths).record(entry) {
                said += "; \(warning)"
            }
        }
        return (fallback, said)
    }

    /// Moves a damaged state aside (never deletes it, never replaces one moved aside before):
    /// `session.json.damaged-TIME` (UTC, to the nanosecond; see ``AtomicFile/moveAside(_:suffix:failure:)``).
    /// Returns where it went, or why it could not.
    static func moveAside(_ paths: StorePaths) -> Result<URL, MoveAsideFailure> {
        var failure: Int32 = 0
        guard let aside = AtomicFile.moveAside(paths.liveSessionPath, suffix: ".damaged", failure: &failure) else {
            return .failure(MoveAsideFailure(code: failure))
        }
        try? AtomicFile.remove(paths.liveSessionCopy)
        return .success(URL(fileURLWithPath: aside))
    }

    /// Why a damaged state stayed where it is: the errno, in words.
    struct MoveAsideFailure: Error {
        var code: Int32
        var reason: String { String(cString: strerror(code)) }
    }
}

/// The live state file as found on disk.
enum LiveStateFile: Sendable {
    case none
    case state(LiveSessionState)
    /// It exists and cannot be read: `reason`, and the last good copy, if any.
    case damaged(reason: String, fallback: LiveSessionState?)
    /// It exists and this user may not read it (EACCES, EPERM): another user's nap (its folder
    /// reached through their HOME or XDG folders), or its permissions were changed. Not damaged:
    /// nothing moves it aside or records it.
    case unreadable(reason: String)
}

extension LiveSessionKeeper {
    /// Why this user may not read the live state at `path` (`code`: EACCES or EPERM): whose the
    /// file (or, when that cannot be seen either, its folder) is, and what to do.
    static func whyUnreadable(_ path: String, _ code: Int32) -> String {
        let me = geteuid()
        let errnoName = code == EPERM ? "EPERM" : "EACCES"
        // The file, or the nearest folder above it this user can see (another user's folders
        // cannot be entered).
        var info = stat()
        var subject = path
        while lstat(subject, &info) != 0 {
            guard subject != "/", !subject.isEmpty else { return "you (uid \(me)) may not read it (\(errnoName))" }
            subject = (subject as NSString).deletingLastPathComponent
        }
        let which = subject == path ? "it" : "its folder \(subject)"
        if info.st_uid != me {
            return "\(which) belongs to \(userName(info.st_uid)), not to you (uid \(me)): that user's nap, which only they "
                + "(or root) can see; run snoozefuse as them, or set HOME and the XDG folders to your own (\(errnoName))"
        }
        let mode = String(format: "%04o", UInt32(info.st_mode & 0o7777))
        let folder = (path as NSString).deletingLastPathComponent
        return "\(which) is yours but its permissions (mode \(mode)) forbid reading it (\(errnoName)); "
            + "`chmod u+rwx \(folder)` and `chmod u+rw \(path)` give them back"
    }

    /// `uid`'s login name and number (`alice (uid 1000)`), or the number alone.
    static func userName(_ uid: uid_t) -> String {
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let found = result, let name = found.pointee.pw_name else {
            return "uid \(uid)"
        }
        return "user \(String(cString: name)) (uid \(uid))"
    }
}

import Foundation
import Glibc
import SnoozeFuseCore
import SnoozeFusePluginHost
import SnoozeFuseStore
import SnoozeFuseSystem
import Synchronization

/// Keeps a nap's live state on disk (SPEC §9): written atomically at every change of its session,
/// removed when it ends. If it cannot be written (a read-only state folder), it says so once: the
/// nap goes on, but nothing could ring it if its process died.
final class LiveSessionKeeper: Sendable {
    let paths: StorePaths
    let setup: SavedAlarmSetup
    let holder: LiveSessionState.Holder
    let terminal: String?
    let bootID = currentBootID()
    private let state = Mutex(State())
    private let warn: @Sendable (String) -> Void

    private struct State {
        var guardianPid: Int32?
        var latest: LiveSessionState?
        var warned = false
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

    /// The guardian that watches this process, for the state.
    func setGuardian(_ pid: Int32?) {
        state.withLock { $0.guardianPid = pid }
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
        let (guardianPid, history, fixes) = state.withLock { ($0.guardianPid, $0.history, $0.sinkFixes) }
        var live = LiveSessionState(session: session, now: now, wallNow: Date(), pid: getpid(), holder: holder,
                                    guardianPid: guardianPid, bootID: bootID, terminal: terminal, setup: setup,
                                    history: history?())
        live.sinkFixes = fixes.isEmpty ? nil : fixes
        state.withLock { $0.latest = live }
        write(live)
    }

    /// Keeps what the alarm changed on the sinks, in the state now and in every later one.
    func saveSinkFixes(_ fixes: [SinkLevelFix]) {
        let live = state.withLock { state -> LiveSessionState? in
            state.sinkFixes = fixes
            state.latest?.sinkFixes = fixes.isEmpty ? nil : fixes
            return state.latest
        }
        if let live { write(live) }
    }

    private func write(_ live: LiveSessionState) {
        do {
            try AtomicFile.write(live.encoded(), to: paths.liveSession)
        } catch {
            let first = state.withLock { state -> Bool in
                defer { state.warned = true }
                return !state.warned
            }
            if first { warn("cannot save the nap's live state (\(error)): if this process dies, nothing can ring its alarm") }
        }
    }

    /// Removes the state: the nap has ended.
    func remove() {
        state.withLock { $0.latest = nil }
        try? AtomicFile.remove(paths.liveSession)
    }

    /// The live state on disk, if any (a whole one: it is replaced atomically).
    static func read(_ paths: StorePaths) -> LiveSessionState? {
        guard let data = try? AtomicFile.read(paths.liveSession) else { return nil }
        return LiveSessionState.decode(data)
    }
}

import Foundation
import Glibc
public import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem

/// Where the nap of this user stands, read from its live state (always a whole one) and whether
/// the processes it names are alive: for `status`, and for `resume` to know what is interrupted.
public struct NapStatus: Sendable, Hashable, Encodable {
    public enum Kind: String, Sendable, Hashable, Encodable {
        /// No nap.
        case none
        /// A nap runs (its own process, or `resume`, holds the alarm) and has not rung yet.
        case running
        /// Its alarm rings.
        case ringing
        /// Its alarm was snoozed.
        case snoozed
        /// The nap's process died; its guardian holds the alarm.
        case guarded
        /// Nobody holds the alarm: both processes are gone (a reboot, or both killed).
        case interrupted
        /// The live state exists but cannot be read, and no good copy of it is left (``damage``).
        case damaged
        /// The live state exists and this user may not read it: another user's nap, or its
        /// permissions changed (``damage`` says whose and what to do). Nothing is moved or recorded.
        case unreadable
    }

    public var status: Kind
    public var phase: Phase?
    /// Seconds until the current phase's timer runs out (rounded down to the millisecond).
    public var remainingSeconds: Double?
    /// How long that timer was set for.
    public var phaseSeconds: Double?
    /// When the alarm rings if nobody does anything (ISO 8601), and on this machine's clock (`14:32`).
    public var alarmAt: String?
    public var alarmAtLocal: String?
    /// The failsafe, while it applies (`14:42`).
    public var latestLocal: String?
    /// The process that holds the alarm.
    public var pid: Int32?
    public var holder: String?
    /// What holds the nap before its release (`key`, `desktop`, `none`); nil for a state an
    /// earlier release saved.
    public var hold: String?
    /// With a desktop hold: how long without input ends the hold, in seconds.
    public var idleAfterSeconds: Double?
    /// The nap's live state as it was read.
    public var state: LiveSessionState?
    /// The live state file cannot be read: its path and what is wrong (the status is then read
    /// from the copy of the last good state beside it, or is `damaged`).
    public var damage: String?
    /// The process that holds the alarm is stopped (Ctrl-Z, SIGSTOP): it does nothing until
    /// SIGCONT (`fg`), or until its guardian wakes it a second after the alarm is due.
    public var stopped: Bool?
    /// The alarm was due this many seconds ago (half a second or more) and has not rung: a stopped,
    /// frozen or stuck nap, which its guardian wakes or replaces a second after it was due.
    public var lateSeconds: Double?
    /// The nap's own process holds the alarm and no guardian watches it now: its guardian died and
    /// the nap is starting another (for a moment), or none could be started. If the nap's process
    /// died now, nothing would ring its alarm.
    public var unguarded: Bool?

    /// What of this process's environment the calls below read: HOME and the XDG folders
    /// (``StorePaths/environmentVariables``), for a command that makes several of them. Read one by
    /// one: not through Foundation's ProcessInfo (0.4 M of `status`'s instructions), nor every
    /// variable into a dictionary (0.1 M with a desktop session's environment; issue 23).
    public static func currentEnvironment() -> [String: String] {
        ProcessSpawn.currentEnvironment(only: StorePaths.environmentVariables)
    }

    /// Reads the live state of this user's nap. Without an environment, this process's
    /// (``currentEnvironment()``), as the other calls of the short commands do.
    public static func read(environment given: [String: String]? = nil) -> NapStatus {
        let environment = given ?? currentEnvironment()
        guard let paths = try? StorePaths(environment: environment) else { return NapStatus(status: .none) }
        let live: LiveSessionState
        var damage: String?
        switch LiveSessionKeeper.readFile(paths) {
        case .none:
            return NapStatus(status: .none)
        case .state(let state):
            live = state
        case .damaged(let reason, let fallback):
            damage = "\(paths.liveSession.path) cannot be read: \(reason)"
            guard let fallback else {
                var status = NapStatus(status: .damaged)
                status.damage = damage
                return status
            }
            live = fallback
        case .unreadable(let reason):
            var status = NapStatus(status: .unreadable)
            status.damage = "\(paths.liveSession.path) cannot be read: \(reason)"
            return status
        }
        // Alive means holding its lock, which the kernel takes away at death: a process killed
        // and not yet reaped (a zombie under a late or absent init) is dead. Where a process's
        // open files cannot be read, whether it runs decides.
        let bootID = currentBootID()
        let sameBoot = live.bootID == bootID
        let holderAlive = sameBoot && (NapLock.isHeld(path: paths.napLockPath, by: live.pid) ?? isAlive(live.pid))
        let guardianAlive = sameBoot && live.guardianPid.map { NapLock.isHeld(path: paths.guardianLockPath, by: $0) ?? isAlive($0) } == true
        var status = NapStatus(live, now: BootInstant.now, wallNow: Date(), bootID: bootID,
                               holderAlive: holderAlive, guardianAlive: guardianAlive)
        status.damage = damage
        if holderAlive, ProcessRunState.of(live.pid) == .stopped { status.stopped = true }
        return status
    }

    init(status: Kind) {
        self.status = status
    }

    /// The status `live` stands for at `now`.
    init(_ live: LiveSessionState, now: BootInstant, wallNow: Date, bootID: String, holderAlive: Bool, guardianAlive: Bool) {
        let sameBoot = live.bootID == bootID
        switch (holderAlive, live.holder) {
        case (true, .guardian): status = .guarded
        case (true, _): status = live.phase == .ringing ? .ringing : live.phase == .snoozed ? .snoozed : .running
        case (false, .nap) where guardianAlive: status = .guarded
        case (false, _): status = .interrupted
        }
        phase = live.phase
        state = live
        pid = status == .guarded && !holderAlive ? live.guardianPid : live.pid
        holder = live.holder.rawValue
        if holderAlive, live.holder == .nap, !guardianAlive { unguarded = true }
        hold = live.history?.hold
        idleAfterSeconds = live.history?.idleAfter
        phaseSeconds = live.phaseSeconds
        if let ends = live.phaseEnds {
            let remaining = now.duration(to: ends.instant(sameBoot: sameBoot, now: now, wallNow: wallNow))
            remainingSeconds = max((remaining.secondsValue * 1000).rounded(.down) / 1000, 0)
        }
        if let alarm = live.alarm {
            alarmAt = alarm.due.wall
            alarmAtLocal = Self.localTime(alarm.due.wallSeconds, now: wallNow.timeIntervalSince1970)
            // Due half a second ago or more and not ringing (nor snoozed): the nap is late (a nap
            // that runs rings within milliseconds of its deadline).
            let past = alarm.due.instant(sameBoot: sameBoot, now: now, wallNow: wallNow).duration(to: now)
            // (A nap waiting for its first hold has an alarm only with a time named.)
            if [.ready, .holding, .releasing, .napping].contains(live.phase), past >= .milliseconds(500) {
                lateSeconds = (past.secondsValue * 10).rounded(.down) / 10
            }
        }
        latestLocal = live.maxDeadline.map { Self.localTime($0.wallSeconds, now: wallNow.timeIntervalSince1970) }
    }

    /// The remaining time as the nap shows it (SPEC §2: whole seconds, in the layout of the timer's
    /// configured length).
    public var remainingText: String? {
        guard let remainingSeconds else { return nil }
        let layout = RemainingTimeLayout(configured: .milliseconds(Int64((phaseSeconds ?? remainingSeconds) * 1000)))
        return layout.format(.seconds(Int64(remainingSeconds.rounded(.down))))
    }

    /// How far the current phase is, 0–100.
    public var percentage: Int? {
        guard let remainingSeconds, let phaseSeconds, phaseSeconds > 0 else { return nil }
        return Int((100 * (1 - remainingSeconds / phaseSeconds)).rounded().clamped(to: 0 ... 100))
    }

    /// `14:32` on this machine's clock when that is today (`now`'s day), else with its date:
    /// `2026-11-26 14:32` (a state from a machine whose clock jumped, or a nap of long ago).
    public static func localTime(_ secondsSince1970: Double, now: Double) -> String {
        func local(_ seconds: Double) -> tm {
            var time = time_t(seconds.rounded(.down))
            var parts = tm()
            localtime_r(&time, &parts)
            return parts
        }
        let parts = local(secondsSince1970), today = local(now)
        func two(_ value: Int32) -> String { WallClockText.padded(Int64(value), digits: 2) }
        let clock = "\(two(parts.tm_hour)):\(two(parts.tm_min))"
        guard parts.tm_year != today.tm_year || parts.tm_yday != today.tm_yday else { return clock }
        return "\(WallClockText.padded(Int64(parts.tm_year) + 1900, digits: 4))-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) " + clock
    }

    /// Whether `pid` is a live process of this program (a pid reused by another program is not;
    /// a zombie is not): where its open files cannot be read.
    static func isAlive(_ pid: Int32) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        if stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") == true { return false }
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        return comm.hasPrefix("snoozefuse")
    }

    /// Forgets an interrupted nap (its live state), if that is what there is, records it in the
    /// history as interrupted, and puts back the mute and volume its alarm changed. It takes the
    /// nap lock first: nobody else can ring, replace or record the nap meanwhile, so it is recorded
    /// once. Returns what to say: the sinks put back, and a warning when the history could not be
    /// written.
    public static func forgetInterrupted(environment given: [String: String]? = nil) -> (restored: [String], warning: String?) {
        let environment = given ?? currentEnvironment()
        let status = read(environment: environment).status
        guard status == .interrupted || status == .damaged, let paths = try? StorePaths(environment: environment) else { return ([], nil) }
        let history = NapHistoryLog(paths: paths)
        // Under the nap lock only what is quick: the nap is kept for the history in its own file,
        // its sinks put back and its state removed. The database, which another program may hold,
        // is written after the lock is let go, so a new nap never waits for it.
        let forgotten = { () -> (lines: [String], unkept: NapHistoryEntry?)? in
            guard let lock = try? NapLock.acquire(paths.napLock) else { return nil }
            defer { withExtendedLifetime(lock) {} }
            let (live, said) = LiveSessionKeeper.setAsideIfDamaged(paths, recordedBy: "stop")
            guard let live else { return (said.map { [$0] } ?? [], nil) }
            let entry = live.historyFacts.entry(outcome: "interrupted", endedAt: live.updated.wallSeconds, recordedBy: "stop")
            let kept = history.keep(entry)
            let restored = LeftoverSinkFixes.putBack(live.sinkFixes ?? [])
            LiveSessionKeeper.removeFiles(paths)
            return ((said.map { [$0] } ?? []) + restored, kept ? nil : entry)
        }()
        guard let forgotten else { return ([], nil) }
        if let unkept = forgotten.unkept { return (forgotten.lines, history.record(unkept)) }
        return (forgotten.lines, history.flushPending())
    }

    /// Calls `line` with the status now, and then again whenever the nap's live state changes or
    /// the displayed second of its countdown does, until `line` returns false. Woken by the kernel
    /// (inotify on the state folder) and a timer for the next displayed second: never more often,
    /// and nothing wakes the nap itself. It also ends when `output` (where the lines go) loses its
    /// reader, though nothing is to be written (a status bar that quits while no nap runs; 1:
    /// standard output).
    public static func follow(environment given: [String: String]? = nil, output: Int32 = 1, _ line: (NapStatus) -> Bool) {
        let environment = given ?? currentEnvironment()
        guard let paths = try? StorePaths(environment: environment) else {
            _ = line(NapStatus(status: .none))
            return
        }
        try? PrivateFolder.ensure(paths.state)
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        defer { if watch >= 0 { close(watch) } }
        if watch >= 0 {
            _ = inotify_add_watch(watch, paths.state.path, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM))
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = BootInstant.now
            let status = read(environment: environment)
            guard line(status) else { return }
            // Until the state changes, or the countdown shows another second.
            var next: BootInstant?
            if let remaining = status.remainingSeconds, remaining > 0 {
                let fraction = remaining - remaining.rounded(.down)
                next = now.advanced(by: .milliseconds(Int64((fraction > 0 ? fraction : 1) * 1000) + 1))
            }
            if watch < 0 { next = next ?? now.advanced(by: .seconds(1)) }
            if watch >= 0 {
                switch waitReadable(watch, until: next, whileOpen: output) {
                case .readable: while Glibc.read(watch, &buffer, buffer.count) > 0 {}
                case .deadline: break
                case .peerGone: return
                }
            } else if let next {
                _ = SystemThread.sleep(until: next, unless: { false })
            }
        }
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}

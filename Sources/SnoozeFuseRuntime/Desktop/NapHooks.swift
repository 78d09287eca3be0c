import Foundation
import Glibc
import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem

/// The user's hooks (SPEC §7, issue 15): executables in `$XDG_CONFIG_HOME/snoozefuse/hooks/` named
/// after the moments of a nap (`start`, `release`, `nap`, `alarm`, `dismiss`, `end`), each run when
/// its moment comes with the `SNOOZEFUSE_*` variables that describe it.
///
/// A hook never delays the nap: it is started and watched on a thread of its own, with standard
/// input from `/dev/null` and its output appended to `hooks.log` in the state folder. It has 10 s;
/// then it is killed with its whole process group. A hook that fails, hangs or cannot run is said
/// once (a warning), as is one that anybody but its owner could have changed (it is refused, as
/// sudo and ssh refuse such files).
final class NapHooks: Sendable {
    /// The moments a hook can be named after.
    enum Moment: String, CaseIterable, Sendable {
        case start, release, nap, alarm, dismiss, end
    }

    /// How long a hook may run.
    static let timeLimit: Duration = .seconds(10)
    /// What one run of a hook may write into the log.
    static let outputLimit = 64 * 1024
    private let folder: String
    /// Moved to `hooks.log.1` past 1 MiB, before a hook writes to it.
    private let log: AppendOnlyLog
    private var logPath: String { log.path }
    private let warn: @Sendable (String) -> Void
    private let state = Locked(State())

    private struct State {
        var started = false
        var running = 0
        /// Hook runs so far (each run's mark is its number).
        var runs = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The hooks running now, by process, with their moment.
        var processes: [Int32: Moment] = [:]
        /// The nap has ended (``finish()``): only its `alarm`, `dismiss` and `end` hooks still have
        /// their time.
        var finishing = false
    }

    /// The moments whose hooks keep their time once the nap has ended: the alarm's (a light, a
    /// message sent, which a quick dismissal must not cut off) and the end's.
    static let momentsOfTheEnd: Set<Moment> = [.alarm, .dismiss, .end]

    /// - Parameters:
    ///   - paths: the user's folders (hooks in `config/hooks/`, the log in `state/hooks.log`).
    ///   - warn: where a failing, hanging or refused hook is said (the nap's warnings).
    init(paths: StorePaths, warn: @escaping @Sendable (String) -> Void) {
        folder = paths.config.appendingPathComponent("hooks", isDirectory: true).path
        log = AppendOnlyLog(path: paths.state.appendingPathComponent("hooks.log").path)
        self.warn = warn
    }

    /// A record of the nap (``NapPorts/onRecord``, on the nap's loop): runs the hooks of the moments
    /// it marks. Returns at once.
    func follow(_ record: SessionRecord) {
        for moment in moments(of: record) {
            run(moment, record: record)
        }
    }

    /// Waits until every hook started so far has ended or been killed (at most ``timeLimit``). A
    /// hook of a moment that has passed (a `start` hook still running) is stopped now: only the
    /// `alarm`, `dismiss` and `end` hooks may hold up the program's exit (a hung `start` hook held it 10 s).
    func finish() async {
        let passed = state.withLock { state -> [Int32] in
            state.finishing = true
            return state.processes.filter { !Self.momentsOfTheEnd.contains($0.value) }.map(\.key)
        }
        for pid in passed { _ = kill(-pid, SIGKILL) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.running == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The moments `record` marks: the first phase of the nap is its start; entering `releasing`
    /// and `napping`; the alarm; a dismissal and the end.
    private func moments(of record: SessionRecord) -> [Moment] {
        switch record.event {
        case .phase:
            var moments: [Moment] = []
            let first = state.withLock { state -> Bool in
                defer { state.started = true }
                return !state.started
            }
            if first { moments.append(.start) }
            if record.phase == .releasing { moments.append(.release) }
            if record.phase == .napping { moments.append(.nap) }
            return moments
        case .alarm:
            return [.alarm]
        case .end:
            return record.outcome == .dismissed ? [.dismiss, .end] : [.end]
        default:
            return []
        }
    }

    /// Starts a thread that finds the hook of `moment`, judges it and runs it: nothing here touches
    /// the file system, so the nap's loop never waits on a folder that does not answer.
    private func run(_ moment: Moment, record: SessionRecord) {
        let path = folder + "/" + moment.rawValue
        // The nap's environment without any SNOOZEFUSE_* of its own (a stale SNOOZEFUSE_PHASE must
        // not reach a hook that has none), then this moment's.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SNOOZEFUSE_") }
        environment["SNOOZEFUSE_EVENT"] = moment.rawValue
        environment["SNOOZEFUSE_T"] = String(record.t)
        environment["SNOOZEFUSE_WALL"] = record.wall
        environment["SNOOZEFUSE_PID"] = String(getpid())
        // A script runs from its opened file (`$0` is /proc/self/fd/N): its own path is here.
        environment["SNOOZEFUSE_HOOK"] = path
        if let phase = record.phase { environment["SNOOZEFUSE_PHASE"] = phase.rawValue }
        if let until = record.until { environment["SNOOZEFUSE_UNTIL"] = String(until) }
        if let reason = record.reason { environment["SNOOZEFUSE_REASON"] = reason.rawValue }
        if let outcome = record.outcome { environment["SNOOZEFUSE_OUTCOME"] = outcome.rawValue }
        if let output = record.output { environment["SNOOZEFUSE_OUTPUT"] = output }
        // What the hook detaches (a double fork and setsid) is adopted by the nap's process (see
        // LiveNap) and found by this mark, inherited by everything the hook starts.
        let run = state.withLock { state -> Int in
            state.running += 1
            state.runs += 1
            return state.runs
        }
        let mark = "SNOOZEFUSE_HOOK_RUN=\(getpid())-\(run)"
        environment["SNOOZEFUSE_HOOK_RUN"] = "\(getpid())-\(run)"
        let started = SystemThread.start(named: "sf-hook") { [self, environment] in
            defer { ended() }
            // Judged by the file it opens, and that file is what runs (not the path again).
            switch CheckedExecutable.open(path) {
            case .missing:
                return // no hook for this moment
            case .refused(let refusal):
                let message = "hook \(moment.rawValue) refused: \(refusal)"
                warn(message)
                let log = self.log.open()
                Self.append(message, to: log)
                if log >= 0 { _ = close(log) }
            case .ready(let hook):
                supervise(moment, hook: hook, environment: environment, mark: mark)
            }
        }
        if !started {
            warn("hook \(moment.rawValue) not run: no thread could be started for it")
            ended()
        }
    }

    /// One hook is done: when it was the last, whoever waits in ``finish()`` goes on.
    private func ended() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Starts the hook, waits for it at most ``timeLimit``, and says what went wrong (in the nap's
    /// warnings and in the log, which still has it when the nap has ended). Its output comes
    /// through a pipe: at most ``outputLimit`` bytes of one run go into the log, the rest is
    /// counted and dropped, with a line saying how much.
    private func supervise(_ moment: Moment, hook: CheckedExecutable, environment: [String: String], mark: String) {
        let path = hook.path
        let log = self.log.open()
        defer { if log >= 0 { _ = close(log) } }
        func report(_ message: String) {
            warn(message)
            Self.append(message, to: log)
        }
        // Once the hook has ended (or been stopped), what it detached ends too.
        defer {
            let left = AdoptedProcesses.end(marked: mark)
            if !left.isEmpty {
                report("hook \(moment.rawValue) left \(left.count) process\(left.count == 1 ? "" : "es") behind (\(left.map(\.description).joined(separator: "; "))); \(left.count == 1 ? "it was" : "they were") ended")
            }
        }
        guard let pipe = makePipe() else {
            report("hook \(moment.rawValue) not run: no pipe for its output (\(String(cString: strerror(errno))))")
            return
        }
        let pid: Int32
        do {
            pid = try hook.start([], descriptors: [0: .devNull, 1: .inherit(pipe.write), 2: .inherit(pipe.write)],
                                 grouping: .ownProcessGroup, environment: environment)
        } catch {
            _ = close(pipe.read)
            _ = close(pipe.write)
            report("hook \(moment.rawValue) could not be started (\(path)): \(error)")
            return
        }
        _ = close(pipe.write)
        // Known while it runs, so that the nap's end can stop it when its moment has passed.
        let stopAtOnce = state.withLock { state -> Bool in
            state.processes[pid] = moment
            return state.finishing && !Self.momentsOfTheEnd.contains(moment)
        }
        if stopAtOnce { _ = kill(-pid, SIGKILL) }
        var output = HookOutput(log: log, limit: Self.outputLimit)
        let status = output.pump(from: pipe.read, whileRunning: pid, atMost: Self.timeLimit)
        // Reaped (or about to be killed below): never signalled by number again.
        if status != nil { state.withLock { $0.processes[pid] = nil } }
        defer { state.withLock { $0.processes[pid] = nil } }
        _ = close(pipe.read)
        if let dropped = output.allowance.droppedLine("hook \(moment.rawValue)", each: "a run") {
            Self.append(dropped, to: log)
        }
        guard let status else {
            let reaped = ProcessSpawn.killGroup(of: pid)
            report("hook \(moment.rawValue) did not finish within \(Self.timeLimit.components.seconds)s and was stopped (\(path))"
                   + (reaped ? "" : "; it has not ended yet (it waits on a device or a file system)"))
            return
        }
        if status != 0, state.withLock({ $0.finishing }), !Self.momentsOfTheEnd.contains(moment), (status & 0x7f) == SIGKILL {
            report("hook \(moment.rawValue) was still running when the nap ended and was stopped (\(path)): only the alarm, dismiss and end hooks have their \(Self.timeLimit.components.seconds)s after it")
        } else if status != 0 {
            report("hook \(moment.rawValue) \(ProcessSpawn.describe(status)) (\(path); its output is in \(logPath))")
        }
    }

    /// Appends `message` as a line of the hooks' log open at `log` (nothing when it is not open).
    private static func append(_ message: String, to log: Int32) {
        AppendOnlyLog.append(line: "snoozefuse: \(message)", to: log)
    }
}

/// A hook's output on its way to the log: what one run writes is kept up to `limit` bytes, the
/// rest counted and dropped.
struct HookOutput {
    let log: Int32
    private(set) var allowance: OutputAllowance
    /// How long what waits in the pipe is read after the hook ended.
    static let drainLimit: Duration = .milliseconds(200)

    init(log: Int32, limit: Int) {
        self.log = log
        allowance = OutputAllowance(limit: limit)
    }

    /// Copies what arrives on `pipe` while child `pid` runs, at most `limit` (CLOCK_BOOTTIME), then
    /// what is already there, for at most ``drainLimit``. Returns its `waitpid` status, or nil when
    /// it still runs (left as it is). A descendant that keeps the pipe open, even one that writes
    /// without end (`yes &`), does not hold this up: after the child ends only what is waiting is
    /// read, and only for a moment.
    mutating func pump(from pipe: Int32, whileRunning pid: Int32, atMost limit: Duration) -> Int32? {
        let deadline = BootInstant.now.advanced(by: limit)
        var open = true
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { return nil }
            guard BootInstant.now < deadline else { return nil }
            if open {
                var entry = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
                if poll(&entry, 1, 50) > 0 { open = take(from: pipe) }
            } else {
                usleep(20_000)
            }
        }
        if open {
            _ = fcntl(pipe, F_SETFL, fcntl(pipe, F_GETFL) | O_NONBLOCK)
            let drained = BootInstant.now.advanced(by: Self.drainLimit)
            while BootInstant.now < drained, take(from: pipe) {}
        }
        return status
    }

    /// Reads once from `pipe` into the log; false at its end (or an error, or nothing waiting
    /// on a non-blocking pipe).
    private mutating func take(from pipe: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = buffer.withUnsafeMutableBytes { read(pipe, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { return true }
        guard count > 0 else { return false }
        let keep = allowance.take(count)
        if keep > 0, log >= 0 { _ = buffer.withUnsafeBytes { write(log, $0.baseAddress, keep) } }
        return true
    }
}

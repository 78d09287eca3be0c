public import Foundation
import Glibc
import SnoozeFuseCore
import SnoozeFusePluginHost
import SnoozeFuseStore
public import SnoozeFuseSystem

/// The guardian of a nap (SPEC §9): a process of its own session and process group, started with
/// the nap, that holds one end of a pipe whose other end only the nap holds.
///
/// Its home is here: this type starts it (``start(paths:)``, with the nap's ``Guardianship``
/// replacing one that dies) and takes the alarm over (``run(napPid:watcherLock:loop:)``, the
/// guardian's whole work, through ``LiveNap/takeOver`` and ``NapAssembly/guardian``). The two
/// others are doors: the `snoozefuse-guardian` program is its idle half (Core only, which waits
/// on the pipe with ``GuardianWatch``, whose descriptors it shares), and the CLI's hidden
/// `snoozefuse guardian` command only parses its arguments and calls ``run(napPid:watcherLock:loop:)``. It sleeps on that pipe
/// (no wake-ups at all) until the nap's process ends, however it ends. A nap that ended its session
/// removed its live state first, and the guardian just ends; otherwise (SIGKILL, a crash, the OOM
/// killer) it takes the alarm over from the live state and rings it at its original deadline,
/// through the same chain of outputs, with the built-in sounds and no plugins.
public enum Guardian {
    /// The descriptor the guardian watches (defined once, with the watch, in Core).
    static let watchDescriptor = GuardianWatch.watchDescriptor
    /// The guardian's idle half (`Sources/snoozefuse-guardian`): it waits with nothing but the
    /// Swift runtime and the pure core in memory, and becomes `snoozefuse guardian` once the nap's
    /// process ends.
    static let watcherName = "snoozefuse-guardian"

    /// Starts the guardian of this process. Returns its PID and the write end of its pipe, which
    /// stays open in this process only (close-on-exec) until it ends: the nap tells the guardian
    /// what to watch through it (``GuardianLink``).
    ///
    /// The guardian starts as the watcher (``watcherName``) when it is installed, and as this
    /// program's `guardian` command otherwise: the same guardian, with twice the memory while it
    /// waits.
    static func start(paths: StorePaths) -> (pid: Int32, watch: Int32)? {
        guard let executable = PluginSearchPath.currentExecutable() else { return nil }
        // Close-on-exec from the start: a hook or plugin child started meanwhile by another thread
        // must never hold the pipe (the guardian would not see this process end).
        guard let pipe = makePipe() else { return nil }
        let ends = [pipe.read, pipe.write]
        defer { close(ends[0]) }
        let guardian = ["guardian", "--nap", "\(getpid())"]
        let (program, arguments) = CompanionProgram.locate(watcherName, beside: executable)
            .map { ($0, [paths.guardianLock.path, paths.guardianLog.path, "--", executable] + guardian) } ?? (executable, guardian)
        let pid = try? ProcessSpawn.start(program, arguments, descriptors: [
            0: .devNull, 1: .devNull, 2: .devNull, watchDescriptor: .inherit(ends[0]),
        ], grouping: .ownSession)
        // The write end lives as long as this process: the kernel closes it when it ends.
        guard let pid else {
            close(ends[1])
            return nil
        }
        return (pid, ends[1])
    }

    /// What a guardian does: waits for the nap with `napPid` to end, then, if it ended without
    /// ending its session, takes its alarm over. Returns the exit status.
    /// - Parameter watcherLock: the descriptor on which the watcher (``watcherName``) kept the
    ///   guardian's lock across its exec: closed once this process holds a lock of its own.
    public static func run(napPid: Int32, watcherLock: Int32? = nil, loop: EventLoop,
                           environment: [String: String] = ProcessInfo.processInfo.environment) async -> Int32 {
        // Held for this process's whole life: `status` sees a guardian by its lock, which goes
        // when it dies (reaped or not).
        let lockFile = try? StorePaths(environment: environment).guardianLock
        let alive = lockFile.flatMap { try? NapLock.acquire($0, shared: true) }
        defer { withExtendedLifetime(alive) {} }
        if alive != nil, let lockFile, let watcherLock { closeWatchersLock(watcherLock, lockFile) }
        // Reads what the nap says on the pipe until every write end is closed (the nap's process
        // has ended), and wakes or ends a nap that has not rung a second after its alarm was due.
        let guardianLog = (try? StorePaths(environment: environment)).map(GuardianLog.init(paths:))
        _ = await BoundedCall.start(named: "snoozefuse-guard") {
            watchNap(napPid, on: watchDescriptor) { guardianLog?.append(message: $0) }
        }.value()
        close(watchDescriptor)
        guard let paths = try? StorePaths(environment: environment),
              let live = LiveSessionKeeper.read(paths), live.pid == napPid, live.holder == .nap else { return 0 }
        let log = GuardianLog(paths: paths)
        // The nap's lock went with its process; a new nap that took it meanwhile owns the files now.
        var lock: NapLock?
        for _ in 0 ..< 200 {
            lock = try? NapLock.acquire(paths.napLock)
            if lock != nil { break }
            try? await loop.clock.sleep(for: .milliseconds(10))
        }
        guard let lock else { return 0 }
        log.append(message: "the nap (pid \(napPid)) ended without ending its session in phase \(live.phase.rawValue); the guardian (pid \(getpid())) holds its alarm")
        do throws(NapSetupError) {
            switch try LiveNap.takeOver(live, as: .guardian, lock: lock, maxLate: nil, loop: loop, message: { log.append(message: $0) }) {
            case .nothing:
                log.append(message: "nothing to ring: the nap had not started")
            case .missed:
                // The guardian has no lateness limit; kept for completeness.
                log.append(message: "the alarm was missed")
            case .ringing(let nap):
                async let result = nap.run()
                for await record in nap.records where record.isEvent { log.append(record) }
                _ = await result
            }
            return 0
        } catch {
            log.append(message: "the guardian cannot ring the alarm: \(error)")
            return 70
        }
    }
}

extension Guardian {
    /// Reads the nap's lines from `descriptor` (``GuardianWatch``) until it ends, sleeping between
    /// them until the watch's next check: a nap that has not rung a second after its alarm was due
    /// is woken (SIGCONT), and ended (SIGKILL) a second later if it still has not, so that the
    /// guardian takes its alarm over. The same loop as `snoozefuse-guardian`'s.
    static func watchNap(_ napPid: Int32, on descriptor: Int32, say: (String) -> Void) {
        var watch = GuardianWatch()
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            var timeout: Int32 = -1
            if let check = watch.nextCheck {
                let now = BootInstant.now.nanoseconds
                timeout = check <= now ? 0 : Int32(clamping: (check - now) / 1_000_000 + 1)
            }
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let count = poll(&ready, 1, timeout)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            if count > 0 {
                let bytes = read(descriptor, &buffer, buffer.count)
                if bytes == 0 || (bytes < 0 && errno != EINTR && errno != EAGAIN) { return }
                if bytes > 0 { watch.read(buffer[0 ..< bytes]) }
                continue
            }
            switch watch.timeElapsed(now: BootInstant.now.nanoseconds) {
            case .wake?:
                say(GuardianWatch.wakeMessage(napPid))
                kill(napPid, SIGCONT)
            case .end?:
                say(GuardianWatch.endMessage(napPid))
                kill(napPid, SIGKILL)
            case nil:
                break
            }
        }
    }

    /// Closes the watcher's hold on the guardian's lock, inherited across its exec on
    /// `descriptor` (it says which), once this process holds one of its own: a child this guardian
    /// starts must not keep it (nor would anything close it). A descriptor that is not that file
    /// (a number reused meanwhile) is left alone.
    static func closeWatchersLock(_ descriptor: Int32, _ lockFile: URL) {
        var inherited = stat()
        var file = stat()
        guard descriptor > 2, descriptor != watchDescriptor, fstat(descriptor, &inherited) == 0, stat(lockFile.path, &file) == 0,
              inherited.st_dev == file.st_dev, inherited.st_ino == file.st_ino else { return }
        close(descriptor)
    }
}

/// The guardian's own events (one JSON object per line, `--events jsonl`'s form), appended to
/// `guardian.jsonl` in the state folder, with `"source":"guardian"` records of what it decided.
struct GuardianLog: Sendable {
    let paths: StorePaths

    func append(_ record: SessionRecord) {
        write(record.jsonLine())
    }

    func append(message: String) {
        var record = SessionRecord(.warning, elapsed: .zero, wall: Date(), message: message)
        record.output = "guardian"
        write(record.jsonLine())
    }

    private func write(_ line: String) {
        try? PrivateFolder.ensure(paths.state)
        let fd = open(paths.guardianLog.path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        writeAll(line + "\n", to: fd)
    }
}

/// The nap's end of its guardian's pipe: at every change of the session it tells the guardian
/// what to watch (``GuardianWatch``'s lines: when the alarm it keeps is due, or that it rings),
/// once per change of what it says. Never blocks: a full pipe (a guardian that stopped reading)
/// loses a line, not the nap's loop.
final class GuardianLink: Sendable {
    private let state = Locked(State())

    private struct State {
        var descriptor: Int32 = -1
        /// The last line written, and one made before the guardian was there.
        var said: String?
        var pending: String?
    }

    /// The pipe's write end: what was to be said before is said now. A new guardian's (the last
    /// one died) replaces the old end, which is closed, and is told what the last one was.
    func attach(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        state.withLock { state in
            if state.descriptor >= 0 { close(state.descriptor) }
            state.descriptor = descriptor
            if let line = state.pending ?? state.said { state.said = Self.write(line, to: descriptor) ? line : nil }
            state.pending = nil
        }
    }

    /// Tells the guardian about `session` at `now`.
    func tell(_ session: Session<BootInstant>, now: BootInstant) {
        let due = session.phase == .ringing ? nil : session.alarmToKeep(now: now)?.due
        let line = GuardianWatch.line(due: due?.nanoseconds, ringing: session.phase == .ringing)
        state.withLock { state in
            guard line != state.said else { return }
            guard state.descriptor >= 0 else {
                state.pending = line
                return
            }
            if Self.write(line, to: state.descriptor) { state.said = line }
        }
    }

    private static func write(_ line: String, to descriptor: Int32) -> Bool {
        var line = line
        return line.withUTF8 { bytes in Glibc.write(descriptor, bytes.baseAddress, bytes.count) == bytes.count }
    }
}

/// A fresh nap's guardian for as long as the nap runs (SPEC §9): started with it, watched from a
/// thread that sleeps on its pidfd (``ChildWatch``), and replaced at once when it dies (a SIGKILL,
/// the OOM killer): the dead one is reaped, a new one is started and told what the last one was
/// told, the live state names it, and the nap says so in a `guardian` event. Between the two,
/// `status` says the nap is unguarded. A guardian that keeps dying (``restartLimit`` times within
/// ``restartWindow``) is not started again: the nap says that nothing would ring its alarm.
final class Guardianship: Sendable {
    static let restartLimit = 5
    static let restartWindow = Duration.seconds(60)

    private let paths: StorePaths
    private let link: GuardianLink
    private let keeper: LiveSessionKeeper
    /// Says what became of a guardian (`what`, message) in the nap's records.
    private let news: @Sendable (_ what: String, _ message: String) -> Void
    private let state = Locked(State())
    /// Held while a dead guardian is replaced: ``stop()`` waits for a replacement under way, so
    /// none is started once the nap has ended.
    private let replacing = Locked(())

    private struct State {
        var watch: ChildWatch?
        var ended = false
        /// When each guardian was started, the last ``Guardianship/restartLimit`` of them.
        var starts: [BootInstant] = []
    }

    init(paths: StorePaths, link: GuardianLink, keeper: LiveSessionKeeper,
         news: @escaping @Sendable (_ what: String, _ message: String) -> Void) {
        self.paths = paths
        self.link = link
        self.keeper = keeper
        self.news = news
    }

    /// Starts the first guardian; false when none could be started.
    func start() -> Bool {
        startGuardian() != nil
    }

    /// The nap is over: a guardian that dies from now on is not replaced.
    func stop() {
        state.withLock { $0.ended = true }
        // A replacement under way finishes first; then the watch is the last guardian's.
        let watch = replacing.withLock { _ in state.withLock { $0.watch } }
        watch?.stop()
    }

    /// Starts a guardian, names it in the live state, tells it what to watch, and watches it.
    private func startGuardian() -> Int32? {
        guard let guardian = Guardian.start(paths: paths) else { return nil }
        link.attach(guardian.watch)
        keeper.setGuardian(guardian.pid)
        // A short name: a thread's is at most 15 bytes, and `snoozefuse-guar…` is the guardian's own.
        let watch = ChildWatch(pid: guardian.pid, name: "sf-guardwatch") { [weak self] status in
            self?.guardianEnded(guardian.pid, status: status)
        }
        let ended = state.withLock { state in
            state.starts = (state.starts + [BootInstant.now]).suffix(Self.restartLimit)
            state.watch = watch
            return state.ended
        }
        if ended { watch?.stop() }
        if watch == nil {
            news("unwatched", "the nap cannot watch its guardian (pid \(guardian.pid)): the kernel gave no pidfd for it (Linux 5.3 or later has them) or no thread could be started; it guards the nap, but if it dies no new one is started")
        }
        return guardian.pid
    }

    private func guardianEnded(_ pid: Int32, status: Int32?) {
        replacing.withLock { _ in replace(pid, status: status) }
    }

    private func replace(_ pid: Int32, status: Int32?) {
        let how = status.map(ProcessSpawn.describe) ?? "ended"
        let (ended, keepsDying) = state.withLock { state in
            let window = BootInstant.now.advanced(by: .zero - Self.restartWindow)
            return (state.ended, state.starts.count >= Self.restartLimit && state.starts.allSatisfy { $0 >= window })
        }
        guard !ended else { return }
        // The live state goes on naming the dead guardian until another is named: `status` sees
        // by its lock that it is gone (unguarded), without a write of the state for the moment.
        if keepsDying {
            keeper.setGuardian(nil)
            news("unguarded", "the nap's guardian (pid \(pid)) \(how), the \(Self.restartLimit)th within \(Self.restartWindow.compactDescription): no new one is started; if this process dies, nothing rings its alarm (`snoozefuse doctor` checks the guardian)")
            return
        }
        if let replacement = startGuardian() {
            news("replaced", "the nap's guardian (pid \(pid)) \(how); a new one (pid \(replacement)) rings the alarm if this process dies")
        } else {
            keeper.setGuardian(nil)
            news("unguarded", "the nap's guardian (pid \(pid)) \(how) and no new one could be started: if this process dies, nothing rings its alarm")
        }
    }
}

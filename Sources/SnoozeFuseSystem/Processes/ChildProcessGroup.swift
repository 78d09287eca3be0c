import Glibc

/// A child process that leads a process group of its own, with a reaper: a thread of its own waits
/// for the child to end (no polling), kills whatever is left of its group, and only then reaps it.
/// Until it is reaped the child's process id (and so its group's id) cannot be given to another
/// process, so ``signalGroup(_:)`` can never hit a stranger, and nothing the child started in its
/// group outlives it.
///
/// The child is created by the process's spawning thread (``ProcessSpawn/Creator/processThread``),
/// so a child that asks for a parent-death signal (``ProcessSpawn/dieWithParent(_:)``) dies with
/// this process, not with the thread that happened to start it.
public final class ChildProcessGroup: Sendable {
    public let pid: Int32
    /// Whether the leader has been reaped (its id may then belong to someone else).
    private let reaped = Flag()
    private final class Flag: Sendable {
        let value = Locked(false)
    }
    /// The reaper: its value is the `waitpid` status.
    private let reaper: BoundedCall<Int32>
    /// What the child left behind (detached: a double fork, `setsid`) and the reaper ended.
    private let leftovers = Leftovers()
    private final class Leftovers: Sendable {
        let value = Locked<[AdoptedProcesses.Ended]>([])
    }

    /// The environment variable that marks everything a child starts, for ``AdoptedProcesses``.
    public static let markName = "SNOOZEFUSE_CHILD_RUN"

    /// What of this process's adopted children counts as the child's leftovers once it has ended.
    public enum LeftoverRule: Sendable {
        /// Those that carry its mark in their environment (a process that empties its environment
        /// escapes it): for a process with other children of its own (a nap: its guardian, hooks).
        case marked
        /// Every child of this process: for a program that runs one such child at a time and has
        /// no other (`plugins check`), where nothing a child detaches escapes.
        case everyChild
    }

    /// Starts `executable arguments…` in a process group of its own. `onEnd` is called once, on
    /// the reaper's thread, with the wait status after the group has been killed and the child reaped.
    ///
    /// The child and all it starts carry a mark of this child in their environment; whatever of
    /// that this process has adopted when the child has ended is ended too (``leftBehind`` names
    /// it). Adopting is the program's own choice, made once (``AdoptedProcesses/adoptOrphans()``:
    /// it changes where every orphan of its descendants goes).
    public init(_ executable: String, _ arguments: [String], descriptors: [Int32: ProcessSpawn.Descriptor],
                environment: [String: String]? = nil, leftovers rule: LeftoverRule = .marked,
                onEnd: (@Sendable (Int32) -> Void)? = nil) throws(SpawnError) {
        let token = "\(getpid())-\(UInt64.random(in: 1 ... .max))"
        var marked = environment ?? ProcessSpawn.currentEnvironment()
        marked[Self.markName] = token
        let mark = "\(Self.markName)=\(token)"
        let pid = try ProcessSpawn.start(executable, arguments, descriptors: descriptors, grouping: .ownProcessGroup,
                                         environment: marked, creator: .processThread)
        let reaped = reaped, leftovers = leftovers
        self.pid = pid
        reaper = BoundedCall.start(named: "snoozefuse-reap") {
            var info = siginfo_t()
            // Wait for the end without reaping: the id stays ours while the group is killed.
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
            let status = reaped.value.withLock { reaped -> Int32 in
                _ = kill(-pid, SIGKILL)
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                reaped = true
                return status
            }
            let left = switch rule {
            case .marked: AdoptedProcesses.end(marked: mark)
            case .everyChild: AdoptedProcesses.endEveryChild()
            }
            leftovers.value.withLock { $0 = left }
            onEnd?(status)
            return status
        }
    }

    /// Sends `signal` to every process of the group, unless the child has already been reaped.
    public func signalGroup(_ signal: Int32 = 9 /* SIGKILL */) {
        reaped.value.withLock { reaped in
            if !reaped { _ = kill(-pid, signal) }
        }
    }

    /// What the child left running when it ended (detached from its group) and was then ended;
    /// known once ``status`` is.
    public var leftBehind: [AdoptedProcesses.Ended] { leftovers.value.withLock { $0 } }

    /// The wait status once the child has ended and been reaped (see ``ProcessSpawn/describe(_:)``).
    public var status: Int32? { reaper.result }

    /// Waits at most `limit` (CLOCK_BOOTTIME) for the child's end; its wait status, or nil.
    /// For threads of their own, never an event loop's.
    public func waitForEnd(atMost limit: Duration) -> Int32? {
        reaper.wait(atMost: limit)
    }

    /// Waits in a task for the child's end, at most `limit` on `clock`; its wait status, or nil.
    public func waitForEnd(atMost limit: Duration, on clock: BootClock) async -> Int32? {
        await reaper.value(waitingAtMost: limit, on: clock)
    }

    /// Kills the whole group (SIGKILL) and waits at most `limit` for the reaper; the wait status.
    @discardableResult
    public func terminate(waitingAtMost limit: Duration = .seconds(5)) -> Int32? {
        signalGroup(SIGKILL)
        return waitForEnd(atMost: limit)
    }
}

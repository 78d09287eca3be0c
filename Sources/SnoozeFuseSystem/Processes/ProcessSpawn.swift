import CLinux
import Glibc

/// The one way this program starts another: `posix_spawn` with the child's standard descriptors
/// given explicitly (every other descriptor of this process is close-on-exec), default signal
/// handling and an empty signal mask (whatever this process blocks or ignores), and optionally a
/// process group or a session of its own.
public enum ProcessSpawn {
    /// What the child's descriptor is.
    public enum Descriptor: Sendable, Hashable {
        /// A descriptor of this process, duplicated into the child.
        case inherit(Int32)
        /// `/dev/null`, for reading or writing.
        case devNull
    }

    /// Where the child lives.
    public enum Grouping: Sendable, Hashable {
        /// In this process's session and process group.
        case same
        /// In a process group of its own (Ctrl-C on the terminal reaches only this process).
        case ownProcessGroup
        /// In a session of its own (`setsid`): no controlling terminal, so nothing that happens to
        /// this process's terminal (a hang-up) reaches it.
        case ownSession
    }

    /// Which thread creates the child. Linux sends a child's parent-death signal
    /// (`PR_SET_PDEATHSIG`, see ``dieWithParent(_:)``) when the *thread* that created it ends, not
    /// when the process does: a child created by a thread that finishes (a bounded call's, a test's)
    /// would be killed long before this process ends.
    public enum Creator: Sendable, Hashable {
        /// The calling thread.
        case callingThread
        /// This process's spawning thread, started the first time it is needed and never stopped:
        /// a child that asks for a parent-death signal gets it when this process ends, whichever
        /// thread started it.
        case processThread
    }

    /// Starts `executable` with `arguments` (without the program name) and returns its PID.
    /// - Parameters:
    ///   - descriptors: the child's descriptors by number (0, 1, 2 and any others).
    ///   - environment: the child's environment (this process's when nil).
    ///   - creator: the thread that creates the child (see ``Creator``).
    ///   - programName: its `argv[0]` and its name in a ``SpawnError`` (`executable` when nil).
    /// - Throws: the errno of `posix_spawn`.
    public static func start(_ executable: String, _ arguments: [String], descriptors: [Int32: Descriptor],
                             grouping: Grouping = .same, environment: [String: String]? = nil,
                             creator: Creator = .callingThread, programName: String? = nil) throws(SpawnError) -> Int32 {
        if creator == .processThread, let thread = SpawningThread.shared {
            let result = thread.run { () -> Result<Int32, SpawnError> in
                do throws(SpawnError) {
                    return .success(try start(executable, arguments, descriptors: descriptors, grouping: grouping, environment: environment,
                                              programName: programName))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, descriptor) in descriptors.sorted(by: { $0.key < $1.key }) {
            switch descriptor {
            case .inherit(let parent): posix_spawn_file_actions_adddup2(&actions, parent, number)
            case .devNull: posix_spawn_file_actions_addopen(&actions, number, "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        // The child gets these descriptors and no other: one the parent got without close-on-exec
        // (from a library, or from whoever started it) would otherwise live on in the child, and
        // in a guardian for as long as it rings.
        _ = snoozefuse_spawn_close_from(&actions, Int32(max(descriptors.keys.max() ?? 2, 2) + 1))
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        switch grouping {
        case .same: break
        case .ownProcessGroup:
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int16(POSIX_SPAWN_SETPGROUP)
        case .ownSession:
            flags |= snoozefuse_posix_spawn_setsid
        }
        posix_spawnattr_setflags(&attributes, flags)
        let argv: [UnsafeMutablePointer<CChar>?] = ([programName ?? executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var spawned: pid_t = 0
        let status = envp.map { posix_spawn(&spawned, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&spawned, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw SpawnError(executable: programName ?? executable, code: status) }
        return spawned
    }

    /// This process's environment, as `NAME: VALUE` (the first of a name that appears twice).
    /// What the short commands read their folders from: Foundation's `ProcessInfo.environment`
    /// splits each entry by characters, 0.4 M instructions of `status` (issue 23); this splits
    /// the bytes.
    public static func currentEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self)
                if environment[name] == nil {
                    environment[name] = String(decoding: UnsafeBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self)
                }
            }
            entry += 1
        }
        return environment
    }

    /// The variables `names` of this process's environment, those that are set (the first of a
    /// name set twice, as ``currentEnvironment()``), read one by one: for a command that needs
    /// only these, without reading every variable into a dictionary.
    public static func currentEnvironment(only names: [String]) -> [String: String] {
        var environment: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// Waits for child `pid` to end, at most `limit` (on CLOCK_BOOTTIME), and reaps it. Returns its
    /// `waitpid` status, or nil when it is still running after `limit` (it is then left as it is).
    /// Sleeps in `poll` on a pidfd (no busy waiting); where the kernel has no pidfd, looks every 20 ms.
    /// Blocking: for threads of their own.
    public static func wait(for pid: Int32, atMost limit: Duration) -> Int32? {
        let deadline = BootInstant.now.advanced(by: limit)
        let pidfd = snoozefuse_pidfd_open(pid)
        defer { if pidfd >= 0 { _ = close(pidfd) } }
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return status }
            if reaped < 0 && errno != EINTR { return nil } // not our child (any more): nothing to wait for
            let now = BootInstant.now
            guard now < deadline else { return nil }
            let left = now.duration(to: deadline)
            var milliseconds = left.pollMilliseconds
            if pidfd < 0 { milliseconds = min(milliseconds, 20) }
            var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, pidfd >= 0 ? 1 : 0, milliseconds) // EINTR or a timeout: look again
        }
    }

    /// Kills the process group that child `pid` leads (started with ``Grouping/ownProcessGroup``),
    /// so that what it started ends too, and reaps the child, waiting at most `limit` (a process in
    /// uninterruptible sleep dies only when its I/O ends). Returns whether it was reaped.
    @discardableResult
    public static func killGroup(of pid: Int32, waitingAtMost limit: Duration = .seconds(2)) -> Bool {
        _ = kill(-pid, SIGKILL)
        return wait(for: pid, atMost: limit) != nil
    }

    /// Asks the kernel to end this process with SIGKILL when its parent ends (`PR_SET_PDEATHSIG`),
    /// then checks that the parent is still `parent` (it may have ended before the request).
    /// For a child program to call first thing; its parent creates it with ``Creator/processThread``.
    /// - Returns: nil, or the errno that says why not (`ESRCH`: the parent is already gone).
    public static func dieWithParent(_ parent: Int32) -> Int32? {
        snoozefuse_die_with_parent(parent) == 0 ? nil : errno
    }

    /// How a child that ended did (`exited with status 3`, `killed by signal 11 (Segmentation fault)`),
    /// from the status `waitpid` gave.
    public static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
        let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
        return "killed by signal \(signal) (\(name))"
    }
}

/// A program could not be started.
public struct SpawnError: Error, Sendable, Hashable, CustomStringConvertible {
    public var executable: String
    /// The errno of `posix_spawn`.
    public var code: Int32

    public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
}

/// The thread behind ``ProcessSpawn/Creator/processThread``: it runs each spawn handed to it and
/// waits for the next, for as long as the process lives. One per process by nature (a parent-death
/// signal belongs to the thread that created the child), hence the one static; nothing else is
/// kept in it.
private final class SpawningThread: Sendable {
    /// Nil only when the system refuses a thread or an eventfd: then children are created by the
    /// calling thread, as before.
    static let shared: SpawningThread? = SpawningThread()

    private let jobs = Locked<[@Sendable () -> Void]>([])
    private let wake: Int32

    private init?() {
        wake = eventfd(0, Int32(EFD_CLOEXEC))
        guard wake >= 0 else { return nil }
        guard SystemThread.start(named: "snoozefuse-spawn", { [self] in serve() }) else {
            close(wake)
            return nil
        }
    }

    /// Runs `body` on the spawning thread and waits for its value.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = eventfd(0, Int32(EFD_CLOEXEC))
        defer { if done >= 0 { close(done) } }
        let value = Locked<T?>(nil)
        jobs.withLock {
            $0.append {
                let result = body()
                value.withLock { $0 = result }
                if done >= 0 { signalEventDescriptor(done) }
            }
        }
        signalEventDescriptor(wake)
        while true {
            if let result = value.withLock({ $0 }) { return result }
            if done >= 0 { _ = waitReadable(done, until: nil) } else { usleep(1000) }
        }
    }

    private func serve() {
        while true {
            _ = waitReadable(wake, until: nil)
            drainCounter(wake)
            let taken = jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in taken { job() }
        }
    }
}

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

    /// Starts `executable` with `arguments` (without the program name) and returns its PID.
    /// - Parameters:
    ///   - descriptors: the child's descriptors by number (0, 1, 2 and any others).
    ///   - environment: the child's environment (this process's when nil).
    /// - Throws: the errno of `posix_spawn`.
    public static func start(_ executable: String, _ arguments: [String], descriptors: [Int32: Descriptor],
                             grouping: Grouping = .same, environment: [String: String]? = nil) throws(SpawnError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, descriptor) in descriptors.sorted(by: { $0.key < $1.key }) {
            switch descriptor {
            case .inherit(let parent): posix_spawn_file_actions_adddup2(&actions, parent, number)
            case .devNull: posix_spawn_file_actions_addopen(&actions, number, "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
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
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var spawned: pid_t = 0
        let status = envp.map { posix_spawn(&spawned, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&spawned, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw SpawnError(executable: executable, code: status) }
        return spawned
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
            var milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            if pidfd < 0 { milliseconds = min(milliseconds, 20) }
            var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, pidfd >= 0 ? 1 : 0, milliseconds) // EINTR or a timeout: look again
        }
    }

    /// Kills the process group that child `pid` leads (started with ``Grouping/ownProcessGroup``),
    /// so that what it started ends too, and reaps the child.
    public static func killGroup(of pid: Int32) {
        _ = kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
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

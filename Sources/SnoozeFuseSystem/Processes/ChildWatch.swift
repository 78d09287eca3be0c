import CLinux
import Glibc

/// Watches a child process from a thread of its own that sleeps on the child's pidfd: no wake-up
/// until the child ends. Then the thread reaps it (no zombie is left) and calls `ended` with its
/// `waitpid` status (nil when it was not this process's to reap: already reaped, or not its
/// child). ``stop()`` ends the watch and leaves the child as it is.
public final class ChildWatch: Sendable {
    /// The child watched.
    public let pid: Int32
    private let shared: Shared

    /// What the watching thread and ``stop()`` share.
    private final class Shared: Sendable {
        let bell: EventBell
        let stopped = Locked(false)

        init(bell: EventBell) {
            self.bell = bell
        }

        var isStopped: Bool { stopped.withLock { $0 } }
    }

    /// Starts watching child `pid` on a thread named `name`. Nil when the kernel gives no pidfd
    /// for it (Linux before 5.3, or no such process) or no thread can be started.
    public init?(pid: Int32, name: String, ended: @escaping @Sendable (_ status: Int32?) -> Void) {
        let pidfd = snoozefuse_pidfd_open(pid)
        guard pidfd >= 0 else { return nil }
        guard let bell = EventBell() else {
            close(pidfd)
            return nil
        }
        self.pid = pid
        let shared = Shared(bell: bell)
        self.shared = shared
        let started = SystemThread.start(named: name) {
            defer { close(pidfd) }
            while true {
                // The bell rang: the watch is over. Else the pidfd is readable: the child ended.
                if shared.bell.wait(orReadable: pidfd) || shared.isStopped { return }
                var status: Int32 = 0
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == 0 {
                    // Woken by a poll error, not the child's end: look again a little later.
                    usleep(100_000)
                    continue
                }
                if reaped < 0, errno == EINTR { continue }
                if shared.isStopped { return }
                ended(reaped == pid ? status : nil)
                return
            }
        }
        guard started else {
            close(pidfd)
            return nil
        }
    }

    /// Ends the watch: `ended` is not called after this returns, unless it was already running.
    public func stop() {
        shared.stopped.withLock { $0 = true }
        shared.bell.ring()
    }
}

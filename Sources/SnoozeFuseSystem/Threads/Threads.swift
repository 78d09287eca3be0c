import CLinux
import Glibc

/// The one way this program starts a thread of its own: a detached pthread that names itself
/// first (as `ps -L`, `top -H` and `/proc/PID/task/*/comm` show it; at most 15 bytes are kept),
/// so a hung call or a busy thread is always recognisable.
///
/// Never Swift's cooperative pool and never Foundation's `Thread` (whose `name` does not reach the
/// kernel on Linux, so a new thread would carry its parent's name).
public enum SystemThread {
    /// Runs `body` on a new detached thread named `name`.
    /// - Returns: `false` when the system refuses to create a thread (then `body` never runs).
    @discardableResult
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let payload = Unmanaged.passRetained(Payload(name: name, body: body))
        var thread = pthread_t()
        guard pthread_create(&thread, nil, threadEntry, payload.toOpaque()) == 0 else {
            payload.release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Names the calling thread.
    public static func nameCurrent(_ name: String) {
        _ = snoozefuse_name_current_thread(String(decoding: name.utf8.prefix(15), as: UTF8.self))
    }

    /// Blocks the calling thread until `instant` on CLOCK_BOOTTIME (`clock_nanosleep`, absolute),
    /// in slices of at most 50 ms so that `stop` is noticed soon. Returns `false` when `stop` said so
    /// first. For threads of their own (the audio thread), never for an event loop's.
    public static func sleep(until instant: BootInstant, unless stop: () -> Bool) -> Bool {
        while !stop() {
            let now = BootInstant.now
            if now >= instant { return true }
            var wake = min(now.advanced(by: .milliseconds(50)), instant).absoluteTimespec
            _ = clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &wake, nil) // EINTR: loop and go on
        }
        return false
    }

    /// Moves the calling thread (never the whole process) to the real-time policy SCHED_FIFO at
    /// `priority`, so that a machine busy with ordinary work cannot hold it back: the thread runs
    /// as soon as its timer fires. Whatever it starts does not inherit the policy
    /// (SCHED_RESET_ON_FORK). A thread that spins cannot take the machine: the kernel keeps 5 % of
    /// every second for ordinary threads (`sched_rt_runtime_us`).
    /// - Returns: what the thread runs at now (the reason when the system refused).
    public static func makeCurrentRealtime(priority: Int32) -> ThreadPriority {
        let code = snoozefuse_make_current_thread_fifo(priority)
        return code == 0 ? .realtime(priority) : .normal(refused: code, asked: priority)
    }

    /// Returns the calling thread to the ordinary policy (SCHED_OTHER), as after
    /// ``makeCurrentRealtime(priority:)``. Going down needs no privilege.
    public static func makeCurrentOrdinary() {
        _ = snoozefuse_make_current_thread_ordinary()
    }

    /// The kernel's name of the calling thread.
    public static var currentName: String {
        var buffer = [CChar](repeating: 0, count: 32)
        let handle = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard handle >= 0 else { return "" }
        defer { close(handle) }
        let count = read(handle, &buffer, buffer.count - 1)
        guard count > 0 else { return "" }
        return String(decoding: buffer[0 ..< count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: "\n")
    }

    /// The closure and name on their way to the new thread.
    fileprivate final class Payload: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// The scheduling a thread asked for and what it got (``SystemThread/makeCurrentRealtime(priority:)``).
public enum ThreadPriority: Sendable, Hashable, CustomStringConvertible {
    /// SCHED_FIFO at this priority.
    case realtime(Int32)
    /// The ordinary policy: the system refused real-time scheduling with this errno.
    case normal(refused: Int32, asked: Int32)

    public var isRealtime: Bool {
        if case .realtime = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .realtime(let priority):
            return "realtime (SCHED_FIFO \(priority))"
        case .normal(let code, let asked):
            let reason = strerror(code).map { String(cString: $0) } ?? "error \(code)"
            return "normal priority: the system refused real-time scheduling (\(reason)); "
                + "a real-time priority limit of at least \(asked) allows it "
                + "(limits.conf: `@audio - rtprio \(asked)` for a member of audio, or LimitRTPRIO=\(asked) in a systemd unit)"
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in characters: String) -> String {
        var text = Substring(self)
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}

/// Where every thread of ``SystemThread`` begins: names itself, then runs its closure.
private func threadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    let payload = Unmanaged<SystemThread.Payload>.fromOpaque(raw).takeRetainedValue()
    SystemThread.nameCurrent(payload.name)
    payload.body()
    return nil
}

import CLinux
import Foundation
import Synchronization

/// A clock on CLOCK_BOOTTIME: it keeps counting while the machine is suspended, so a deadline
/// that passed during a suspend is due at once on resume (SPEC §2, §7). Same time base as Swift's
/// `ContinuousClock` on Linux.
///
/// Sleeping does not go through the concurrency runtime's timers, which wake the process about
/// once a second even while it waits for a deadline minutes away. Instead one thread per clock
/// blocks in `poll` on a timerfd armed with the earliest absolute deadline, so a process waiting
/// for its alarm does not wake at all until then, and wakes within microseconds of it.
public struct BootTimeClock: Clock {
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since boot, including time spent suspended.
        public var sinceBoot: Duration

        public init(sinceBoot: Duration) { self.sinceBoot = sinceBoot }

        public func advanced(by duration: Duration) -> Instant { Instant(sinceBoot: sinceBoot + duration) }
        public func duration(to other: Instant) -> Duration { other.sinceBoot - sinceBoot }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceBoot < rhs.sinceBoot }
        public var description: String { "boot+\(sinceBoot)" }
    }

    private let timers: TimerThread

    public init() {
        timers = TimerThread()
    }

    public var now: Instant { Self.readNow() }

    static func readNow() -> Instant {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Instant(sinceBoot: .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec))
    }

    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        if deadline <= now {
            try Task.checkCancellation()
            return
        }
        guard timers.isAvailable else {
            // No timerfd (a restricted sandbox): the runtime's own timers, on the same time base.
            try await ContinuousClock().sleep(for: now.duration(to: deadline))
            return
        }
        try await timers.sleep(until: deadline)
    }
}

/// The thread behind ``BootTimeClock``: sleepers in a list, a timerfd armed (absolute, on
/// CLOCK_BOOTTIME) for the earliest of them, and an eventfd to tell the thread the list changed.
///
/// The thread, once started, lives as long as the process (a program makes one clock), so its
/// descriptors are never closed.
///
/// `@unchecked Sendable`: all mutable state is inside `state` (a `Mutex`); the file descriptors
/// are created once in `init` and never change.
private final class TimerThread: @unchecked Sendable {
    private struct Sleeper {
        var id: UInt64
        var deadline: BootTimeClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        var threadStarted = false
    }

    private let state = Mutex(State())
    private let timerDescriptor: Int32
    private let wakeDescriptor: Int32

    init() {
        timerDescriptor = timerfd_create(CLOCK_BOOTTIME, Int32(TFD_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC))
    }

    deinit {
        // Reached only when the thread never started (it holds a strong reference while it runs).
        if timerDescriptor >= 0 { close(timerDescriptor) }
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
    }

    /// Whether the timerfd and eventfd exist (they do on every kernel since 3.15).
    var isAvailable: Bool { timerDescriptor >= 0 && wakeDescriptor >= 0 }

    func sleep(until deadline: BootTimeClock.Instant) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let accepted = state.withLock { state -> Bool in
                    guard !Task.isCancelled else { return false }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return true
                }
                guard accepted else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                startThreadIfNeeded()
                poke()
            }
        } onCancel: {
            let removed = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            if let removed {
                removed.continuation.resume(throwing: CancellationError())
                poke()
            }
        }
    }

    private func startThreadIfNeeded() {
        let start = state.withLock { state -> Bool in
            defer { state.threadStarted = true }
            return !state.threadStarted
        }
        guard start else { return }
        let thread = Thread { [self] in
            nameCurrentThread("snoozefuse-time")
            run()
        }
        thread.start()
    }

    /// Tells the thread the list of sleepers changed.
    private func poke() {
        guard wakeDescriptor >= 0 else { return }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeDescriptor, $0.baseAddress, 8) }
    }

    private func run() {
        var fds = [
            pollfd(fd: timerDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        var scratch: UInt64 = 0
        while true {
            resumeDueSleepers()
            armTimer()
            // poll fails only on EINTR, or on errors (EFAULT, EINVAL, ENOMEM) that say nothing about
            // the deadlines: the loop goes on either way, because a timer thread that gave up would
            // leave every sleeper (the alarm among them) waiting forever.
            if poll(&fds, 2, -1) < 0 { continue }
            if fds[0].revents != 0 { _ = read(timerDescriptor, &scratch, 8) }
            if fds[1].revents != 0 { _ = read(wakeDescriptor, &scratch, 8) }
        }
    }

    private func resumeDueSleepers() {
        let now = BootTimeClock.readNow()
        let due = state.withLock { state -> [Sleeper] in
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due.sorted(by: { $0.deadline < $1.deadline }) { sleeper.continuation.resume() }
    }

    private func armTimer() {
        let next = state.withLock { $0.sleepers.map(\.deadline).min() }
        var setting = itimerspec()
        if let next {
            setting.it_value = Self.timespec(for: next)
            // A zero it_value disarms; a deadline at boot time zero cannot be in the future anyway.
            if setting.it_value.tv_sec == 0 && setting.it_value.tv_nsec == 0 { setting.it_value.tv_nsec = 1 }
        }
        timerfd_settime(timerDescriptor, Int32(TFD_TIMER_ABSTIME), &setting, nil)
    }

    private static func timespec(for instant: BootTimeClock.Instant) -> timespec {
        let parts = instant.sinceBoot.components
        return Glibc.timespec(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
    }
}


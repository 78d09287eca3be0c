import CLinux
import Glibc

/// One thread that is both the task executor of a process's work and the keeper of its timers, as
/// swift-nio's `EventLoop` is both an executor and a scheduler.
///
/// The thread runs the jobs queued for it; when none are left it sleeps in `poll` on two
/// descriptors: a timerfd armed (absolute, on CLOCK_BOOTTIME) for the earliest sleeper of its
/// ``clock``, and an eventfd that a new job rings. A process whose work runs here wakes exactly
/// when a deadline passes or something happens, never in between: no periodic ticks, no pool
/// monitor (Swift's global executor starts libdispatch's, which wakes every second once the first
/// job has run), and a sleeper that wakes continues on the same thread that fired its timer.
///
/// Tasks run here when created with `Task(executorPreference: loop)`; `async let`, task groups and
/// actors called from them follow that preference. The loop lives as long as the process (its
/// thread holds it), so its descriptors are never closed.
///
/// `@unchecked Sendable`: every mutable field is inside `state` (a `Locked`); the descriptors are
/// created once in `init` and never change.
public final class EventLoop: TaskExecutor, @unchecked Sendable {
    /// The thread's name.
    public let name: String
    private let state = Locked(State())
    private let timerDescriptor: Int32
    private let wakeDescriptor: Int32

    private struct Sleeper {
        var id: UInt64
        var deadline: BootInstant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var jobs: [UnownedJob] = []
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// The deadline the timerfd is armed for.
        var armed: BootInstant?
        /// The thread is in (or about to enter) `poll`: a new job must ring the eventfd.
        var polling = false
        /// The eventfd was rung since the thread last left `poll`.
        var rung = false
    }

    /// Starts the loop's thread, named `name`.
    public init(name: String) {
        self.name = name
        timerDescriptor = timerfd_create(CLOCK_BOOTTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        // Without a thread nothing would ever run or wake: that is a broken system, not a user's
        // problem to route around, and there is no alarm without it.
        precondition(timerDescriptor >= 0 && wakeDescriptor >= 0, "timerfd/eventfd unavailable (Linux 2.6.27 or later is required)")
        let started = SystemThread.start(named: name) { [self] in run() }
        precondition(started, "cannot start the event loop thread \(name)")
    }

    /// The clock whose sleeps are this loop's timers.
    public var clock: BootClock { BootClock(loop: self) }

    // MARK: - Executor

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let ring = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.polling, !state.rung else { return false }
            state.rung = true
            return true
        }
        if ring { signalEventDescriptor(wakeDescriptor) }
    }

    /// Runs `operation` as a task on this loop and blocks the calling thread until it ends: for a
    /// program's synchronous entry point, so that no work ever reaches Swift's global executor.
    /// Never call it on the loop's own thread.
    public func runBlocking<T: Sendable>(_ operation: sending @escaping () async throws -> T) throws -> T {
        let done = eventfd(0, Int32(EFD_CLOEXEC))
        precondition(done >= 0, "eventfd unavailable")
        defer { close(done) }
        let result = Locked<Result<T, any Error>?>(nil)
        Task(executorPreference: self) {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            signalEventDescriptor(done)
        }
        drainCounter(done)
        // The task stored its result before it rang.
        return try result.withLock { $0! }.get()
    }

    // MARK: - Timers

    /// Suspends until `deadline` (on CLOCK_BOOTTIME) has passed; throws `CancellationError` when the
    /// calling task is cancelled first.
    func sleep(until deadline: BootInstant) async throws {
        if deadline <= .now {
            try Task.checkCancellation()
            return
        }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let accepted = state.withLock { state -> Bool in
                    guard !Task.isCancelled else { return false }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    if state.armed.map({ deadline < $0 }) ?? true { arm(&state, for: deadline) }
                    return true
                }
                if !accepted { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let removed = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                let removed = state.sleepers.remove(at: index)
                // Left armed for a sleeper that is gone, the loop would wake for nothing.
                if state.armed == removed.deadline { arm(&state, for: state.sleepers.map(\.deadline).min()) }
                return removed
            }
            removed?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many tasks sleep on this loop's clock (for tests that prove nothing is left waiting).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Arms the timerfd for `deadline` (disarms it for `nil`). Called with the lock held.
    private func arm(_ state: inout State, for deadline: BootInstant?) {
        state.armed = deadline
        var setting = itimerspec()
        if let deadline {
            setting.it_value = deadline.absoluteTimespec
            // A zero it_value disarms; a deadline at boot time zero is long past anyway.
            if setting.it_value.tv_sec == 0 && setting.it_value.tv_nsec == 0 { setting.it_value.tv_nsec = 1 }
        }
        timerfd_settime(timerDescriptor, Int32(TFD_TIMER_ABSTIME), &setting, nil)
    }

    // MARK: - The thread

    private func run() {
        var descriptors = [
            pollfd(fd: timerDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        let executor = asUnownedTaskExecutor()
        while true {
            let jobs = state.withLock { state -> [UnownedJob] in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return state.jobs
            }
            for job in jobs { job.runSynchronously(on: executor) }
            if !jobs.isEmpty { continue }
            let due = takeDueSleepers()
            if !due.isEmpty {
                for sleeper in due { sleeper.continuation.resume() }
                continue
            }
            let idle = state.withLock { state -> Bool in
                guard state.jobs.isEmpty else { return false }
                state.polling = true
                return true
            }
            guard idle else { continue }
            // poll fails only on EINTR, or on errors (EFAULT, EINVAL, ENOMEM) that say nothing about
            // the work: the loop goes on either way, because a loop that gave up would leave every
            // sleeper (the alarm among them) waiting for ever.
            _ = poll(&descriptors, 2, -1)
            state.withLock { state in
                state.polling = false
                state.rung = false
            }
            if descriptors[0].revents != 0 { drainCounter(timerDescriptor) }
            if descriptors[1].revents != 0 { drainCounter(wakeDescriptor) }
        }
    }

    /// Removes the sleepers whose deadline has passed (earliest first) and arms the timer for the
    /// next one.
    private func takeDueSleepers() -> [Sleeper] {
        let now = BootInstant.now
        return state.withLock { state -> [Sleeper] in
            guard state.sleepers.contains(where: { $0.deadline <= now }) else {
                // Woken by a timer whose sleeper is gone, or early: keep the timer right.
                let next = state.sleepers.map(\.deadline).min()
                if next != state.armed || (next.map { $0 <= now } ?? false) { arm(&state, for: next) }
                return []
            }
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            arm(&state, for: state.sleepers.map(\.deadline).min())
            return due
        }
    }
}

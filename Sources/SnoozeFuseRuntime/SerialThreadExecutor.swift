import Foundation

/// A task executor with one thread of its own that sleeps on a condition variable whenever it has
/// nothing to run.
///
/// Why it exists: on Linux, the default global executor runs on libdispatch's worker pool, and
/// libdispatch starts a pool monitor that wakes the process every second, forever, as soon as the
/// first worker runs. A napping process must not wake at all until its deadline (SPEC §8: at most
/// 0.05 wake-ups per second with `--quiet`), so the CLI runs its commands on this executor and
/// passes it as the preference for the tasks it creates; `async let`, task groups and actors
/// called from those tasks follow the preference.
///
/// `@unchecked Sendable`: the job queue is only touched under `condition`'s lock.
public final class SerialThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    /// Starts the executor's thread, named `name` (as `ps -L` and `/proc/PID/task/*/comm` show it;
    /// at most 15 bytes are kept).
    public init(name: String = "snoozefuse-exec") {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            runJobs()
        }
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Runs `operation` as a task on this executor and blocks the calling thread until it ends.
    /// For a program's synchronous entry point, so that no work ever reaches the global executor.
    public func runBlocking<T: Sendable>(_ operation: sending @escaping () async throws -> T) throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Task(executorPreference: self) {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            finished.signal()
        }
        finished.wait()
        // The task stored a result before it signalled.
        return try result.withLock { $0! }.get()
    }
}

import Synchronization

/// Gives the calling thread a kernel name (at most 15 bytes), as `ps -L`, `top -H` and
/// `/proc/PID/task/*/comm` show it. Foundation's `Thread.name` does not set it on Linux, and a new
/// thread otherwise inherits the name of the thread that started it.
func nameCurrentThread(_ name: String) {
    let handle = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard handle >= 0 else { return }
    writeAll(String(decoding: name.utf8.prefix(15), as: UTF8.self), to: handle)
    close(handle)
}

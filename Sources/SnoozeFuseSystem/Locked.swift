import Glibc

/// A value behind a lock: the one lock of this package's code (Synchronization's `Mutex` has the
/// same shape), a POSIX mutex with priority inheritance, so that a real-time thread (the audio
/// thread) waiting for it lends its priority to the holder.
///
/// Why not `Mutex`: it takes its lock inside the standard library, which no sanitizer build
/// instruments, so under `-sanitize=thread` every access made under one is reported as a race (on
/// Linux). ThreadSanitizer knows `pthread_mutex_lock` and `pthread_mutex_unlock` (it intercepts
/// them), so with `Locked` it sees the critical sections ordered and reports only real races.
/// Uncontended, locking is an atomic exchange in user space, as `Mutex`'s is.
public struct Locked<Value>: ~Copyable, @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    public init(_ initial: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while the lock is held (see `Mutex.withLock`).
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

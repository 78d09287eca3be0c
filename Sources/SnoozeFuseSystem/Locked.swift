import CLinux
import Synchronization

/// A value behind a lock: Synchronization's `Mutex`, which also tells ThreadSanitizer that the
/// critical sections are ordered.
///
/// `Mutex` takes its lock inside the standard library, which no sanitizer build instruments, so
/// under `-sanitize=thread` every access made under one is reported as a race (on Linux). `Locked`
/// announces the lock's hand-over to TSan (acquire once held, release before letting go) on the
/// value's own address; without TSan's runtime those calls are a test of a null pointer.
/// Use it wherever a `Mutex` would do.
public struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value while the lock is held (see `Mutex.withLock`).
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            let address = withUnsafeMutablePointer(to: &value) { UnsafeMutableRawPointer($0) }
            snoozefuse_sanitizer_acquire(address)
            defer { snoozefuse_sanitizer_release(address) }
            return try body(&value)
        }
    }
}

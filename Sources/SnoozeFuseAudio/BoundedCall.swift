import Foundation

/// A blocking call that may never return (alsa-lib waiting on a sound server that does not
/// answer), run on a thread of its own so that the caller can stop waiting.
enum BoundedCall {
    /// Runs `body` on a new thread named `name` and waits at most `limit` for its value: `nil` when
    /// it has not returned by then. The thread is left to finish, or to hang, on its own.
    static func run<T: Sendable>(named name: String, waitingAtMost limit: Duration,
                                 _ body: @escaping @Sendable () -> T) -> T? {
        let slot = Slot<T>()
        let thread = Thread { slot.fill(body()) }
        thread.name = name
        thread.start()
        return slot.wait(until: Date(timeIntervalSinceNow: Double(limit.components.seconds)
            + Double(limit.components.attoseconds) / 1e18))
    }

    private final class Slot<T: Sendable>: @unchecked Sendable {
        private let condition = NSCondition()
        private var value: T?   // guarded by `condition`

        func fill(_ newValue: T) {
            condition.lock()
            value = newValue
            condition.broadcast()
            condition.unlock()
        }

        func wait(until deadline: Date) -> T? {
            condition.lock()
            defer { condition.unlock() }
            while value == nil {
                if !condition.wait(until: deadline) { break }
            }
            return value
        }
    }
}

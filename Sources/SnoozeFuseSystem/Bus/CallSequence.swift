
/// Calls that must happen one after another and may block (a D-Bus call), each on a thread of its
/// own (see ``BoundedCall``): a call starts once the one before it has returned. Nothing runs, and
/// no thread exists, while there is nothing to do.
///
/// Whoever adds a call never waits for it; ``settled(waitingAtMost:)`` waits for all of them,
/// bounded, where the end of a program must let them finish (a notification to close).
public final class CallSequence: Sendable {
    private let name: String
    private let last = Locked<BoundedCall<Void>?>(nil)

    /// - Parameter name: the name of the calls' threads (at most 15 bytes are kept).
    public init(named name: String) {
        self.name = name
    }

    /// Adds `body`: it runs on a new thread once every call added before it has returned.
    public func add(_ body: @escaping @Sendable () -> Void) {
        last.withLock { last in
            // A call whose thread the system refused never returns: the next does not wait for it.
            let previous = last.flatMap { $0.threadStarted ? $0 : nil }
            last = BoundedCall.start(named: name) {
                _ = previous?.wait()
                body()
            }
        }
    }

    /// Blocks the calling thread until every call added so far has returned, or `limit` has passed
    /// on CLOCK_BOOTTIME. Returns whether they all returned. For threads of their own.
    @discardableResult
    public func settled(waitingAtMost limit: Duration) -> Bool {
        guard let call = last.withLock({ $0 }) else { return true }
        return call.wait(atMost: limit) != nil
    }

    /// Waits in a task until every call added so far has returned, or `limit` has passed on
    /// `clock`. Returns whether they all returned.
    @discardableResult
    public func settled(waitingAtMost limit: Duration, on clock: BootClock) async -> Bool {
        guard let call = last.withLock({ $0 }) else { return true }
        return await call.value(waitingAtMost: limit, on: clock) != nil
    }
}

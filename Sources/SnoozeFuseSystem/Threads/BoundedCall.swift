import CLinux
import Glibc

/// A call that may never return (alsa-lib waiting on a sound server that does not answer, a
/// plugin, a mixer), run on a thread of its own so that whoever needs its value can stop waiting.
///
/// The one primitive for "at most this long": the caller waits with a time limit on the boot-time
/// clock (``value(waitingAtMost:on:)`` in a task, ``wait(atMost:)`` on a plain thread), and on
/// `nil` goes on without it. The call is never cancelled: it goes on, or hangs, on its own thread,
/// and its value can still be awaited later (``value()``, ``result``).
public final class BoundedCall<Value: Sendable>: Sendable {
    private let state = Locked(State())
    /// Rung once when the value is in (for ``wait(atMost:)``).
    private let doneDescriptor: Int32

    private struct State {
        var started = false
        var value: Value?
        var waiters: [UInt64: CheckedContinuation<Value?, Never>] = [:]
        /// The time limits of waiters that wait with one (cancelled when the value comes first).
        var limits: [UInt64: Task<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private init() {
        doneDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
    }

    deinit {
        if doneDescriptor >= 0 { close(doneDescriptor) }
    }

    /// Starts `body` on a new thread named `name` (see ``SystemThread``). When the system refuses
    /// a thread, ``threadStarted`` is false and the value never comes: every bounded wait runs out,
    /// as for a call that hangs.
    public static func start(named name: String, _ body: @escaping @Sendable () -> Value) -> BoundedCall<Value> {
        let call = BoundedCall<Value>()
        let started = SystemThread.start(named: name) { call.fill(body()) }
        call.state.withLock { $0.started = started }
        return call
    }

    /// Whether the call's thread was created.
    public var threadStarted: Bool { state.withLock { $0.started } }

    /// The value, once the call has returned.
    public var result: Value? { state.withLock { $0.value } }

    /// Waits for the value however long it takes.
    public func value() async -> Value {
        // Only `fill` resolves a waiter with no time limit, and it always passes the value.
        await waitForValue(limit: nil)!
    }

    /// Waits for the value at most `limit` on `clock`; `nil` when the time ran out first.
    public func value(waitingAtMost limit: Duration, on clock: BootClock) async -> Value? {
        await waitForValue(limit: (limit, clock))
    }

    /// Blocks the calling thread until the value is in, however long it takes (for a thread of its
    /// own that carries on from where another call left off; never on an event loop's thread).
    public func wait() -> Value {
        while true {
            if let value = result { return value }
            _ = waitReadable(doneDescriptor, until: nil)
        }
    }

    /// Blocks the calling thread until the value is in or `limit` has passed on CLOCK_BOOTTIME;
    /// `nil` when the time ran out first. For synchronous callers on threads of their own (never
    /// on an event loop's thread).
    public func wait(atMost limit: Duration) -> Value? {
        let deadline = BootInstant.now.advanced(by: limit)
        while result == nil, BootInstant.now < deadline {
            guard doneDescriptor >= 0, waitReadable(doneDescriptor, until: deadline) else { break }
        }
        return result
    }

    private func waitForValue(limit: (Duration, BootClock)?) async -> Value? {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters[id] = continuation
                return nil
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            guard let (duration, clock) = limit else { return }
            let timer = Task(executorPreference: clock.loop) {
                guard (try? await clock.sleep(for: duration)) != nil else { return }
                self.resolve(id, with: nil)
            }
            let waiting = state.withLock { state -> Bool in
                guard state.waiters[id] != nil else { return false }
                state.limits[id] = timer
                return true
            }
            if !waiting { timer.cancel() }
        }
    }

    /// Resumes one waiter (a time limit that ran out), if it still waits.
    private func resolve(_ id: UInt64, with value: Value?) {
        let waiter = state.withLock { state in
            state.limits[id] = nil
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.resume(returning: value)
    }

    private func fill(_ value: Value) {
        let (waiters, limits) = state.withLock { state in
            state.value = value
            defer {
                state.waiters = [:]
                state.limits = [:]
            }
            // Loops, not `Array(…values)`: unspecialised (`Value` is generic), that asks the
            // runtime for the element type by name, and its first such question scans every
            // protocol conformance record of the binary (issue 23: the pages stay in memory).
            var waiters: [CheckedContinuation<Value?, Never>] = []
            for waiter in state.waiters.values { waiters.append(waiter) }
            var limits: [Task<Void, Never>] = []
            for limit in state.limits.values { limits.append(limit) }
            return (waiters, limits)
        }
        if doneDescriptor >= 0 { signalEventDescriptor(doneDescriptor) }
        for limit in limits { limit.cancel() }
        for waiter in waiters { waiter.resume(returning: value) }
    }
}

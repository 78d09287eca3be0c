import SnoozeFuseSystem

/// A clock that moves only when a test tells it to, in the spirit of swift-nio's `EmbeddedEventLoop`
/// and swift-clocks' `TestClock`: `advance(by:)` wakes every sleeper whose deadline has passed, in
/// deadline order, and `sleeperCount` lets a test prove that nothing is left waiting.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, CustomStringConvertible {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "t=\(offset)" }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline anyone sleeps until.
    public var earliestSleeperDeadline: Instant? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { state in
                    if Task.isCancelled { return true }
                    if deadline <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking sleepers one deadline at a time and letting the
    /// woken tasks run before time moves on.
    public func advance(by duration: Duration) async {
        let target = now.advanced(by: duration)
        await advance(to: target)
    }

    /// Moves time forward to `target` (never backwards).
    public func advance(to target: Instant) async {
        await settle()
        while true {
            let woken: [Sleeper] = state.withLock { state in
                guard let next = state.sleepers.map(\.deadline).min(), next <= target else { return [] }
                state.now = Swift.max(state.now, next)
                let due = state.sleepers.filter { $0.deadline <= next }
                state.sleepers.removeAll { $0.deadline <= next }
                return due
            }
            if woken.isEmpty { break }
            for sleeper in woken { sleeper.continuation.resume() }
            await settle()
        }
        state.withLock { $0.now = Swift.max($0.now, target) }
        await settle()
    }

    /// Lets other tasks run until they block again. Cooperative tasks need several turns to pass a
    /// value through a stream; a generous number of yields keeps tests deterministic.
    public func settle() async {
        for _ in 0..<200 { await Task.yield() }
    }
}

extension ManualClock {
    /// Waits until at least `count` tasks sleep on this clock, or `done()` holds. For tests that
    /// must not move time before the code under test has scheduled its wake-up.
    ///
    /// It waits as long as it takes: on a loaded machine the code under test may need many turns,
    /// and giving up early would let a test move time past a sleeper that registers later.
    public func waitForSleepers(_ count: Int = 1, orUntil done: @Sendable () -> Bool = { false }) async {
        await waitUntil { self.sleeperCount >= count || done() }
    }

    /// Waits for the next sleeper (or `done()`), then moves time to the earliest deadline. Returns
    /// that deadline, or `nil` when `done()` held first.
    @discardableResult
    public func step(orUntil done: @Sendable () -> Bool = { false }) async -> Instant? {
        await waitForSleepers(orUntil: done)
        guard !done(), let next = earliestSleeperDeadline else { return nil }
        await advance(to: next)
        return next
    }
}

/// Waits until `condition` holds, giving other tasks and threads the chance to run in between.
/// A condition that never holds hangs the test, which the test runner reports; it never turns
/// into a silent pass.
public func waitUntil(_ condition: @Sendable () -> Bool) async {
    while !condition() {
        await Task.yield()
        // A real (tiny) pause: the code under test may run on other threads.
        try? await Task.sleep(for: .microseconds(200))
    }
}

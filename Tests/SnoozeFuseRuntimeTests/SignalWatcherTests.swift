import Foundation
import Glibc
@testable import SnoozeFuseRuntime
import SnoozeFuseSystem
import Testing

/// Signals through libdispatch, in this process (SIGUSR2, which nothing else here uses).
@Suite("A signal watcher, on libdispatch's own handler", .serialized)
struct SignalWatcherTests {
    /// Until libdispatch's handler is in place the signal is ignored; once it is, it is left alone.
    private func waitForDispatchHandler(_ number: Int32) -> Bool {
        for _ in 0 ..< 250 {
            var current = sigaction()
            _ = sigaction(number, nil, &current)
            let handler = current.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) }
            if let handler, handler != 1 { return true } // neither SIG_DFL (nil) nor SIG_IGN (1)
            usleep(20_000)
        }
        return false
    }

    /// A second watcher of a signal, while the first still watches it: both hear each one. Before,
    /// the second one set the signal to be ignored again, which took it from libdispatch for good.
    @Test func aSecondWatcherOfTheSameSignalLosesNothing() throws {
        let first = Locked(0), second = Locked(0)
        let one = SignalWatcher(signals: [SIGUSR2]) { _ in first.withLock { $0 += 1 } }
        #expect(waitForDispatchHandler(SIGUSR2), "libdispatch installed its handler")
        let two = SignalWatcher(signals: [SIGUSR2]) { _ in second.withLock { $0 += 1 } }
        // The second source is registered moments after its creation: send until both heard one
        // (at most 5 s), then count what a last one does.
        var heard = false
        for _ in 0 ..< 250 where !heard {
            kill(getpid(), SIGUSR2)
            usleep(20_000)
            heard = first.withLock { $0 } > 0 && second.withLock { $0 } > 0
        }
        #expect(heard, "first \(first.withLock { $0 }), second \(second.withLock { $0 })")
        let before = (first.withLock { $0 }, second.withLock { $0 })
        kill(getpid(), SIGUSR2)
        var after = before
        for _ in 0 ..< 100 where after.0 == before.0 || after.1 == before.1 {
            usleep(20_000)
            after = (first.withLock { $0 }, second.withLock { $0 })
        }
        #expect(after.0 > before.0 && after.1 > before.1, "a later signal reached both: \(before) → \(after)")
        withExtendedLifetime((one, two)) {}
    }

    /// A signal at its default action is told from an ignored one (SIGPWR: nothing here uses it).
    @Test func aSignalAtItsDefaultIsToldFromAnIgnoredOne() {
        signal(SIGPWR, SIG_DFL)
        #expect(SignalWatcher.hasDefaultAction(SIGPWR))
        signal(SIGPWR, SIG_IGN)
        #expect(!SignalWatcher.hasDefaultAction(SIGPWR))
        signal(SIGPWR, SIG_DFL)
    }
}

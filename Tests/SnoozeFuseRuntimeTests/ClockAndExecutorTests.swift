import Foundation
import Testing
import SnoozeFuseCore
import SnoozeFuseRuntime

@Suite("BootTimeClock, SerialThreadExecutor, key bindings")
struct ClockAndExecutorTests {
    @Test func bootTimeClockWakesEverySleeperAtOrAfterItsDeadline() async throws {
        let clock = EventLoop(name: "test-clock").clock
        let start = clock.now
        var order: [Int] = []
        await withTaskGroup(of: Int.self) { group in
            for (index, milliseconds) in [30, 10, 20].enumerated() {
                group.addTask {
                    let deadline = start.advanced(by: .milliseconds(milliseconds))
                    try? await clock.sleep(until: deadline)
                    #expect(clock.now >= deadline, "never wakes early")
                    return index
                }
            }
            for await index in group { order.append(index) }
        }
        #expect(order.sorted() == [0, 1, 2], "every sleeper woke")
    }

    @Test func bootTimeClockSleepsCanBeCancelled() async throws {
        let clock = EventLoop(name: "test-clock").clock
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(3600))) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // A later sleep still works: cancellation left the timer thread in order.
        let deadline = clock.now.advanced(by: .milliseconds(5))
        try await clock.sleep(until: deadline)
        #expect(clock.now >= deadline)
    }

    @Test func serialThreadExecutorRunsTasksOnItsOwnThread() throws {
        let executor = EventLoop(name: "sf-test-exec")
        let name = try executor.runBlocking { () async -> String in
            async let child = threadName()
            return await child
        }
        #expect(name == "sf-test-exec", "async let children follow the executor preference")
        #expect(throws: CancellationError.self) {
            try executor.runBlocking { () async throws -> Int in throw CancellationError() }
        }
    }
}

/// The kernel's name of the calling thread.
func threadName() -> String {
    let text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

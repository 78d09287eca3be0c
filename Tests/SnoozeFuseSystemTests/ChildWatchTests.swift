import Glibc
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// A child watched from a thread that sleeps on its pidfd: real children of this process.
@Suite struct ChildWatchTests {
    private func sleeper() throws -> Int32 {
        try ProcessSpawn.start("/bin/sleep", ["30"], descriptors: [0: .devNull, 1: .devNull, 2: .devNull])
    }

    /// A child killed is reaped by the watch (no zombie left) and its status handed on.
    @Test func aChildThatDiesIsReapedAndItsStatusHandedOn() async throws {
        let pid = try sleeper()
        let ended = Locked<Int32??>(nil)
        let watch = try #require(ChildWatch(pid: pid, name: "test-childwatch") { status in ended.withLock { $0 = .some(status) } })
        #expect(watch.pid == pid)
        let (before, status) = try await onOwnThread { () -> (Int32??, Int32??) in
            // Alive: nothing yet.
            usleep(100_000)
            let before = ended.withLock { $0 }
            kill(pid, SIGKILL)
            for _ in 0 ..< 500 {
                if let status = ended.withLock({ $0 }) { return (before, status) }
                usleep(20_000)
            }
            return (before, nil)
        }
        #expect(before == nil, "the watch spoke while the child lived")
        #expect(status.map { $0.map(ProcessSpawn.describe) } == "killed by signal 9 (Killed)")
        // Reaped by the watch: the process is gone, not a zombie, and not this test's to reap.
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
        var left: Int32 = 0
        #expect(waitpid(pid, &left, WNOHANG) == -1)
    }

    /// A watch stopped before the child ends calls nothing and leaves the child to its parent.
    @Test func aStoppedWatchCallsNothingAndLeavesTheChild() async throws {
        let pid = try sleeper()
        let called = Locked(false)
        let watch = try #require(ChildWatch(pid: pid, name: "test-childwatch") { _ in called.withLock { $0 = true } })
        watch.stop()
        let status = try await onOwnThread { () -> Int32? in
            usleep(100_000)
            kill(pid, SIGKILL)
            let status = ProcessSpawn.wait(for: pid, atMost: .seconds(10))
            usleep(100_000)
            return status
        }
        #expect(status.map(ProcessSpawn.describe) == "killed by signal 9 (Killed)")
        #expect(called.withLock { $0 } == false)
    }

    /// No such process: no watch.
    @Test func noProcessNoWatch() {
        #expect(ChildWatch(pid: 0x3fff_fff0, name: "test-childwatch") { _ in } == nil)
    }
}

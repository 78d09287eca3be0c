import Foundation
import Glibc
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// What the kernel says threads waited for a CPU, read from real processes: four that spin on one
/// CPU (at nice 19), one of them watched.
@Suite(.serialized) struct CPUWaitTests {
    /// The watched process's time on the CPU (schedstat's first field), read here on its own.
    func onCPU(_ pid: Int32) -> Duration {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8)) ?? ""
        return .nanoseconds(Int64(text.split(separator: " ").first ?? "") ?? 0)
    }

    @Test func aProcessSharingOneCPUIsSeenWaitingAndAnEndedOneIsNot() throws {
        let busy = try BusyCPU(spinners: 4)
        defer { busy.stop() }
        let watched = try BackgroundProcess(URL(fileURLWithPath: busy.prefix[0]), Array(busy.prefix.dropFirst()) + ["sh", "-c", "while :; do :; done"],
                                            environment: ProcessInfo.processInfo.environment, standardOutput: "/dev/null", standardError: "/dev/null")
        let start = try #require(CPUWait.threads(of: watched.pid))
        #expect(start.keys.contains(watched.pid), "its one thread is read by id: \(start)")
        // It runs about a fifth of the time: its wait passes 300 ms within a second or two.
        var seen: [Duration] = []
        for _ in 0 ..< 3000 where (seen.last ?? .zero) <= .milliseconds(300) {
            seen.append(CPUWait.longestWait(of: watched.pid, since: [:]))
            usleep(10_000)
        }
        let running = onCPU(watched.pid)
        #expect((seen.last ?? .zero) > .milliseconds(300), "its wait stayed at \(seen.last ?? .zero)")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "a thread's wait never goes down: \(seen)")
        // Waiting, not running: sharing the CPU five ways, it waited longer than it ran.
        #expect((seen.last ?? .zero) > running, "waited \(seen.last ?? .zero), ran \(running)")
        // Since a later reading, only what came after counts.
        let later = try #require(CPUWait.threads(of: watched.pid))
        #expect(CPUWait.longestWait(of: watched.pid, since: later) < (seen.last ?? .zero))
        watched.signal(SIGKILL)
        watched.wait()
        #expect(CPUWait.threads(of: watched.pid) == nil, "an ended process has no threads to read")
        #expect(CPUWait.longestWait(of: watched.pid, since: later) == .zero)
        #expect(CPUWait.callingThread() != nil, "this thread's own wait is read")
    }
}

import Foundation
import Glibc
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// What the kernel says threads waited for a CPU, read from real processes: three that spin on
/// CPU 0 and a fourth that spins there too and is watched.
@Suite(.serialized) struct CPUWaitTests {
    func spinner() throws -> BackgroundProcess {
        try BackgroundProcess(executableInPath("taskset"), ["-c", "0", "sh", "-c", "while :; do :; done"],
                              environment: ProcessInfo.processInfo.environment, standardOutput: "/dev/null", standardError: "/dev/null")
    }

    @Test func aProcessSharingOneCPUIsSeenWaitingAndAnEndedOneIsNot() throws {
        let others = try (0 ..< 3).map { _ in try spinner() }
        defer {
            for other in others {
                other.signal(SIGKILL)
                other.wait()
            }
        }
        let watched = try spinner()
        // It runs about a quarter of the time: its wait passes 200 ms within a second or so.
        var seen: [Duration] = []
        for _ in 0 ..< 3000 where (seen.last ?? .zero) <= .milliseconds(200) {
            seen.append(CPUWait.longestThread(of: watched.pid) ?? .zero)
            usleep(10_000)
        }
        #expect((seen.last ?? .zero) > .milliseconds(200), "its wait stayed at \(seen.last ?? .zero)")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "a thread's wait never goes down: \(seen)")
        watched.signal(SIGKILL)
        watched.wait()
        #expect(CPUWait.longestThread(of: watched.pid) == nil, "an ended process has no threads to read")
        let ownBefore = try #require(CPUWait.callingThread())
        #expect(CPUWait.callingThread().map { $0 >= ownBefore } == true)
    }
}

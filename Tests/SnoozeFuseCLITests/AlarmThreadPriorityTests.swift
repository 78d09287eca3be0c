import Foundation
import Glibc
import Testing
import SnoozeFuseTestSupport

/// The alarm's audio thread asks for SCHED_FIFO, so a machine busy with ordinary work cannot make
/// the alarm late; what it got is in the `alarm` event and, read back from the kernel, in
/// `/proc/PID/task/TID/stat`. Where the system refuses, the alarm rings all the same.
@Suite("the alarm's audio thread and real-time scheduling (the built binary)")
struct AlarmThreadPriorityTests {
    /// What the kernel says of the nap's `snoozefuse-pcm` thread, and the nap's `alarm` event.
    struct Seen {
        /// The thread's policy and priority, each time they changed, from its start to its end.
        var policies: [Int] = []
        var priorities: [Int] = []
        var audioThread: String?
        var lateness: Double?
        var status: Int32 = -1
        var output = ""
    }

    /// Runs a nap that rings for 2 s on the `null` PCM, started through `wrapper` (a program that
    /// then executes the nap in the same process), and reads its audio thread's policy from its
    /// start to its end.
    private func napReadingItsAudioThread(through wrapper: [String]) async throws -> Seen {
        let (environment, folder) = try isolatingNapState(nil)
        let logs = try TemporaryFolder(prefix: "snoozefuse-priority")
        return try await onOwnThread {
            _ = folder
            let nap = ["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "5", "--ring-limit", "2",
                       "--device", "null", "--events", "jsonl", "--quiet"]
            let program = wrapper.isEmpty ? snoozefuse : executableInPath(wrapper[0])
            let arguments = wrapper.isEmpty ? nap : Array(wrapper.dropFirst()) + [snoozefuse.path] + nap
            let process = try BackgroundProcess(program, arguments, environment: environment,
                                                standardOutput: logs.path("out"), standardError: logs.path("err"))
            var seen = Seen()
            // The thread exists from the moment the alarm is armed (it waits for the deadline at
            // its gate) until the alarm stops ringing 2 s after its first write.
            for _ in 0 ..< 400 where process.isRunning {
                if let (policy, priority) = Self.audioThreadScheduling(of: process.pid), seen.policies.last != policy {
                    seen.policies.append(policy)
                    seen.priorities.append(priority)
                }
                usleep(20_000)
            }
            seen.status = process.wait()
            seen.output = (try? String(contentsOfFile: logs.path("out"), encoding: .utf8)) ?? ""
            for line in seen.output.split(separator: "\n") {
                guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      event["event"] as? String == "alarm" else { continue }
                seen.audioThread = event["audio_thread"] as? String
                seen.lateness = event["lateness_ms"] as? Double
            }
            return seen
        }
    }

    /// The scheduling policy (0 SCHED_OTHER, 1 SCHED_FIFO) and real-time priority of the thread of
    /// `pid` named `snoozefuse-pcm`, from fields 41 and 40 of its `stat`.
    private static func audioThreadScheduling(of pid: Int32) -> (Int, Int)? {
        let tasks = "/proc/\(pid)/task"
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let name = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                  name.trimmingCharacters(in: .whitespacesAndNewlines) == "snoozefuse-pcm",
                  let stat = try? String(contentsOfFile: "\(tasks)/\(task)/stat", encoding: .utf8),
                  let close = stat.range(of: ") ", options: .backwards) else { continue }
            // After the name come fields 3, 4, …: field N is at N - 3.
            let fields = stat[close.upperBound...].split(separator: " ")
            guard fields.count > 38, let priority = Int(fields[37]), let policy = Int(fields[38]) else { continue }
            return (policy, priority)
        }
        return nil
    }

    /// Whether this process may use SCHED_FIFO 10 (and so a nap it starts may): root, or an
    /// RLIMIT_RTPRIO of at least 10.
    private var mayUseRealtime: Bool {
        var limit = rlimit()
        return geteuid() == 0 || (getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit) == 0 && limit.rlim_cur >= 10)
    }

    @Test func theAlarmThreadRunsRealtimeWhereTheSystemAllowsIt() async throws {
        try #require(mayUseRealtime, "this test needs root or an rtprio limit of at least 10 (limits.conf)")
        let seen = try await napReadingItsAudioThread(through: [])
        #expect(seen.status == 0, "\(seen.output)")
        // SCHED_FIFO 10 while it waits for the deadline, the ordinary policy once the first write
        // is out (the device's buffer carries the stream from there).
        #expect(seen.policies == [1, 0], "the kernel's policies of snoozefuse-pcm, in turn: \(seen.policies)")
        #expect(seen.priorities == [10, 0])
        #expect(seen.audioThread == "realtime (SCHED_FIFO 10)", "\(seen.output)")
        #expect(seen.lateness.map { $0 < 500 } == true, "\(seen.output)")
    }

    @Test func refusedRealtimeStillRingsAndSaysWhyAndHowToAllowIt() async throws {
        // An rtprio limit of 0 refuses SCHED_FIFO to an ordinary user; root may still, unless it
        // also gives up CAP_SYS_NICE (setpriv, from its bounding set and inherited set, before the nap runs).
        var wrapper = ["prlimit", "--rtprio=0"]
        if geteuid() == 0 { wrapper += [executableInPath("setpriv").path, "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"] }
        let seen = try await napReadingItsAudioThread(through: wrapper)
        #expect(seen.status == 0, "\(seen.output)")
        #expect(seen.policies == [0], "the kernel's policies of snoozefuse-pcm, in turn: \(seen.policies)")
        let said = try #require(seen.audioThread, "\(seen.output)")
        #expect(said.hasPrefix("normal priority: the system refused real-time scheduling (Operation not permitted)"), "\(said)")
        #expect(said.contains("rtprio 10"))
        #expect(seen.lateness.map { $0 < 500 } == true, "the alarm rings all the same: \(seen.output)")
    }
}

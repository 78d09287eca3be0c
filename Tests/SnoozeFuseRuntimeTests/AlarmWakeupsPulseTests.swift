import Foundation
import SnoozeFuseTestSupport
import Testing

/// While the alarm rings, the only threads that run are the audio thread, alsa-lib's pulse plugin
/// thread, and the nap's own executor and clock: libdispatch's worker pool (Swift's global
/// executor) never wakes. Its monitor, once started, would wake the process every second.
@Suite("A ringing alarm leaves Swift's global executor asleep (PulseAudio null sink)", .serialized)
struct AlarmWakeupsPulseTests {
    @Test func noDispatchThreadRunsWhileRinging() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> [String: Int] in
            try pulse.startDaemon()
            let nap = try PulseNap(on: pulse, ringLimit: 8, options: ["--fade-in", "0"])
            _ = try nap.waitUntilPlayingOnPulse()
            let before = Self.switches(of: nap.process.processIdentifier)
            usleep(3_000_000)
            let after = Self.switches(of: nap.process.processIdentifier)
            var end = Seen()
            try nap.waitForTheEnd(into: &end)
            // Context switches per thread name over the 3 s (threads that started in between count
            // all of theirs).
            var ran: [String: Int] = [:]
            for (thread, count) in after {
                let grew = count.switches - (before[thread]?.switches ?? 0)
                if grew > 0 { ran[count.name, default: 0] += grew }
            }
            return ran
        }
        #expect(seen["snoozefuse-pcm", default: 0] > 0, "the audio thread did not run: \(seen)")
        let dispatch = seen.filter { $0.key.contains("qos") || $0.key.contains("dispatch") }
        #expect(dispatch.isEmpty, "libdispatch threads ran while the alarm rang: \(seen)")
    }

    /// Each thread's name and count of times it was switched in (`schedstat`'s third field).
    static func switches(of pid: Int32) -> [String: (name: String, switches: Int)] {
        let tasks = "/proc/\(pid)/task"
        var result: [String: (name: String, switches: Int)] = [:]
        for thread in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let name = try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8) else { continue }
            let fields = stat.split(separator: " ")
            guard fields.count >= 3, let count = Int(fields[2].trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            result[thread] = (name.trimmingCharacters(in: .whitespacesAndNewlines), count)
        }
        return result
    }
}

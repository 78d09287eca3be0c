import Foundation
import SnoozeFuseTestSupport
import Testing

/// Real-time playback through a private PulseAudio daemon with a null sink, captured with `pacat`.
///
/// alsa-lib reads its configuration once per process, so the alarm runs in a child process (the built
/// `snoozefuse`) whose environment points libpulse at the private daemon.
@Suite("Audio alarm through PulseAudio (daemon killed and restarted mid-alarm)", .serialized)
struct AudioAlarmPulseTests {
    @Test func deviceLostFallsBackToTheBellAndReconnects() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        // The script runs on a thread of its own (see AudioAlarmStallTests).
        let seen = try await onOwnThread { () throws -> Seen in
            var seen = Seen()
            try pulse.startDaemon()
            let firstCapture = try pulse.startCapture(name: "before.raw")
            let nap = try PulseNap(on: pulse, ringLimit: 16)
            let started = try nap.events.waitBlocking(for: "the alarm on pulse") { $0["event"] as? String == "alarm" }
            seen.startedOn = started["output"] as? String ?? ""
            usleep(1_500_000)

            // Kill the daemon mid-alarm: the alarm moves to the bell at once.
            pulse.killDaemon()
            let lost = try nap.events.waitBlocking(for: "the output change to the bell") {
                $0["event"] as? String == "output" && $0["output"] as? String == "terminal bell"
            }
            seen.lost = lost["message"] as? String ?? ""
            _ = try nap.messages.waitBlocking(for: "the bell after the loss") { _ in
                nap.messages.text.components(separatedBy: "was lost").last?.contains("ALARM") == true
            }
            pulse.stop(firstCapture)

            // Restart the daemon: the alarm comes back on its backoff schedule (first attempt after 2 s).
            try pulse.startDaemon()
            let secondCapture = try pulse.startCapture(name: "after.raw")
            let restored = try nap.events.waitBlocking(for: "the output change back to pulse") {
                $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
            }
            seen.backAfter = (restored["t"] as? Double ?? 0) - (lost["t"] as? Double ?? 0)
            usleep(1_500_000)
            pulse.stop(secondCapture)
            try nap.waitForTheEnd(into: &seen)
            // Both captures hold the alarm (the built-in tone at 80 %), not silence.
            seen.rmsBefore = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("before.raw"))
            seen.rms = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("after.raw"))
            return seen
        }
        #expect(seen.startedOn == "ALSA pulse", "stderr: \(seen.stderr)")
        #expect(seen.lost.contains("ALSA pulse was lost"), "\(seen.lost)")
        #expect(seen.lost.contains("EIO"), "\(seen.lost)")
        let backAfter = try #require(seen.backAfter)
        #expect(backAfter >= 1.99, "reconnected \(backAfter) s after the loss")
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "stderr: \(seen.stderr)")
        #expect(seen.rmsBefore > 0.05, "capture before the loss: RMS \(seen.rmsBefore)")
        #expect(seen.rms > 0.05, "capture after reconnecting: RMS \(seen.rms)")
    }
}

@Suite("Sleep sound through PulseAudio", .serialized)
struct SleepSoundPulseTests {
    /// `nap --sleep-sound noise` on a real-time sink: white noise from the start of the release
    /// through the nap, faded out and silent 3 s before the alarm (so its stream is closed before
    /// the alarm's device is opened, 2 s ahead), then the alarm.
    @Test func noisePlaysWhileReleasingAndNappingAndEndsBeforeTheAlarm() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        // The script runs on a thread of its own (see AudioAlarmStallTests).
        let (status, events, messages) = try await onOwnThread { () throws -> (Int32, String, String) in
            try pulse.startDaemon()
            let capture = try pulse.startCapture(name: "session.raw")
            // Let pacat connect before the nap starts, so the capture holds the whole session.
            usleep(500_000)
            let nap = try pulse.launch(BuiltProducts.executable("snoozefuse"), [
                "nap", "--preset", "quick-test", "--no-hold", "--device", "pulse", "--fade-in", "0",
                "--volume", "80", "--ring-limit", "2", "--sleep-sound", "noise:color=white,volume=1",
                "--sleep-volume", "50", "--events", "jsonl", "--quiet",
            ])
            let events = LineCollector(nap.standardOutput)
            let messages = LineCollector(nap.standardError)
            _ = try events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
            PrivatePulse.waitForExit(nap)
            usleep(300_000)
            pulse.stop(capture)
            return (nap.terminationStatus, events.text, messages.text)
        }
        #expect(status == 0, "stderr: \(messages)")
        #expect(events.contains(#""outcome":"ring_limit""#), "\(events)")
        #expect(events.contains(#""output":"ALSA pulse""#), "the alarm on pulse: \(events); stderr: \(messages)")
        #expect(warningLines(in: events).isEmpty, "no sleep-sound problem: \(events)")

        // 10 ms RMS windows of the capture. The null sink's monitor does not keep time while no
        // stream plays (the silence between the sleep sound and the alarm comes out shorter than
        // it was), so this checks what was heard, in order; the timing is the driver's (tested on
        // a manual clock) and the length of the stream (tested through the `file` PCM).
        let levels = try PrivatePulse.windowRMS(ofS16Stereo: pulse.directory.appendingPathComponent("session.raw"), windowFrames: 480)
        let trace = levels.enumerated().filter { $0.offset % 10 == 0 }.map { String(format: "%.1f:%.3f", Double($0.offset) / 100, $0.element) }.joined(separator: " ")
        let noiseStart = try #require(levels.firstIndex { $0 > 0.01 }, "the capture never left silence: \(trace)")
        let silenceStart = try #require(levels[noiseStart...].firstIndex { $0 < 0.001 }, "the sleep sound never ended: \(trace)")
        let alarmStart = try #require(levels[silenceStart...].firstIndex { $0 > 0.01 }, "no alarm after the sleep sound: \(trace)")
        // Noise, never a silent 10 ms window (unlike the beeping tone), for over 3 s: the release
        // (2 s) and into the nap; at full level (white noise at 50 %: RMS 0.29) in its middle.
        // Required: the windows read below lie inside the sleep sound only when it lasted so long
        // (a shorter one failed here and then crashed the whole run on an index out of range).
        try #require(silenceStart - noiseStart > 300, "the sleep sound lasted \(Double(silenceStart - noiseStart) / 100) s: \(trace)")
        #expect(levels[(noiseStart + 100) ..< (noiseStart + 200)].allSatisfy { $0 > 0.25 && $0 < 0.33 }, "full level: \(trace)")
        // It fades out: each 200 ms step of its last second is quieter than the one before.
        let fade = stride(from: silenceStart - 100, to: silenceStart, by: 20).map { levels[$0] }
        #expect(zip(fade, fade.dropFirst()).allSatisfy { $0 > $1 }, "fade-out \(fade)")
        // Then silence, then the alarm: the built-in tone at 80 % (beeps of 100 ms with gaps).
        #expect(alarmStart - silenceStart > 50, "silence before the alarm: \(trace)")
        let ringing = levels[alarmStart ..< min(alarmStart + 100, levels.count)]
        #expect(ringing.filter { $0 > 0.4 }.count > 20 && ringing.filter { $0 < 0.001 }.count > 20, "the beeping alarm: \(trace)")
    }
}

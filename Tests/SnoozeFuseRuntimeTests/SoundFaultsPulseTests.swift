import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// The alarm sound under faults, heard on a PulseAudio null sink captured with pacat: the file is
/// held open from the start of the nap, and a file that breaks gives way to the built-in sound on the
/// same working device (never to the bell).
@Suite("The alarm sound deleted or broken during the nap (PulseAudio null sink)", .serialized)
struct SoundFaultsPulseTests {
    enum Fault: String, CaseIterable, Sendable { case deleted, overwrittenWithGarbage }

    struct Heard: Sendable {
        var output = ""
        var rms = 0.0
        var replaced: String?
        var outcome = ""
        var status: Int32 = -1
        var stderr = ""
    }

    @Test("the alarm is heard on the sink after the sound file was", arguments: Fault.allCases)
    func theAlarmIsStillHeard(fault: Fault) async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let sound = pulse.directory.appendingPathComponent("sine.wav").path
        // A 440 Hz sine at half scale: at --volume 80, RMS 0.5 × 0.8 / √2 = 0.283 on the sink, times
        // what brings it to the alarm's loudness (about +1.6 dB).
        try runTool("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", sound, "synth", "2", "sine", "440", "gain", "-6.02"])
        let loudness = try #require(try AlarmSound.file(path: sound).measure(within: .seconds(60))?.loudness)
        let expected = 0.283 * AlarmLoudness.factor(loudness.alarmGain.decibels)
        let heard = try await onOwnThread { () throws -> Heard in
            var heard = Heard()
            try pulse.startDaemon()
            let nap = try PulseNap(on: pulse, ringLimit: 6, options: ["--sound", sound, "--fade-in", "0"])
            _ = try nap.events.waitBlocking(for: "the release") { $0["phase"] as? String == "releasing" }
            switch fault {
            case .deleted:
                try FileManager.default.removeItem(atPath: sound)
            case .overwrittenWithGarbage:
                // In place: the same file, now bytes no decoder reads.
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: sound))
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data((0 ..< 4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
                try handle.close()
            }
            heard.output = try nap.waitUntilPlayingOnPulse()
            let capture = try pulse.startCapture(name: "alarm.raw")
            usleep(1_500_000)
            pulse.stop(capture)
            heard.rms = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("alarm.raw"))
            var seen = Seen()
            try nap.waitForTheEnd(into: &seen)
            heard.outcome = seen.outcome
            heard.status = seen.status
            heard.stderr = seen.stderr
            let events = nap.events.text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            heard.replaced = events.first { ($0["message"] as? String)?.contains("cannot be read") == true }?["message"] as? String
            return heard
        }
        #expect(heard.output == "ALSA pulse", "the working device keeps the alarm: \(heard.stderr)")
        #expect(heard.outcome == "ring_limit" && heard.status == 0, "\(heard.stderr)")
        switch fault {
        case .deleted:
            // Held open since the nap began: the sine itself rings.
            #expect(abs(heard.rms - expected) < 0.03, "RMS \(heard.rms), expected \(expected)")
            #expect(heard.replaced == nil)
        case .overwrittenWithGarbage:
            // The built-in sound on the same device, and the events say why.
            #expect(heard.rms > 0.05, "RMS \(heard.rms)")
            #expect(heard.replaced?.contains("the built-in sound") == true, "\(heard.replaced ?? "no switch recorded")")
        }
    }
}

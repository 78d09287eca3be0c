import Foundation
import SnoozeFuseTestSupport
import Testing

/// `nap --system-volume` against a real mixer: the ALSA `pulse` control plugin's `Master`, which is
/// the test's own PulseAudio daemon's default sink (the null sink), read back with `pactl`.
@Suite("System volume during the alarm (ALSA mixer on a PulseAudio null sink)", .serialized)
struct SystemVolumePulseTests {
    @Test("the mixer's Master is at --system-volume while the alarm sounds and back where it was after")
    func setsAndRestoresTheVolume() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> VolumeSeen in
            var seen = VolumeSeen()
            try pulse.startDaemon()
            try pulse.pactl(["set-sink-volume", "nullsink", "30%"])
            seen.before = try pulse.sinkVolumePercent()
            let nap = try PulseNap(on: pulse, ringLimit: 4, options: ["--system-volume", "70"])
            _ = try nap.events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }
            // The mixer is set from a thread of its own once the sound has started: poll for it.
            for _ in 0 ..< 40 {
                seen.during = try pulse.sinkVolumePercent()
                if seen.during == 70 { break }
                usleep(50_000)
            }
            var end = Seen()
            try nap.waitForTheEnd(into: &end)
            seen.after = try pulse.sinkVolumePercent()
            seen.outcome = end.outcome
            seen.status = end.status
            seen.stderr = end.stderr
            return seen
        }
        #expect(seen.before == 30)
        #expect(seen.during == 70, "stderr: \(seen.stderr)")
        #expect(seen.after == 30)
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "\(seen.stderr)")
        #expect(!seen.stderr.contains("--system-volume"), "\(seen.stderr)")
    }

    /// `--device` names a PCM with a mixer of its own (here `headset`, the pulse plugin on the sink
    /// `headset`, its control on the same sink, in the test's `~/.asoundrc`): the volume is set and
    /// put back on that mixer, and the default one (the null sink) is left alone.
    @Test("--system-volume sets the mixer of the device the alarm plays on, not the default card's")
    func setsTheMixerOfTheNamedDevice() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> (VolumeSeen, Int?) in
            var seen = VolumeSeen()
            try pulse.startDaemon()
            try writeHeadsetPCM(in: pulse.directory)
            try pulse.addSink("headset")
            try pulse.pactl(["set-sink-volume", "headset", "30%"])
            try pulse.pactl(["set-sink-volume", "nullsink", "40%"])
            seen.before = try pulse.sinkVolumePercent("headset")
            let nap = try PulseNap(on: pulse, ringLimit: 4, options: ["--device", "headset", "--system-volume", "70"])
            seen.startedOn = try nap.events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }["output"] as? String ?? ""
            for _ in 0 ..< 40 {
                seen.during = try pulse.sinkVolumePercent("headset")
                if seen.during == 70 { break }
                usleep(50_000)
            }
            let defaultDuring = try pulse.sinkVolumePercent("nullsink")
            var end = Seen()
            try nap.waitForTheEnd(into: &end)
            seen.after = try pulse.sinkVolumePercent("headset")
            seen.outcome = end.outcome
            seen.status = end.status
            seen.stderr = end.stderr
            return (seen, defaultDuring)
        }
        let (volume, defaultDuring) = seen
        #expect(volume.startedOn == "ALSA headset", "\(volume)")
        #expect(volume.before == 30)
        #expect(volume.during == 70, "the headset's mixer: \(volume.stderr)")
        #expect(defaultDuring == 40, "the default mixer is left alone")
        #expect(volume.after == 30)
        #expect(volume.outcome == "ring_limit")
        #expect(volume.status == 0, "\(volume.stderr)")
    }

    @Test("a mixer whose server does not answer holds up neither the alarm nor its end")
    func hungMixerDelaysNothing() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> VolumeSeen in
            var seen = VolumeSeen()
            try pulse.startDaemon()
            pulse.pauseDaemon()
            // The alarm's opens of `pulse` and `default` hang too and give up after 1 s each; it
            // sounds on the bell, and the mixer, opened after that, hangs for good.
            let nap = try PulseNap(on: pulse, ringLimit: 3, options: ["--system-volume", "70"])
            let alarm = try nap.events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }
            seen.lateness = alarm["lateness_ms"] as? Double
            seen.alarmAt = alarm["t"] as? Double
            let warning = try nap.events.waitBlocking(for: "the warning about the mixer") {
                $0["event"] as? String == "warning" && ($0["message"] as? String)?.contains("--system-volume") == true
            }
            seen.warning = warning["message"] as? String ?? ""
            var end = Seen()
            try nap.waitForTheEnd(into: &end)
            let ended = try nap.events.waitBlocking(for: "the end") { $0["event"] as? String == "end" }
            seen.endAt = ended["t"] as? Double
            seen.outcome = end.outcome
            seen.status = end.status
            seen.stderr = end.stderr
            return seen
        }
        let lateness = try #require(seen.lateness)
        #expect(lateness < 500, "the alarm was \(lateness) ms late; stderr: \(seen.stderr)")
        // The ring limit (3 s) ends the session on time although the mixer never answered.
        let ringing = try #require(seen.endAt) - (try #require(seen.alarmAt))
        #expect(ringing > 2.5 && ringing < 4.5, "rang \(ringing) s; stderr: \(seen.stderr)")
        #expect(seen.warning.hasPrefix("--system-volume waits: the mixer 'default' has not answered within 1s"), "\(seen.warning)")
        #expect(seen.stderr.contains("snoozefuse: warning: --system-volume waits: the mixer 'default' has not answered within 1s"), "\(seen.stderr)")
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "exit status \(seen.status); stderr: \(seen.stderr)")
    }

    /// `quiet` is a null PCM without a control of its own, so its mixer is the default card's,
    /// which cannot be opened here; `null` itself has no mixer at all.
    @Test("without a mixer the volume is skipped with a note and the alarm sounds")
    func noMixerIsSkippedWithANote() async throws {
        let pulse = try PrivatePulse()   // no daemon: `default` has no mixer here (no sound card)
        defer { pulse.cleanUp() }
        let (seen, null) = try await onOwnThread { () throws -> (VolumeSeen, VolumeSeen) in
            try "pcm.quiet { type null }\n".write(to: pulse.directory.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
            func nap(on device: String) throws -> VolumeSeen {
                var seen = VolumeSeen()
                let nap = try PulseNap(on: pulse, ringLimit: 2, options: ["--system-volume", "70", "--device", device])
                let alarm = try nap.events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }
                seen.startedOn = alarm["output"] as? String ?? ""
                var end = Seen()
                try nap.waitForTheEnd(into: &end)
                seen.outcome = end.outcome
                seen.status = end.status
                seen.stderr = end.stderr
                return seen
            }
            return (try nap(on: "quiet"), try nap(on: "null"))
        }
        #expect(seen.startedOn == "ALSA quiet")
        #expect(seen.stderr.contains("snoozefuse: warning: --system-volume skipped: the ALSA mixer is not available"), "\(seen.stderr)")
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "\(seen.stderr)")
        #expect(null.startedOn == "ALSA null")
        #expect(null.stderr.contains("snoozefuse: warning: --system-volume skipped: null has no mixer (it writes to no speaker)"), "\(null.stderr)")
        #expect(null.outcome == "ring_limit")
        #expect(null.status == 0, "\(null.stderr)")
    }
}

struct VolumeSeen: Sendable {
    var before: Int?
    var during: Int?
    var after: Int?
    var startedOn = ""
    var warning = ""
    var lateness: Double?
    var alarmAt: Double?
    var endAt: Double?
    var outcome = ""
    var status: Int32 = -1
    var stderr = ""
}

/// A PCM and a control named `headset` in `home`'s `.asoundrc`: ALSA's pulse plugin on the sink
/// `headset`, so that it has a mixer of its own, as a second card has.
func writeHeadsetPCM(in home: URL) throws {
    try """
    pcm.headset { type pulse; device "headset" }
    ctl.headset { type pulse; device "headset" }
    """.write(to: home.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// `snoozefuse nap` on the sound server's own output (no `--device`), its events and messages
/// collected. Its waits block: run it from a script on its own thread (`onOwnThread`).
private struct ServerNap {
    let process: Process
    let events: LineCollector
    let messages: LineCollector

    init(on pulse: PrivatePulse, ringLimit: Int, options: [String] = []) throws {
        let arguments = ["nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1", "--fade-in", "0",
                         "--volume", "80", "--ring-limit", "\(ringLimit)", "--dismiss", "key", "--events", "jsonl", "--quiet"] + options
        process = try pulse.launch(BuiltProducts.executable("snoozefuse"), arguments)
        events = LineCollector(process.standardOutput)
        messages = LineCollector(process.standardError)
    }

    func waitForEnd() throws -> Int32 {
        _ = try events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
        for _ in 0 ..< 1_000 where process.isRunning { usleep(20_000) }
        return process.isRunning ? -1 : process.terminationStatus
    }
}

/// The RMS of a capture's left channel over its loudest second, and the share of 100 ms windows
/// louder than -40 dBFS.
private func loudness(_ capture: URL) throws -> (loudestSecond: Double, loudShare: Double) {
    let windows = try PrivatePulse.windowRMS(ofS16Stereo: capture, windowFrames: 4_800)
    guard !windows.isEmpty else { return (0, 0) }
    let seconds = stride(from: 0, to: max(windows.count - 9, 1), by: 1).map { first in
        windows[first ..< min(first + 10, windows.count)].reduce(0, +) / Double(min(10, windows.count - first))
    }
    return (seconds.max() ?? 0, Double(windows.filter { $0 > 0.01 }.count) / Double(windows.count))
}

/// Heard, not just played (SPEC §9): the alarm on the sound server fixes what would silence it,
/// routes past a headset and puts the person's own mute and volume back. A recording of each
/// sink's monitor decides every test, never the nap's own word.
@Suite("Heard, not just played: mute, volume and routing on a private PulseAudio", .serialized)
struct HeardAlarmTests {
    @Test func aMutedDefaultSinkAtFivePercentIsUnmutedRaisedHeardAndPutBack() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        try pulse.pactl(["set-sink-mute", "nullsink", "1"])
        try pulse.pactl(["set-sink-volume", "nullsink", "5%"])
        let (status, events, level, mutedAfter, volumeAfter) = try await onOwnThread {
            let capture = try pulse.startCapture(name: "muted.raw")
            let nap = try ServerNap(on: pulse, ringLimit: 5)
            let status = try nap.waitForEnd()
            pulse.stop(capture)
            return (status, nap.events.text, try loudness(pulse.directory.appendingPathComponent("muted.raw")),
                    try pulse.sinkMuted(), try pulse.sinkVolumePercent())
        }
        #expect(status == 0)
        #expect(events.contains("\"output\":\"sound server\""), "\(events)")
        #expect(events.contains("was muted and at 5 % for the alarm: unmuted it and raised it to 60 %"), "\(events)")
        #expect(events.contains("\"event\":\"heard\""), "\(events)")
        // The monitor carries the alarm: a muted sink's carries digital silence.
        #expect(level.loudestSecond > 0.02, "loudest second \(level.loudestSecond)")
        #expect(mutedAfter, "the person's own mute is back")
        #expect(volumeAfter == 5, "the person's own volume is back")
    }

    @Test func withNoFixVolumeAMutedSinkStaysMutedAndTheAlarmEscalatesToTheFallback() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        try pulse.pactl(["set-sink-mute", "nullsink", "1"])
        let (status, events, level) = try await onOwnThread {
            let capture = try pulse.startCapture(name: "left-muted.raw")
            let nap = try ServerNap(on: pulse, ringLimit: 8, options: ["--no-fix-volume"])
            let status = try nap.waitForEnd()
            pulse.stop(capture)
            return (status, nap.events.text, try loudness(pulse.directory.appendingPathComponent("left-muted.raw")))
        }
        #expect(status == 0)
        #expect(level.loudestSecond < 0.001, "the sink stayed muted: \(level.loudestSecond)")
        #expect(!events.contains("\"event\":\"heard\""), "\(events)")
        // No proof: the next steps, each an event, up to the fallback sounding beside the server.
        #expect(events.contains("escalated_fix_levels"), "\(events)")
        #expect(events.contains("escalated_fallback"), "\(events)")
    }

    @Test func aHeadsetAsTheDefaultSinkRingsTheSpeakersTooUnlessRoutedToTheDefaultOnly() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        try pulse.addSink("headset", properties: "'device.form_factor=headset device.bus=bluetooth'")
        try pulse.addSink("speakers", properties: "device.form_factor=internal")
        try pulse.pactl(["set-default-sink", "headset"])
        let (wake, routedDefault) = try await onOwnThread {
            var results: [(events: String, headset: Double, speakers: Double)] = []
            for options in [[String](), ["--route", "default"]] {
                let tag = options.isEmpty ? "wake" : "default"
                let headset = try pulse.startCapture(name: "\(tag)-headset.raw", sink: "headset")
                let speakers = try pulse.startCapture(name: "\(tag)-speakers.raw", sink: "speakers")
                let nap = try ServerNap(on: pulse, ringLimit: 4, options: options)
                _ = try nap.waitForEnd()
                pulse.stop(headset)
                pulse.stop(speakers)
                results.append((nap.events.text, try loudness(pulse.directory.appendingPathComponent("\(tag)-headset.raw")).loudestSecond,
                                try loudness(pulse.directory.appendingPathComponent("\(tag)-speakers.raw")).loudestSecond))
            }
            return (results[0], results[1])
        }
        #expect(wake.headset > 0.02 && wake.speakers > 0.02, "headset \(wake.headset), speakers \(wake.speakers)")
        #expect(wake.events.contains("worn by one person"), "\(wake.events)")
        #expect(routedDefault.headset > 0.02, "\(routedDefault.headset)")
        #expect(routedDefault.speakers < 0.001, "--route default leaves the speakers silent: \(routedDefault.speakers)")
    }

    @Test func aMuteMadeWhileItRingsIsUndoneWithinTwoSeconds() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let (status, events, tail, mutedAfter) = try await onOwnThread {
            let nap = try ServerNap(on: pulse, ringLimit: 8)
            _ = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }
            // A sleepy hand on the mute key.
            try pulse.pactl(["set-sink-mute", "nullsink", "1"])
            usleep(2_000_000)
            let capture = try pulse.startCapture(name: "after-mute.raw")
            usleep(2_000_000)
            pulse.stop(capture)
            let status = try nap.waitForEnd()
            return (status, nap.events.text, try loudness(pulse.directory.appendingPathComponent("after-mute.raw")), try pulse.sinkMuted())
        }
        #expect(status == 0)
        #expect(events.contains("was muted for the alarm: unmuted it"), "\(events)")
        #expect(tail.loudestSecond > 0.02, "audible again 2 s after the mute: \(tail.loudestSecond)")
        #expect(!mutedAfter, "it was not muted before the alarm: nothing to put back")
    }

    @Test func theGuardianPutsTheMuteBackAfterTheNapIsKilledMidAlarm() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        try pulse.pactl(["set-sink-mute", "nullsink", "1"])
        let (unmutedWhileRinging, mutedAtTheEnd, guardianLog) = try await onOwnThread {
            let nap = try ServerNap(on: pulse, ringLimit: 6)
            _ = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }
            let unmuted = try !pulse.sinkMuted()
            kill(nap.process.processIdentifier, SIGKILL)
            // The guardian rings the rest of the alarm, then puts the person's mute back.
            var muted = false
            for _ in 0 ..< 150 where !muted {
                usleep(100_000)
                muted = try pulse.sinkMuted()
            }
            let log = (try? String(contentsOf: pulse.directory.appendingPathComponent(".local/state/snoozefuse/guardian.jsonl"), encoding: .utf8)) ?? ""
            return (unmuted, muted, log)
        }
        #expect(unmutedWhileRinging)
        #expect(mutedAtTheEnd, "the guardian put the person's mute back: \(guardianLog)")
    }

    @Test func systemVolumeZeroIsRefused() async throws {
        let result = try await runProcess(BuiltProducts.executable("snoozefuse"), ["nap", "--no-hold", "--system-volume", "0", "--device", "null"])
        #expect(result.status == 64)
        #expect(result.standardError.contains("--system-volume 0 would make the alarm silent"), "\(result.standardError)")
    }
}

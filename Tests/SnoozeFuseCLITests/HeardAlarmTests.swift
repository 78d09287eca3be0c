import Foundation
import SnoozeFuseTestSupport
import Testing

/// Heard, not just played (SPEC §9): the alarm on the sound server fixes what would silence it,
/// routes past a headset, moves on from a sink that goes away and puts the person's own mute and
/// volume back. A recording of each sink's monitor decides every scenario, never the nap's own
/// word. Each runs on PulseAudio and on PipeWire (through pipewire-pulse), each server started by
/// the test on its own.
private enum HeardScenario {
    static func aMutedDefaultSinkAtFivePercentIsUnmutedRaisedHeardAndPutBack(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
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

    /// No proof (a muted sink the nap may not touch, and no other sink): each step, in order, up
    /// to the card itself (here ALSA's file PCM as `sysdefault`, recording what it is given)
    /// beside the server, then the bell beside both. The person unmutes the sink: proof is back,
    /// and the card stops long before the alarm does.
    static func withNoFixVolumeAMutedSinkStaysMutedAndTheAlarmEscalatesToTheCardThenTheFallback(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        try pulse.pactl(["set-sink-mute", "nullsink", "1"])
        let (card, configuration) = try cardAsFilePCM(in: pulse.directory)
        let (status, events, muted, unmuted) = try await onOwnThread {
            let capture = try pulse.startCapture(name: "left-muted.raw")
            let nap = try ServerNap(on: pulse, ringLimit: 14, options: ["--no-fix-volume"],
                                    environment: ["ALSA_CONFIG_PATH": configuration.path])
            _ = try nap.events.waitBlocking(for: "the fallback") { $0["what"] as? String == "escalated_fallback" }
            pulse.stop(capture)
            try pulse.pactl(["set-sink-mute", "nullsink", "0"])
            let after = try pulse.startCapture(name: "unmuted.raw")
            _ = try nap.events.waitBlocking(for: "the recovery") { $0["what"] as? String == "recovered" }
            usleep(1_000_000)
            pulse.stop(after)
            let status = try nap.waitForEnd()
            return (status, nap.events.text, try loudness(pulse.directory.appendingPathComponent("left-muted.raw")),
                    try loudness(pulse.directory.appendingPathComponent("unmuted.raw")))
        }
        #expect(status == 0)
        #expect(muted.loudestSecond < 0.001, "the sink stayed muted: \(muted.loudestSecond)")
        #expect(unmuted.loudestSecond > 0.02, "unmuted by the person: \(unmuted.loudestSecond)")
        #expect(events.contains("\"event\":\"heard\""), "heard once unmuted: \(events)")
        #expect(events.contains("ALSA sysdefault beside the sound server stopped: a sink's monitor carries the alarm again"), "\(events)")
        // No proof: the next steps, each an event, in order.
        let steps = ["escalated_fix_levels", "escalated_add_sinks", "escalated_card", "escalated_fallback"]
        let positions = steps.map { events.range(of: $0)?.lowerBound }
        #expect(!positions.contains(nil), "\(events)")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "in order: \(events)")
        #expect(events.contains("ALSA sysdefault (the sound card itself) plays the alarm beside the sound server"), "\(events)")
        // What the card was given from the sixth second to the proof, about the ninth: the alarm,
        // loud, and nothing of the five seconds of alarm after the proof.
        let recorded = try wavContents(card.path)
        #expect(recorded.seconds > 1.5 && recorded.seconds < 5, "the card recorded \(recorded.seconds) s")
        #expect(rms(recorded.samples) > 0.05)
    }

    static func aHeadsetAsTheDefaultSinkRingsTheSpeakersTooUnlessRoutedToTheDefaultOnly(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
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

    static func aMuteMadeWhileItRingsIsUndoneWithinTwoSeconds(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
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

    /// A Bluetooth speaker switched off mid-alarm: its sink is unloaded, and within 2 s the alarm
    /// sounds on the sink that is left.
    static func aSinkUnloadedMidAlarmIsLeftForAnotherWithinTwoSeconds(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let module = try pulse.addSink("bluetoothspeaker", properties: "'device.form_factor=speaker device.bus=bluetooth'")
        try pulse.pactl(["set-default-sink", "bluetoothspeaker"])
        let (status, events, windows) = try await onOwnThread {
            let nap = try ServerNap(on: pulse, ringLimit: 10)
            _ = try nap.events.waitBlocking(for: "the proof on the speaker") {
                $0["event"] as? String == "heard" && $0["sink"] as? String == "bluetoothspeaker"
            }
            // The capture runs before the sink goes, so its start is earlier than the loss and
            // the delay read from it is an upper bound.
            let capture = try pulse.startCapture(name: "left.raw")
            let captured = pulse.directory.appendingPathComponent("left.raw")
            for _ in 0 ..< 200 where ((try? FileManager.default.attributesOfItem(atPath: captured.path)[.size] as? Int) ?? 0) == 0 {
                usleep(10_000)
            }
            try pulse.pactl(["unload-module", module])
            usleep(3_500_000)
            pulse.stop(capture)
            let status = try nap.waitForEnd()
            return (status, nap.events.text, try PrivatePulse.windowRMS(ofS16Stereo: captured, windowFrames: 4_800))
        }
        #expect(status == 0, "\(events)")
        #expect(events.contains("\"what\":\"lost\""), "\(events)")
        #expect(events.contains("sink 'bluetoothspeaker'"), "\(events)")
        // The first 100 ms window louder than -40 dBFS on the sink that is left.
        let firstLoud = try #require(windows.firstIndex { $0 > 0.01 }, "the sink left never carried the alarm: \(windows)")
        #expect(Double(firstLoud) * 0.1 <= 2.0, "audible on the other sink \(Double(firstLoud) * 0.1) s after the loss")
    }

    /// The whole server dies mid-alarm: the terminal bell takes over at once (as it did when the
    /// alarm played through ALSA's `pulse` plugin), and when the server is back the alarm returns
    /// to it, heard on its monitor.
    static func theServerKilledMidAlarmRingsTheBellAndComesBackWithIt(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let (status, events, messages, afterRestart) = try await onOwnThread {
            // Long enough for several reopens (after 2, 4, 8, 8… s) while a loaded machine brings
            // the server back (a PipeWire whose session manager must be started again can take
            // 10 s and more); stopped once the alarm is back.
            let nap = try ServerNap(on: pulse, ringLimit: 60)
            _ = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }
            pulse.killDaemon()
            _ = try nap.events.waitBlocking(for: "the bell") {
                $0["event"] as? String == "output" && $0["output"] as? String == "terminal bell"
            }
            _ = try nap.messages.waitBlocking(for: "the bell rung after the loss") { _ in
                nap.messages.text.components(separatedBy: "was lost").last?.contains("ALARM") == true
            }
            try pulse.startDaemon()
            let capture = try pulse.startCapture(name: "after-restart.raw")
            _ = try nap.events.waitBlocking(for: "the alarm back on the server") {
                $0["event"] as? String == "output" && $0["output"] as? String == "sound server"
            }
            usleep(2_500_000)
            pulse.stop(capture)
            let stop = try pulse.launch(BuiltProducts.executable("snoozefuse"), ["stop"])
            PrivatePulse.waitForExit(stop)
            let status = try nap.waitForEnd()
            return (status, nap.events.text, nap.messages.text,
                    try loudness(pulse.directory.appendingPathComponent("after-restart.raw")).loudestSecond)
        }
        #expect(status == 0, "\(messages)")
        #expect(events.contains("sound server was lost mid-alarm"), "\(events)")
        #expect(events.contains("\"outcome\":\"dismissed\""), "stopped once back: \(events)")
        #expect(afterRestart > 0.02, "the monitor after the server came back: \(afterRestart)")
    }

    /// The server dies mid-alarm on a machine whose card it held: ALSA `default` (configured
    /// nowhere here, as when it leads to the dead server) fails at once, and the card itself
    /// (`sysdefault`: here ALSA's file PCM, recording what it is given) takes the alarm over
    /// where it was; the bell sounds only in between.
    static func theServerKilledMidAlarmHandsTheAlarmToTheCard(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let (card, configuration) = try cardAsFilePCM(in: pulse.directory)
        let (status, events, messages) = try await onOwnThread {
            let nap = try ServerNap(on: pulse, ringLimit: 9, environment: ["ALSA_CONFIG_PATH": configuration.path])
            _ = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }
            pulse.killDaemon()
            _ = try nap.events.waitBlocking(for: "the card") {
                $0["event"] as? String == "output" && $0["output"] as? String == "ALSA sysdefault"
            }
            let status = try nap.waitForEnd()
            return (status, nap.events.text, nap.messages.text)
        }
        #expect(status == 0, "\(messages)")
        #expect(events.contains("ALSA default, then ALSA sysdefault are tried now"), "\(events)")
        #expect(events.contains("ALSA default in place of the sound server failed"), "\(events)")
        #expect(events.contains("ALSA sysdefault took the alarm over from the lost sound server"), "\(events)")
        #expect(events.contains("\"outcome\":\"ring_limit\""), "\(events)")
        // What the card was given: the rest of the alarm, loud.
        let recorded = try wavContents(card.path)
        #expect(recorded.seconds > 3, "the card recorded \(recorded.seconds) s")
        #expect(rms(recorded.samples) > 0.05)
    }

    /// The server frozen (SIGSTOP) mid-alarm for longer than every bounded call of the output,
    /// then woken (SIGCONT): its late answers reach no freed memory (the nap died with SIGSEGV in
    /// 4 of 4 runs, its guardian ringing the rest), the nap rings on to its limit and ends as
    /// itself, and the alarm is not silenced: the card takes it over while the server is frozen
    /// and keeps it to the end.
    static func aServerFrozenMidAlarmAndWokenLaterCrashesNothing(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let (card, configuration) = try cardAsFilePCM(in: pulse.directory)
        let (status, events, messages, guardianRang) = try await onOwnThread {
            let nap = try ServerNap(on: pulse, ringLimit: 24, environment: ["ALSA_CONFIG_PATH": configuration.path])
            _ = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }
            usleep(1_000_000)
            pulse.pauseDaemon()
            // Longer than each bound of the output (an answer's 0.8 s, a connection's 1 s, a
            // write's), so that every call pending when it froze has given up.
            usleep(7_000_000)
            pulse.resumeDaemon()
            let status = try nap.waitForEnd()
            let guardianLog = pulse.directory.appendingPathComponent(".local/state/snoozefuse/guardian.jsonl")
            let guardianRang = ((try? String(contentsOf: guardianLog, encoding: .utf8)) ?? "").contains(#""event":"alarm""#)
            return (status, nap.events.text, nap.messages.text, guardianRang)
        }
        #expect(status == 0, "\(messages)")
        #expect(events.contains("\"outcome\":\"ring_limit\""), "\(events)")
        #expect(!guardianRang, "the guardian rang: the nap died")
        #expect(events.contains("ALSA sysdefault took the alarm over from the lost sound server"), "\(events)")
        // The card took the alarm a few seconds into the freeze (3 s without a frame is a loss) and
        // kept it through the wake-up to the ring limit: the rest of the 24 s, loud.
        let recorded = try wavContents(card.path)
        #expect(recorded.seconds > 14 && rms(recorded.samples) > 0.05, "the card recorded \(recorded.seconds) s: \(events)")
    }

    /// Whichever way the alarm ends (dismissed from another terminal, SIGTERM), the person's
    /// mute and volume come back.
    static func theMuteAndVolumeComeBackWhenDismissedOrTerminated(on server: SoundServer) async throws {
        for ending in ["stop", "SIGTERM"] {
            let pulse = try PrivatePulse(server: server)
            defer { pulse.cleanUp() }
            try pulse.startDaemon()
            try pulse.pactl(["set-sink-mute", "nullsink", "1"])
            try pulse.pactl(["set-sink-volume", "nullsink", "7%"])
            let (heard, stopStatus, events, mutedAfter, volumeAfter) = try await onOwnThread {
                let nap = try ServerNap(on: pulse, ringLimit: 30)
                let heard = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }["level_dbfs"] as? Double
                var stopStatus: Int32 = 0
                if ending == "stop" {
                    let stop = try pulse.launch(BuiltProducts.executable("snoozefuse"), ["stop"])
                    PrivatePulse.waitForExit(stop)
                    stopStatus = stop.terminationStatus
                } else {
                    kill(nap.process.processIdentifier, SIGTERM)
                }
                for _ in 0 ..< 500 where nap.process.isRunning { usleep(20_000) }
                return (heard, stopStatus, nap.events.text, try pulse.sinkMuted(), try pulse.sinkVolumePercent())
            }
            #expect(heard != nil, "\(ending): \(events)")
            #expect(stopStatus == 0, "\(ending)")
            #expect(mutedAfter, "\(ending): the person's own mute is back; \(events)")
            #expect(volumeAfter == 7, "\(ending): the person's own volume is back; \(events)")
        }
    }

    /// The nap and its guardian both killed mid-alarm: nobody who played it is left, so the next
    /// command that finds the live state (a new nap, `stop` forgetting it) puts the person's mute
    /// and volume back.
    /// Whoever finds the state next puts the person's mute and volume back, unless the person
    /// changed the sink since (here to 45 %): then it is theirs, left as it is, and said so (the
    /// next nap set it back to "muted, 9 %", the level from before the old alarm). The interrupted
    /// nap is described as it was: it rang, by its nap (it said "was never rung").
    static func theNextCommandPutsTheMuteBackWhenNapAndGuardianBothDied(on server: SoundServer) async throws {
        // The newer level's case once, on PulseAudio: what decides it is the nap's, not the server's.
        for later in ["nap", "stop"] + (server == .pulseAudio ? ["nap after the person set 45 %"] : []) {
            let pulse = try PrivatePulse(server: server)
            defer { pulse.cleanUp() }
            try pulse.startDaemon()
            try pulse.pactl(["set-sink-mute", "nullsink", "1"])
            try pulse.pactl(["set-sink-volume", "nullsink", "9%"])
            let (fixedWhileRinging, mutedAfter, volumeAfter, said) = try await onOwnThread {
                let nap = try ServerNap(on: pulse, ringLimit: 60)
                _ = try nap.events.waitBlocking(for: "the proof") { $0["event"] as? String == "heard" }
                let fixed = try !pulse.sinkMuted() && pulse.sinkVolumePercent() == 60
                let statePath = pulse.directory.appendingPathComponent(".local/state/snoozefuse/session.json")
                let state = try JSONSerialization.jsonObject(with: Data(contentsOf: statePath)) as? [String: Any]
                let guardian = try #require((state?["guardianPid"] as? NSNumber)?.int32Value, "\(String(describing: state))")
                // Stopped first: a running nap replaces a guardian that dies.
                kill(nap.process.processIdentifier, SIGSTOP)
                kill(guardian, SIGKILL)
                kill(nap.process.processIdentifier, SIGKILL)
                PrivatePulse.waitForExit(nap.process)
                // The guardian is not this test's child: gone once nothing answers to its pid.
                for _ in 0 ..< 500 where kill(guardian, 0) == 0 && !(((try? String(contentsOfFile: "/proc/\(guardian)/stat", encoding: .utf8)) ?? "").contains(") Z ")) {
                    usleep(20_000)
                }
                if later.hasSuffix("45 %") { try pulse.pactl(["set-sink-volume", "nullsink", "45%"]) }
                var said = ""
                for _ in 0 ..< 50 {
                    let arguments = later.hasPrefix("nap") ? ["nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1",
                                                      "--device", "null", "--ring-limit", "1", "--dismiss", "key", "--quiet"] : ["stop"]
                    let command = try pulse.launch(BuiltProducts.executable("snoozefuse"), arguments)
                    let errors = LineCollector(command.standardError)
                    PrivatePulse.waitForExit(command)
                    usleep(100_000)
                    said = errors.text
                    // Until the dead guardian is reaped, `stop` may still see it holding the nap.
                    if command.terminationStatus == 0 { break }
                    usleep(200_000)
                }
                return (fixed, try pulse.sinkMuted(), try pulse.sinkVolumePercent(), said)
            }
            #expect(fixedWhileRinging, "\(later)")
            if later.hasSuffix("45 %") {
                #expect(!mutedAfter && volumeAfter == 45, "\(later): the person's newer level stays; it said: \(said)")
                #expect(said.contains("sink 'nullsink' is left as it is: its volume is 45 %, not the 60 % the alarm set"), "\(later): \(said)")
            } else {
                #expect(mutedAfter, "\(later): the person's mute is back; it said: \(said)")
                #expect(volumeAfter == 9, "\(later): the person's volume is back; it said: \(said)")
                #expect(said.contains("sink 'nullsink': volume back to 9 % and muted again"), "\(later): \(said)")
            }
            if later.hasPrefix("nap") {
                #expect(said.contains("): it rang at 20"), "\(later): \(said)")
                #expect(said.contains("(rung by its nap); this nap replaces it"), "\(later): \(said)")
                #expect(!said.contains("never rung"), "\(later): \(said)")
            }
        }
    }

    static func theGuardianPutsTheMuteBackAfterTheNapIsKilledMidAlarm(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
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
}

/// Both servers' scenarios, one at a time: each starts a sound server and plays real-time audio
/// with real-time threads, and two at once on two cores would starve the timing tests that run
/// beside them.
@Suite("Heard, not just played", .serialized)
struct HeardAlarmSuites {
    @Suite("on a private PulseAudio: mute, volume and routing")
    struct HeardAlarmTests {
        @Test func aMutedDefaultSinkAtFivePercentIsUnmutedRaisedHeardAndPutBack() async throws {
            try await HeardScenario.aMutedDefaultSinkAtFivePercentIsUnmutedRaisedHeardAndPutBack(on: .pulseAudio)
        }

        @Test func withNoFixVolumeAMutedSinkStaysMutedAndTheAlarmEscalatesToTheCardThenTheFallback() async throws {
            try await HeardScenario.withNoFixVolumeAMutedSinkStaysMutedAndTheAlarmEscalatesToTheCardThenTheFallback(on: .pulseAudio)
        }

        @Test func aHeadsetAsTheDefaultSinkRingsTheSpeakersTooUnlessRoutedToTheDefaultOnly() async throws {
            try await HeardScenario.aHeadsetAsTheDefaultSinkRingsTheSpeakersTooUnlessRoutedToTheDefaultOnly(on: .pulseAudio)
        }

        @Test func aMuteMadeWhileItRingsIsUndoneWithinTwoSeconds() async throws {
            try await HeardScenario.aMuteMadeWhileItRingsIsUndoneWithinTwoSeconds(on: .pulseAudio)
        }

        @Test func aSinkUnloadedMidAlarmIsLeftForAnotherWithinTwoSeconds() async throws {
            try await HeardScenario.aSinkUnloadedMidAlarmIsLeftForAnotherWithinTwoSeconds(on: .pulseAudio)
        }

        @Test func theServerKilledMidAlarmRingsTheBellAndComesBackWithIt() async throws {
            try await HeardScenario.theServerKilledMidAlarmRingsTheBellAndComesBackWithIt(on: .pulseAudio)
        }

        @Test func theServerKilledMidAlarmHandsTheAlarmToTheCard() async throws {
            try await HeardScenario.theServerKilledMidAlarmHandsTheAlarmToTheCard(on: .pulseAudio)
        }

        @Test func aServerFrozenMidAlarmAndWokenLaterCrashesNothing() async throws {
            try await HeardScenario.aServerFrozenMidAlarmAndWokenLaterCrashesNothing(on: .pulseAudio)
        }

        @Test func theMuteAndVolumeComeBackWhenDismissedOrTerminated() async throws {
            try await HeardScenario.theMuteAndVolumeComeBackWhenDismissedOrTerminated(on: .pulseAudio)
        }

        @Test func theGuardianPutsTheMuteBackAfterTheNapIsKilledMidAlarm() async throws {
            try await HeardScenario.theGuardianPutsTheMuteBackAfterTheNapIsKilledMidAlarm(on: .pulseAudio)
        }

        @Test func theNextCommandPutsTheMuteBackWhenNapAndGuardianBothDied() async throws {
            try await HeardScenario.theNextCommandPutsTheMuteBackWhenNapAndGuardianBothDied(on: .pulseAudio)
        }

        @Test func systemVolumeZeroIsRefused() async throws {
            let result = try await runProcess(BuiltProducts.executable("snoozefuse"), ["nap", "--no-hold", "--system-volume", "0", "--device", "null"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("--system-volume 0 would make the alarm silent"), "\(result.standardError)")
        }
    }

    /// The same scenarios on a private PipeWire (pipewire, wireplumber and pipewire-pulse on a session
    /// bus of the test's own), the sound server of current desktops.
    @Suite("on a private PipeWire: mute, volume and routing")
    struct HeardAlarmPipeWireTests {
        @Test func aMutedDefaultSinkAtFivePercentIsUnmutedRaisedHeardAndPutBack() async throws {
            try await HeardScenario.aMutedDefaultSinkAtFivePercentIsUnmutedRaisedHeardAndPutBack(on: .pipeWire)
        }

        @Test func withNoFixVolumeAMutedSinkStaysMutedAndTheAlarmEscalatesToTheCardThenTheFallback() async throws {
            try await HeardScenario.withNoFixVolumeAMutedSinkStaysMutedAndTheAlarmEscalatesToTheCardThenTheFallback(on: .pipeWire)
        }

        @Test func aHeadsetAsTheDefaultSinkRingsTheSpeakersTooUnlessRoutedToTheDefaultOnly() async throws {
            try await HeardScenario.aHeadsetAsTheDefaultSinkRingsTheSpeakersTooUnlessRoutedToTheDefaultOnly(on: .pipeWire)
        }

        @Test func aMuteMadeWhileItRingsIsUndoneWithinTwoSeconds() async throws {
            try await HeardScenario.aMuteMadeWhileItRingsIsUndoneWithinTwoSeconds(on: .pipeWire)
        }

        @Test func aSinkUnloadedMidAlarmIsLeftForAnotherWithinTwoSeconds() async throws {
            try await HeardScenario.aSinkUnloadedMidAlarmIsLeftForAnotherWithinTwoSeconds(on: .pipeWire)
        }

        @Test func theServerKilledMidAlarmRingsTheBellAndComesBackWithIt() async throws {
            try await HeardScenario.theServerKilledMidAlarmRingsTheBellAndComesBackWithIt(on: .pipeWire)
        }

        @Test func theServerKilledMidAlarmHandsTheAlarmToTheCard() async throws {
            try await HeardScenario.theServerKilledMidAlarmHandsTheAlarmToTheCard(on: .pipeWire)
        }

        @Test func theMuteAndVolumeComeBackWhenDismissedOrTerminated() async throws {
            try await HeardScenario.theMuteAndVolumeComeBackWhenDismissedOrTerminated(on: .pipeWire)
        }

        @Test func theGuardianPutsTheMuteBackAfterTheNapIsKilledMidAlarm() async throws {
            try await HeardScenario.theGuardianPutsTheMuteBackAfterTheNapIsKilledMidAlarm(on: .pipeWire)
        }

        @Test func theNextCommandPutsTheMuteBackWhenNapAndGuardianBothDied() async throws {
            try await HeardScenario.theNextCommandPutsTheMuteBackWhenNapAndGuardianBothDied(on: .pipeWire)
        }
    }
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// The proof of hearing on real servers, for the sounds people use: each file is made here with
/// sox or espeak-ng, given to a nap as `--sound FILE`, and the nap must say `heard` soon after the
/// alarm is due and never escalate (a false escalation pushes a working alarm onto every output).
/// A recording of the sink's monitor confirms the alarm was there.
private enum EverySoundScenario {
    /// A sound and how to make it: `sox ARGUMENTS` (or `espeak-ng` when the first word is it), and
    /// how many seconds of silence it starts with.
    struct Sound: Sendable {
        var name: String
        var file: String
        var command: [String]
        var silentStart = 0.0
    }

    static let sounds: [Sound] = [
        Sound(name: "two-tone chord (the issue's sound)", file: "chord.wav",
              command: ["sox", "-n", "-r", "44100", "-c", "2", "chord.wav", "synth", "2", "sine", "880", "sine", "1320", "vol", "0.6"]),
        Sound(name: "square sweep as FLAC", file: "sweep.flac",
              command: ["sox", "-n", "-r", "44100", "-c", "2", "sweep.flac", "synth", "1.5", "square", "600:1200", "vol", "0.5"]),
        Sound(name: "saw sweep", file: "saw.wav",
              command: ["sox", "-n", "-r", "48000", "-c", "2", "saw.wav", "synth", "2", "sawtooth", "200:2000", "vol", "0.5"]),
        Sound(name: "100 Hz tone", file: "low.wav", command: ["sox", "-n", "-r", "48000", "-c", "2", "low.wav", "synth", "2", "sine", "100", "vol", "0.5"]),
        Sound(name: "10 kHz tone", file: "high.wav", command: ["sox", "-n", "-r", "48000", "-c", "2", "high.wav", "synth", "2", "sine", "10000", "vol", "0.5"]),
        Sound(name: "white noise", file: "white.wav", command: ["sox", "-n", "-r", "44100", "-c", "2", "white.wav", "synth", "2", "whitenoise", "vol", "0.5"]),
        Sound(name: "pink noise", file: "pink.wav", command: ["sox", "-n", "-r", "44100", "-c", "2", "pink.wav", "synth", "2", "pinknoise", "vol", "0.5"]),
        Sound(name: "speech (espeak-ng)", file: "speech.wav", command: ["espeak-ng", "-w", "speech.wav", "Wake up. It is time to get up. The nap is over."]),
        Sound(name: "8 kHz mono", file: "mono8k.wav", command: ["sox", "-n", "-r", "8000", "-c", "1", "mono8k.wav", "synth", "2", "sine", "1000", "sine", "2500", "vol", "0.5"]),
        Sound(name: "stereo with a silent right channel", file: "left.wav",
              command: ["sox", "-n", "-r", "44100", "-c", "2", "left.wav", "synth", "2", "sine", "660", "vol", "0.5", "remix", "1", "0"]),
        Sound(name: "quiet (-30 dBFS)", file: "quiet.wav", command: ["sox", "-n", "-r", "44100", "-c", "1", "quiet.wav", "synth", "2", "sine", "1000", "vol", "0.0316"]),
        Sound(name: "a whisper (-46 dBFS, the issue's)", file: "whisper.wav",
              command: ["sox", "-n", "-r", "44100", "-c", "1", "whisper.wav", "synth", "2", "sine", "1000", "vol", "0.005"]),
        Sound(name: "first 2 s silent", file: "late.wav",
              command: ["sox", "-n", "-r", "44100", "-c", "2", "late.wav", "synth", "2", "sine", "750", "sine", "1125", "vol", "0.5", "pad", "2", "0"],
              silentStart: 2),
    ]

    static func make(_ sound: Sound, in directory: URL) throws -> URL {
        let process = Process()
        process.executableURL = executableInPath(sound.command[0])
        process.arguments = Array(sound.command.dropFirst())
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let file = directory.appendingPathComponent(sound.file)
        guard process.terminationStatus == 0, FileManager.default.fileExists(atPath: file.path) else {
            throw ScenarioFailure(description: "\(sound.command.joined(separator: " ")) failed (\(process.terminationStatus))")
        }
        return file
    }

    /// Every sound as the alarm, one nap after another: heard within the first blocks after it is
    /// audible, never escalated; the monitor carries it, at the alarm's loudness (a quiet file and
    /// a whisper raised to it, not heard as they are).
    static func everySoundIsHeardAndNoneEscalates(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let results = try await onOwnThread { () -> [(Sound, Int32, String, Double)] in
            var results: [(Sound, Int32, String, Double)] = []
            for sound in sounds {
                let file = try make(sound, in: pulse.directory)
                let capture = try pulse.startCapture(name: "\(sound.file).raw")
                let nap = try ServerNap(on: pulse, ringLimit: 3 + Int(sound.silentStart), options: ["--sound", file.path])
                let status = try nap.waitForEnd()
                pulse.stop(capture)
                let level = try loudness(pulse.directory.appendingPathComponent("\(sound.file).raw"))
                results.append((sound, status, nap.events.text, level.loudestSecond))
            }
            return results
        }
        for (sound, status, events, loudest) in results {
            #expect(status == 0, "\(sound.name): exit \(status)")
            let heard = events.split(separator: "\n").compactMap { line -> [String: Any]? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      object["event"] as? String == "heard" else { return nil }
                return object
            }
            #expect(heard.count == 1, "\(sound.name): \(heard.count) heard events: \(events)")
            if let after = heard.first?["after"] as? Double {
                // The server plays what is written up to about 0.75 s later (the stream's buffer);
                // then a quarter-second block or two; and the silence the file starts with.
                #expect(after <= sound.silentStart + 2, "\(sound.name): heard \(after) s after it was due")
            }
            #expect(!events.contains("escalated_"), "\(sound.name) escalated: \(events)")
            // At --volume 80, a sound at the alarm's loudness (-5 LUFS) is about -9 dBFS RMS on the
            // monitor; one its peaks hold back (speech), a few dB below; never a whisper.
            if let level = heard.first?["level_dbfs"] as? Double {
                #expect(level >= -22, "\(sound.name): heard at \(level) dBFS")
            }
            #expect(!events.contains("\"unheard\""), "\(sound.name) went unheard: \(events)")
            #expect(loudest > 0.01, "\(sound.name): the monitor's loudest second \(loudest)")
        }
    }

    /// An alarm stream muted and lowered once in a mixer is restored so by the server for the
    /// next alarm (module-stream-restore on PulseAudio, restore-stream in WirePlumber): the nap
    /// unmutes it and sets it to 100 % before the sink is touched, says so, and is heard.
    static func anAlarmStreamTheServerRestoresMutedIsFixedAndHeard(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        if server == .pulseAudio { try pulse.pactl(["load-module", "module-stream-restore"]) }
        let (status, events, level) = try await onOwnThread {
            // Another alarm stream (the same role), muted and lowered in a mixer: the server
            // remembers that for alarm streams.
            let player = try pulse.launch(executableInPath("pacat"), ["--property=media.role=alarm", "--raw", "--format=s16le",
                                                                      "--rate=44100", "--channels=2", "/dev/zero"])
            var index: String?
            try poll("pacat's stream") {
                index = (try? pulse.pactl(["list", "short", "sink-inputs"], output: true))?
                    .split(separator: "\n").first.map { String($0.split(separator: "\t").first ?? "") }
                return index?.isEmpty == false
            }
            try pulse.pactl(["set-sink-input-mute", index ?? "", "1"])
            try pulse.pactl(["set-sink-input-volume", index ?? "", "10%"])
            usleep(500_000)
            pulse.stop(player)
            let before = try doctorReport(pulse)
            let capture = try pulse.startCapture(name: "restored.raw")
            let nap = try ServerNap(on: pulse, ringLimit: 4)
            let status = try nap.waitForEnd()
            pulse.stop(capture)
            return (status, nap.events.text + "\n" + before + "\nAFTER\n" + (try doctorReport(pulse)),
                    try loudness(pulse.directory.appendingPathComponent("restored.raw")))
        }
        // doctor said what the server would restore, and once the nap fixed it, no more.
        let (said, after) = (events.components(separatedBy: "AFTER").first ?? "", events.components(separatedBy: "AFTER").last ?? "")
        #expect(said.contains("alarm stream") && said.contains("the sound server gives a new alarm stream muted and at 10 %"), "\(said)")
        #expect(!after.contains("alarm stream"), "the server now remembers the nap's 100 %: \(after)")
        #expect(status == 0)
        #expect(events.contains("\"what\":\"stream_fixed\""), "\(events)")
        #expect(events.contains("was muted and at 10 % (the server restored what a mixer once set for alarm streams): unmuted it and set it to 100 %"),
                "\(events)")
        #expect(events.contains("\"event\":\"heard\""), "\(events)")
        #expect(!events.contains("escalated_"), "\(events)")
        #expect(level.loudestSecond > 0.05, "the monitor's loudest second \(level.loudestSecond)")
    }

    /// The alarm's own stream muted in a mixer while other music plays on the same sink: with
    /// `--no-fix-volume` the nap may not unmute it, and the music is no proof (the sink is
    /// unheard, then the nap escalates); by default it unmutes its stream and is heard again.
    static func itsOwnStreamMutedUnderMusicIsNoProofAndIsUnmuted(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let music = try make(Sound(name: "music", file: "music.wav",
                                   command: ["sox", "-n", "-r", "44100", "-c", "2", "music.wav", "synth", "30", "sine", "196", "sine", "247",
                                             "sine", "294", "tremolo", "3", "40", "vol", "0.5"]), in: pulse.directory)
        for fixes in [false, true] {
            let (events, loudDuringMute) = try await onOwnThread { () -> (String, Double) in
                let nap = try ServerNap(on: pulse, ringLimit: 10, options: fixes ? [] : ["--no-fix-volume"])
                _ = try nap.events.waitBlocking(for: "the first proof") { $0["event"] as? String == "heard" }
                let player = try pulse.launch(executableInPath("pacat"), ["--file-format=wav", music.path])
                var index: String?
                try poll("the alarm's stream") {
                    index = (try? pulse.pactl(["list", "sink-inputs"], output: true)).flatMap(alarmStreamIndex)
                    return index != nil
                }
                let capture = try pulse.startCapture(name: "music-\(fixes).raw")
                try pulse.pactl(["set-sink-input-mute", index ?? "", "1"])
                if fixes {
                    _ = try nap.events.waitBlocking(for: "the stream fixed") { $0["what"] as? String == "stream_fixed" }
                } else {
                    _ = try nap.events.waitBlocking(for: "the sink unheard") { $0["what"] as? String == "unheard" }
                    _ = try nap.events.waitBlocking(for: "an escalation") { $0["what"] as? String == "escalated_fix_levels" }
                }
                usleep(1_500_000)
                pulse.stop(capture)
                pulse.stop(player)
                _ = try nap.waitForEnd()
                return (nap.events.text, try loudness(pulse.directory.appendingPathComponent("music-\(fixes).raw")).loudShare)
            }
            // The music made the monitor loud the whole time.
            #expect(loudDuringMute > 0.8, "fixes \(fixes): \(loudDuringMute)")
            let proofs = events.components(separatedBy: "\"event\":\"heard\"").count - 1
            if fixes {
                #expect(events.contains("the alarm's own stream on sink 'nullsink' was muted while it rang: unmuted it"), "\(events)")
                #expect(!events.contains("escalated_"), "\(events)")
            } else {
                // Heard once before the mute; after it, unheard and escalated, never heard again.
                #expect(proofs == 1, "\(events)")
                #expect(!events.contains("stream_fixed"), "\(events)")
            }
        }
    }

    /// An HDMI output as the default sink (its card profile says so, as a real one's does) beside
    /// the laptop's speakers: the alarm rings on both, the speakers' monitor carries it, and
    /// `doctor` says why the speakers are used.
    static func aDisplayAsTheDefaultRingsTheSpeakersToo(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        try pulse.addSink("display", properties: "'device.profile.name=hdmi-stereo device.bus=pci device.form_factor=internal'")
        try pulse.addSink("speakers", properties: "device.form_factor=internal")
        try pulse.pactl(["set-default-sink", "display"])
        let (status, events, display, speakers, doctor) = try await onOwnThread {
            let display = try pulse.startCapture(name: "display.raw", sink: "display")
            let speakers = try pulse.startCapture(name: "speakers.raw", sink: "speakers")
            let nap = try ServerNap(on: pulse, ringLimit: 4)
            let status = try nap.waitForEnd()
            pulse.stop(display)
            pulse.stop(speakers)
            return (status, nap.events.text, try loudness(pulse.directory.appendingPathComponent("display.raw")),
                    try loudness(pulse.directory.appendingPathComponent("speakers.raw")), try doctorReport(pulse))
        }
        #expect(status == 0)
        #expect(events.contains("speakers: the default sink is a display (HDMI) on pci, which may be off, muted on its own or without speakers"),
                "\(events)")
        #expect(display.loudestSecond > 0.02, "the display's monitor: \(display.loudestSecond)")
        #expect(speakers.loudestSecond > 0.02, "the speakers' monitor: \(speakers.loudestSecond)")
        #expect(!events.contains("escalated_"), "\(events)")
        let speakersLine = doctor.split(separator: "\n").first { $0.contains(" speakers (") } ?? ""
        #expect(speakersLine.contains("the alarm plays here (the default sink is a display (HDMI) on pci"), "\(doctor)")
        #expect(!speakersLine.contains("not used by the alarm"), "\(doctor)")
    }

    /// The proof's floor: the alarm's own stream turned down to 10 % in a mixer (with
    /// --no-fix-volume, so the nap may not undo it) still carries the alarm's waveform to the
    /// monitor, 60 dB down: that is no proof. The nap says the sink carries it too quietly, the
    /// sink is unheard, and the nap escalates.
    static func anAlarmTurnedDownInAMixerIsNotHeard(on server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let events = try await onOwnThread { () -> String in
            let nap = try ServerNap(on: pulse, ringLimit: 8, options: ["--no-fix-volume"])
            _ = try nap.events.waitBlocking(for: "the first proof") { $0["event"] as? String == "heard" }
            var index: String?
            try poll("the alarm's stream") {
                index = (try? pulse.pactl(["list", "sink-inputs"], output: true)).flatMap(alarmStreamIndex)
                return index != nil
            }
            try pulse.pactl(["set-sink-input-volume", index ?? "", "10%"])
            _ = try nap.events.waitBlocking(for: "the sink unheard") { $0["what"] as? String == "unheard" }
            _ = try nap.events.waitBlocking(for: "an escalation") { $0["what"] as? String == "escalated_fix_levels" }
            _ = try nap.waitForEnd()
            return nap.events.text
        }
        #expect(events.contains("carries the alarm at -"), "\(events)")
        #expect(events.contains("below the -"), "\(events)")
        #expect(events.contains("\"what\":\"unheard\""), "\(events)")
    }

    /// What `snoozefuse doctor` says on `pulse`.
    static func doctorReport(_ pulse: PrivatePulse) throws -> String {
        let doctor = try pulse.launch(BuiltProducts.executable("snoozefuse"), ["doctor"])
        let output = LineCollector(doctor.standardOutput)
        PrivatePulse.waitForExit(doctor)
        usleep(200_000)
        return output.text
    }

    /// The index of the nap's stream in `pactl list sink-inputs`.
    static func alarmStreamIndex(_ listing: String) -> String? {
        for block in listing.components(separatedBy: "Sink Input #").dropFirst() where block.contains("media.role = \"alarm\"")
            && block.contains("application.name = \"snoozefuse\"") {
            return block.split(separator: "\n").first.map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}

private struct ScenarioFailure: Error, CustomStringConvertible {
    var description: String
}

/// Checks `condition` every 50 ms until it holds, for at most 10 s.
private func poll(_ what: String, _ condition: () -> Bool) throws {
    for _ in 0 ..< 200 {
        if condition() { return }
        usleep(50_000)
    }
    throw ScenarioFailure(description: "\(what) did not come within 10 s")
}

extension HeardAlarmSuites {
    @Suite("on a private PulseAudio: every sound, the alarm's own stream")
    struct EverySoundPulseAudioTests {
        @Test func everySoundIsHeardAndNoneEscalates() async throws {
            try await EverySoundScenario.everySoundIsHeardAndNoneEscalates(on: .pulseAudio)
        }

        @Test func anAlarmStreamTheServerRestoresMutedIsFixedAndHeard() async throws {
            try await EverySoundScenario.anAlarmStreamTheServerRestoresMutedIsFixedAndHeard(on: .pulseAudio)
        }

        @Test func itsOwnStreamMutedUnderMusicIsNoProofAndIsUnmuted() async throws {
            try await EverySoundScenario.itsOwnStreamMutedUnderMusicIsNoProofAndIsUnmuted(on: .pulseAudio)
        }

        @Test func aDisplayAsTheDefaultRingsTheSpeakersToo() async throws {
            try await EverySoundScenario.aDisplayAsTheDefaultRingsTheSpeakersToo(on: .pulseAudio)
        }

        @Test func anAlarmTurnedDownInAMixerIsNotHeard() async throws {
            try await EverySoundScenario.anAlarmTurnedDownInAMixerIsNotHeard(on: .pulseAudio)
        }
    }

    @Suite("on a private PipeWire: every sound, the alarm's own stream")
    struct EverySoundPipeWireTests {
        @Test func everySoundIsHeardAndNoneEscalates() async throws {
            try await EverySoundScenario.everySoundIsHeardAndNoneEscalates(on: .pipeWire)
        }

        @Test func anAlarmStreamTheServerRestoresMutedIsFixedAndHeard() async throws {
            try await EverySoundScenario.anAlarmStreamTheServerRestoresMutedIsFixedAndHeard(on: .pipeWire)
        }

        @Test func itsOwnStreamMutedUnderMusicIsNoProofAndIsUnmuted() async throws {
            try await EverySoundScenario.itsOwnStreamMutedUnderMusicIsNoProofAndIsUnmuted(on: .pipeWire)
        }

        @Test func aDisplayAsTheDefaultRingsTheSpeakersToo() async throws {
            try await EverySoundScenario.aDisplayAsTheDefaultRingsTheSpeakersToo(on: .pipeWire)
        }
    }
}

import SnoozeFuseSystem
import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

@Suite("Audio alarm output", .serialized)
struct AudioAlarmTests {
    @Test("a device that does not exist falls back along the chain, names each failure, and still sounds")
    func nonexistentDeviceFallsBack() async throws {
        let pipe = Pipe()
        let bell = TerminalBellAlarm(fileDescriptor: pipe.fileHandleForWriting.fileDescriptor, isTerminal: false,
                                     usesColour: false, hint: "(test)", loop: testLoop)
        // This test is about the chain, not the time limits (AudioAlarmStallTests): limits far above
        // what a starved test process can take keep the outcome the same on a loaded machine.
        let output = AudioAlarmOutput(device: "nonexistent", settings: AlarmPlaybackSettings(), fallback: bell,
                                      loop: testLoop, openTimeout: .seconds(60), silenceTimeout: .seconds(60))
        #expect(output.devices == ["nonexistent", "default"])
        let report = await output.start(reason: .nap)
        await output.stop()
        #expect(report.fallbacks.first?.contains("ALSA nonexistent failed") == true, "\(report.fallbacks)")
        #expect(report.fallbacks.first?.contains("Unknown PCM nonexistent") == true)
        if ALSADeviceList.probePlayback("default").opens {
            // A machine with sound: `default` takes over.
            #expect(report.output == "ALSA default")
            #expect(report.fallbacks.count == 1)
        } else {
            // No sound card and no server: the bell sounds, after both failures.
            #expect(report.output == "terminal bell")
            #expect(report.fallbacks.count == 2)
            #expect(report.fallbacks.last?.contains("ALSA default failed") == true, "\(report.fallbacks)")
            try pipe.fileHandleForWriting.close()
            let written = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(written.contains("\u{07}ALARM (nap over) (test)"))
        }
    }

    @Test("arming renders ahead and writes the first frame at the due instant, measuring its lateness")
    func armedStartMeasuresLateness() async throws {
        let loop = EventLoop(name: "test-alarm")
        let bell = TerminalBellAlarm(fileDescriptor: -1, isTerminal: false, usesColour: false, hint: "", loop: loop)
        // Its own executor and time limits no loaded test machine reaches: this is about the first
        // frame's timing, not the hand-over (whose limits the frozen-server tests check).
        let output = AudioAlarmOutput(device: "null", settings: AlarmPlaybackSettings(), fallback: bell,
                                      loop: loop,
                                      openTimeout: .seconds(60), silenceTimeout: .seconds(60))
        await output.arm(reason: .max, after: .milliseconds(300))
        let report = await output.start(reason: .max)
        await output.stop()
        #expect(report.output == "ALSA null")
        #expect(report.fallbacks.isEmpty)
        let lateness = try #require(report.lateness)
        // Never early: the audio thread slept until the due instant before writing.
        #expect(lateness >= .zero, "lateness \(lateness)")
    }

    @Test("bad sound files exit 65 (66 when missing) with the path and the reason, from nap and sounds play",
          arguments: BadSound.allCases)
    func badSoundFiles(kind: BadSound) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try kind.make(in: directory)
        let binary = BuiltProducts.executable("snoozefuse")
        for arguments in [["sounds", "play", path, "--device", "null", "--duration", "1"],
                          ["nap", "--no-hold", "--preset", "quick-test", "--device", "null", "--sound", path]] {
            let result = try await runProcess(binary, arguments)
            #expect(result.status == kind.expectedStatus, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(path), "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(kind.reason), "\(arguments): \(result.standardError)")
            // Reported before anything started: no session events.
            #expect(!result.standardOutput.contains("\"event\""))
        }
    }

    enum BadSound: String, CaseIterable, CustomTestStringConvertible {
        case missing, empty, truncatedHeader, noFrames, notAudio, unsupportedEncoding

        var testDescription: String { rawValue }
        var expectedStatus: Int32 { self == .missing ? 66 : 65 }
        var reason: String {
            switch self {
            case .missing: "No such file or directory"
            case .empty, .notAudio: "Format not recognised"
            case .truncatedHeader: "No 'data' chunk"
            case .noFrames: "no audio frames"
            case .unsupportedEncoding: "libsndfile error"
            }
        }

        func make(in directory: URL) throws -> String {
            let url = directory.appendingPathComponent("\(rawValue).\(self == .unsupportedEncoding ? "caf" : "wav")")
            let wavHeader: [UInt8] = Array("RIFF".utf8) + le32(36 + 4_000) + Array("WAVEfmt ".utf8) + le32(16)
                + le16(1) + le16(1) + le32(8_000) + le32(16_000) + le16(2) + le16(16)
                + Array("data".utf8) + le32(4_000)
            switch self {
            case .missing:
                return url.path
            case .empty:
                try Data().write(to: url)
            case .truncatedHeader:
                try Data(wavHeader.prefix(30)).write(to: url)
            case .noFrames:
                // A complete header whose data chunk promises 2000 frames, and no data at all.
                try Data(wavHeader).write(to: url)
            case .notAudio:
                try Data("This is a shopping list, not a sound.\n".utf8).write(to: url)
            case .unsupportedEncoding:
                // CAF with AAC packets, which libsndfile cannot decode.
                var bytes: [UInt8] = Array("caff".utf8) + be16(1) + be16(0)
                bytes += Array("desc".utf8) + be64(32)
                bytes += be64(44_100.0.bitPattern) + Array("aac ".utf8) + be32(0) + be32(0) + be32(1024)
                    + be32(2) + be32(0)
                bytes += Array("data".utf8) + be64(12) + be32(0) + [UInt8](repeating: 0x21, count: 8)
                try Data(bytes).write(to: url)
            }
            return url.path
        }

        private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        private func le32(_ value: UInt32) -> [UInt8] { le16(UInt16(value & 0xFFFF)) + le16(UInt16(value >> 16)) }
        private func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        private func be32(_ value: UInt32) -> [UInt8] { be16(UInt16(value >> 16)) + be16(UInt16(value & 0xFFFF)) }
        private func be64(_ value: UInt64) -> [UInt8] { be32(UInt32(value >> 32)) + be32(UInt32(value & 0xFFFF_FFFF)) }
    }
}

/// The event loop the tests' outputs run on (as a nap's run on its command's loop).
let testLoop = EventLoop(name: "test-loop")

@Suite("Sleep sound on ALSA", .serialized)
struct SleepSoundTests {
    /// Notices from the sleep sound, in order.
    final class Notices: Sendable {
        let lines = Locked<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    @Test("a sleep sound plays exactly as long as it was given, faded in and out, through the file PCM")
    func playsForItsDurationAndEndsSilent() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sine = directory.appendingPathComponent("sine.wav").path
        try runTool("sox", ["-n", "-r", "48000", "-c", "1", "-e", "floating-point", "-b", "32",
                            sine, "synth", "0.5", "sine", "500", "gain", "-n"])
        let out = directory.appendingPathComponent("sleep.wav").path
        let notices = Notices()
        let settings = AlarmPlaybackSettings(sound: .file(path: sine), gain: AlarmGain(percent: 40, fadeIn: .seconds(10)),
                                             configuration: PCMConfiguration(sampleRate: 48_000, channels: 1))
        let sleep = AudioSleepSound(device: "file:FILE=\(out),FORMAT=raw", settings: settings, loop: testLoop, onNotice: notices.append)
        await sleep.play(for: .seconds(3))
        // The `file` PCM takes frames faster than real time: wait for all 3 s of them.
        let expectedBytes = 3 * 48_000 * 4
        for _ in 0 ..< 1_000 where ((try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0) < expectedBytes {
            try await Task.sleep(for: .milliseconds(10))
        }
        await sleep.stop()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(bytes.count == expectedBytes, "exactly the 3 s it was given")
        let samples = rawFloats(in: bytes)
        // Fade-in and fade-out each take a third of a short play (1 s here, not the asked 10 s).
        func rms(_ range: Range<Int>) -> Double { SnoozeFuseTestSupport.rms(samples[range]) }
        #expect(abs(samples[0]) < 0.001 && samples.suffix(48).allSatisfy { abs($0) < 0.002 }, "silent at both ends")
        #expect(abs(rms(48_000 ..< 96_000) - 0.4 / 2.0.squareRoot()) < 0.005, "full level in the middle second")
        #expect(rms(0 ..< 24_000) < rms(24_000 ..< 48_000) && rms(96_000 ..< 120_000) > rms(120_000 ..< 144_000))
        #expect(notices.lines.withLock { $0 }.isEmpty)
    }

    @Test("a device that cannot open costs the nap nothing: a notice, silence, and play returns at once")
    func aMissingDeviceIsANotice() async throws {
        let notices = Notices()
        let sleep = AudioSleepSound(device: "nonexistent", settings: AlarmPlaybackSettings(), loop: testLoop, onNotice: notices.append)
        await sleep.play(for: .seconds(30))
        for _ in 0 ..< 1_000 where notices.lines.withLock({ $0 }).isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        let notice = try #require(notices.lines.withLock { $0 }.first)
        #expect(notice.hasPrefix("no sleep sound: "), "\(notice)")
        #expect(notice.contains("nonexistent") && notice.hasSuffix("napping in silence"), "\(notice)")
        await sleep.stop()
    }
}

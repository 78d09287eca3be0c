import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport
import Testing

/// The 16-bit path (`AlarmS16Renderer`): a 16-bit PCM file on a device that took S16 at the file's
/// rate and channel count, recorded by ALSA's `file` PCM, against the float chain and the file itself.
@Suite("Alarm S16 path", .serialized)
struct AlarmS16PathTests {
    static let rate = 44_100

    /// A 16-bit stereo WAV holding 0.5 s (500 cycles, a seamless loop) of a 1 kHz sine on both
    /// channels at `gain` dB, undithered.
    static func makeSine(in folder: TemporaryFolder, name: String = "sine16.wav",
                         seconds: String = "0.5", channels: [String] = ["sine", "1000", "sine", "1000"],
                         gain: String = "-1") throws -> String {
        let path = folder.path(name)
        try runTool("sox", ["-D", "-n", "-r", "\(rate)", "-c", "2", "-b", "16", "-e", "signed-integer", path,
                            "synth", seconds] + channels + ["gain", gain])
        return path
    }

    /// Plays `path` into a `file` PCM with the given formats and returns the recording as S16 values
    /// (float recordings rounded as `PCMOutput` rounds them for an S16 device).
    static func record(_ path: String, formats: [PCMSampleFormat], gain: AlarmGain, duration: Duration,
                       from position: Duration = .zero, in folder: TemporaryFolder,
                       expecting sampleFormat: PCMSampleFormat) async throws -> [(Int, Int)] {
        let out = folder.path("out-\(UUID().uuidString).wav")
        let settings = AlarmPlaybackSettings(
            sound: .file(path: path), gain: gain,
            configuration: PCMConfiguration(sampleRate: rate, channels: 2, formats: formats), duration: duration)
        let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings, from: position)
        #expect(playback.format.sampleFormat == sampleFormat)
        #expect(await playback.thread.outcome() == .finished)
        let recording = try AlarmPlayerTestSupport.readRawWAV(URL(fileURLWithPath: out))
        #expect(recording.sampleRate == rate)
        #expect(recording.channels == 2)
        func int16(_ sample: Float) -> Int { Int(min(max((sample * 32768).rounded(), -32768), 32767)) }
        return recording.frames.map { (int16($0.0), int16($0.1)) }
    }

    /// The file's own samples, interleaved.
    static func fileSamples(_ path: String) throws -> [Int16] {
        var file = try SoundFile(readingAtPath: path)
        var samples = [Int16](repeating: 0, count: Int(file.info.frames) * file.info.channels)
        let frames = try samples.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        #expect(frames == Int(file.info.frames))
        return samples
    }

    @Test("at 50 % with a 1 s fade-in: 1 kHz, the documented fade curve, a seamless loop, and within 1 LSB of the float chain")
    func fadeAndVolumeAgainstFloatChain() async throws {
        let folder = try TemporaryFolder()
        let sine = try Self.makeSine(in: folder)
        let gain = AlarmGain(percent: 50, fadeIn: .seconds(1))
        let s16 = try await Self.record(sine, formats: [.int16LE], gain: gain, duration: .seconds(3), in: folder,
                                        expecting: .int16LE)
        let float = try await Self.record(sine, formats: [.float32LE], gain: gain, duration: .seconds(3), in: folder,
                                          expecting: .float32LE)
        let rate = Self.rate
        #expect(s16.count == 3 * rate)
        #expect(float.count == s16.count)

        // The same samples as the float chain, to within 1 LSB, frame by frame, fade included.
        var largestDifference = 0
        for (a, b) in zip(s16, float) {
            largestDifference = max(largestDifference, abs(a.0 - b.0), abs(a.1 - b.1))
        }
        #expect(largestDifference <= 1, "largest difference from the float chain: \(largestDifference) LSB")

        let left = s16.map { Float($0.0) / 32768 }
        #expect(s16.allSatisfy { $0.0 == $0.1 })
        // Frequency over the settled last second.
        let settled = Array(left[(2 * rate)...])
        var crossings = 0
        for index in 1 ..< settled.count where settled[index - 1] < 0 && settled[index] >= 0 {
            crossings += 1
        }
        #expect(abs(crossings - 1000) <= 2, "rising zero crossings in 1 s: \(crossings)")
        #expect(AlarmPlayerTestSupport.goertzelPower(settled, frequency: 1000, rate: rate)
                > 1000 * AlarmPlayerTestSupport.goertzelPower(settled, frequency: 900, rate: rate))

        // RMS in 100 ms windows follows g(t) = v·sin(π/2·t/F) applied to the file's RMS (−1 dB).
        let peak = pow(10, -1.0 / 20)
        let window = rate / 10
        for start in stride(from: 0, to: left.count - window + 1, by: window) {
            let measured = AlarmPlayerTestSupport.rms(left[start ..< start + window])
            let expected = peak / 2.0.squareRoot()
                * AlarmPlayerTestSupport.rmsGain(gain, frames: start ..< start + window, rate: rate)
            #expect(abs(measured - expected) <= 0.01 + 0.02 * expected,
                    "window at \(Double(start) / Double(rate)) s: RMS \(measured), curve says \(expected)")
        }

        // No step larger than a 1 kHz sine of this amplitude makes, loop points (every 0.5 s) included.
        let limit = 0.5 * peak * 2 * Double.pi * 1000 / Double(rate) * 1.05 + 2.0 / 32768
        let largestStep = zip(left, left.dropFirst()).map { Double(abs($0 - $1)) }.max() ?? 0
        #expect(largestStep <= limit, "largest step \(largestStep), limit \(limit)")
    }

    @Test("at 100 % without a fade the file's samples pass through bit for bit, looped, from a resume position")
    func passThroughIsBitExact() async throws {
        let folder = try TemporaryFolder()
        // Different channels (1 kHz left, 500 Hz right) so a swapped or shifted frame shows.
        let sine = try Self.makeSine(in: folder, seconds: "0.25", channels: ["sine", "1000", "sine", "500"])
        let file = try Self.fileSamples(sine)
        let fileFrames = file.count / 2
        let position = Duration.milliseconds(100)
        let skip = Self.rate / 10
        let s16 = try await Self.record(sine, formats: [.int16LE], gain: AlarmGain(percent: 100, fadeIn: .zero),
                                        duration: .seconds(1), from: position, in: folder, expecting: .int16LE)
        // The stream ends 1 s into the alarm, which resumed 0.1 s in.
        #expect(s16.count == Self.rate - skip)
        var mismatches = 0
        for (index, frame) in s16.enumerated() {
            let source = (index + skip) % fileFrames
            if frame.0 != Int(file[2 * source]) || frame.1 != Int(file[2 * source + 1]) { mismatches += 1 }
        }
        #expect(mismatches == 0, "\(mismatches) of \(s16.count) frames differ from the file's")
    }

    @Test("by default a 16-bit file is played as S16, a float file as float")
    func defaultFormatFollowsTheFile() async throws {
        let folder = try TemporaryFolder()
        let sine16 = try Self.makeSine(in: folder)
        let sineFloat = folder.path("sine-float.wav")
        try runTool("sox", ["-n", "-r", "\(Self.rate)", "-c", "2", "-e", "floating-point", "-b", "32", sineFloat,
                            "synth", "0.5", "sine", "1000"])
        for (path, expected) in [(sine16, PCMSampleFormat.int16LE), (sineFloat, .float32LE)] {
            let settings = AlarmPlaybackSettings(sound: .file(path: path), gain: AlarmGain(percent: 80, fadeIn: .zero),
                                                 duration: .milliseconds(200))
            let out = folder.path("default-\(UUID().uuidString).wav")
            let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings)
            #expect(playback.format.sampleFormat == expected)
            #expect(playback.format.sampleRate == Self.rate)
            #expect(await playback.thread.outcome() == .finished)
        }
    }

    @Test("when the file fails mid-alarm the S16 path switches to the built-in tone, as the float chain does")
    func fallbackToToneWhenTheFileFails() throws {
        let folder = try TemporaryFolder()
        let sine = try Self.makeSine(in: folder, seconds: "1")
        let format = PCMStreamFormat(sampleFormat: .int16LE, sampleRate: Self.rate, channels: 2,
                                     bufferFrames: 4096, periodFrames: 1024)
        let renderer = try AlarmS16Renderer(file: LoopingSoundFileSource(path: sine), format: format,
                                            gain: AlarmGain(percent: 100, fadeIn: .zero))
        var buffer = [Int16](repeating: 0, count: 1024 * 2)
        let first = buffer.withUnsafeMutableBufferPointer { renderer.render(into: $0, format: format) }
        #expect(first == 1024)
        #expect(renderer.switchedToBuiltInTone == nil)
        #expect(Array(buffer) == Array(try Self.fileSamples(sine)[0 ..< 2048]))

        // The file loses its data: reading fails, and so does reading again from the start.
        #expect(truncate(sine, 44) == 0)
        let second = buffer.withUnsafeMutableBufferPointer { renderer.render(into: $0, format: format) }
        #expect(second == 1024)
        #expect(renderer.switchedToBuiltInTone != nil)
        // The tone from its start (mono on both channels), rounded to S16.
        var tone = AlarmToneSource(sampleRate: Self.rate)
        var expected = [Float](repeating: 0, count: 1024)
        _ = expected.withUnsafeMutableBufferPointer { tone.read(into: $0) }
        let expectedS16 = expected.flatMap { sample -> [Int16] in
            let value = Int16((sample * 32768).rounded())
            return [value, value]
        }
        #expect(buffer == expectedS16)
    }
}

import Foundation
import SnoozeFuseAudio
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// The alarm chain end to end through ALSA's `file` PCM (it records exactly what is written, with a
/// `null` slave, so it needs no sound card and runs faster than real time).
@Suite("Alarm player", .serialized)
struct AlarmPlayerTests {
    @Test("a 44.1 kHz 1 kHz sine at 50 % with a 2 s fade-in, resampled to 48 kHz stereo and looped")
    func sineThroughFilePCM() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 0.5 s is exactly 500 cycles: a seamless loop, so 3 s of output crosses 5 loop points.
        let sine = try AlarmPlayerTestSupport.makeFullScaleSine(in: directory, rate: 44_100)
        let out = directory.appendingPathComponent("out.wav").path
        let gain = AlarmGain(percent: 50, fadeIn: .seconds(2))
        let settings = AlarmPlaybackSettings(
            sound: .file(path: sine), gain: gain,
            configuration: PCMConfiguration(sampleRate: 48_000, channels: 2), duration: .seconds(3))

        let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings)
        #expect(playback.format.sampleRate == 48_000)
        #expect(playback.format.channels == 2)
        let outcome = await playback.thread.outcome()
        #expect(outcome == .finished)

        let recording = try AlarmPlayerTestSupport.readRawWAV(URL(fileURLWithPath: out))
        #expect(recording.sampleRate == 48_000)
        #expect(recording.channels == 2)
        let rate = 48_000
        // The length is right: exactly 3 s of frames.
        #expect(recording.frames.count == 3 * rate)
        // Both channels carry the same (mono) signal.
        #expect(recording.frames.allSatisfy { $0.0 == $0.1 })
        let left = recording.frames.map(\.0)

        // Frequency: rising zero crossings over the settled last second.
        let settled = Array(left[(2 * rate)...])
        var crossings = 0
        for index in 1 ..< settled.count where settled[index - 1] < 0 && settled[index] >= 0 {
            crossings += 1
        }
        #expect(abs(crossings - 1000) <= 2, "rising zero crossings in 1 s: \(crossings)")
        let goertzel1k = AlarmPlayerTestSupport.goertzelPower(settled, frequency: 1000, rate: rate)
        let goertzel900 = AlarmPlayerTestSupport.goertzelPower(settled, frequency: 900, rate: rate)
        #expect(goertzel1k > 1000 * goertzel900)

        // RMS envelope in 100 ms windows against the documented curve g(t) = v·sin(π/2·t/F).
        AlarmPlayerTestSupport.expectEnvelope(left, rate: rate, gain: gain)
        // Settles at 50 % of full-scale RMS.
        let settledRMS = AlarmPlayerTestSupport.rms(settled[...])
        #expect(abs(settledRMS - 0.5 / 2.0.squareRoot()) <= 0.005 / 2.0.squareRoot(), "settled RMS \(settledRMS)")

        // No discontinuity anywhere (loop points included): a 1 kHz sine of amplitude a changes by at
        // most a·2π·1000/48000 between samples; the fade only lowers that.
        let limit = 0.5 * 2 * Double.pi * 1000 / Double(rate) * 1.05
        var largest = 0.0
        var largestAt = 0
        for index in 1 ..< left.count {
            let step = abs(Double(left[index]) - Double(left[index - 1]))
            if step > largest { largest = step; largestAt = index }
        }
        #expect(largest <= limit, "largest step \(largest) at frame \(largestAt), limit \(limit)")
    }

    @Test("a stream that ends fades out along the mirrored curve to exactly 0, without a step")
    func fadeOutBeforeTheEnd() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sine = try AlarmPlayerTestSupport.makeFullScaleSine(in: directory, rate: 48_000)
        let out = directory.appendingPathComponent("out.wav").path
        let gain = AlarmGain(percent: 60, fadeIn: .milliseconds(500), fadeOut: .milliseconds(1500))
        let settings = AlarmPlaybackSettings(
            sound: .file(path: sine), gain: gain,
            configuration: PCMConfiguration(sampleRate: 48_000, channels: 1), duration: .seconds(3))
        let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings)
        #expect(await playback.thread.outcome() == .finished)

        let recording = try AlarmPlayerTestSupport.readRawWAV(URL(fileURLWithPath: out))
        let rate = 48_000
        let samples = recording.frames.map(\.0)
        #expect(samples.count == 3 * rate)
        AlarmPlayerTestSupport.expectEnvelope(samples, rate: rate, gain: gain, end: 3)
        // Full volume between the fades, silent at the very end.
        let middle = AlarmPlayerTestSupport.rms(samples[(rate / 2) ..< (3 * rate / 2)])
        #expect(abs(middle - 0.6 / 2.0.squareRoot()) < 0.005, "between the fades: RMS \(middle)")
        let lastMillisecond = samples.suffix(rate / 1000).map { abs($0) }.max() ?? 1
        #expect(lastMillisecond < 0.002, "the last millisecond peaks at \(lastMillisecond)")
        let largest = zip(samples, samples.dropFirst()).map { abs($0 - $1) }.max() ?? 1
        #expect(largest <= 0.6 * 2 * Float.pi * 1000 / 48_000 * 1.05, "largest step \(largest)")
    }

    @Test("a sleep sound whose source fails goes silent instead of beeping")
    func sourceFailureFallsBackToSilenceWhenAsked() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func play(_ fallback: SourceFailureFallback, name: String) async throws -> [Float] {
            let out = directory.appendingPathComponent(name).path
            let failing = CustomAlarmSound(name: "fails after 0.5 s") { rate in FailingSource(sampleRate: rate, goodFrames: rate / 2) }
            let settings = AlarmPlaybackSettings(
                sound: .custom(failing), gain: AlarmGain(percent: 100, fadeIn: .zero),
                configuration: PCMConfiguration(sampleRate: 48_000, channels: 1), duration: .seconds(1),
                onSourceFailure: fallback)
            let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings)
            #expect(await playback.thread.outcome() == .finished)
            return try AlarmPlayerTestSupport.readRawWAV(URL(fileURLWithPath: out)).frames.map(\.0)
        }
        let silent = try await play(.silence, name: "silence.wav")
        #expect(silent.count == 48_000)
        #expect(silent[..<24_000].allSatisfy { $0 == 0.25 }, "the source's own frames play")
        #expect(silent[24_576...].allSatisfy { $0 == 0 }, "then silence, not the tone")
        // An alarm (the default) never goes silent: the built-in tone takes over.
        let alarm = try await play(.builtInTone, name: "tone.wav")
        #expect(AlarmPlayerTestSupport.rms(alarm[24_576 ..< 28_800]) > 0.3)
    }

    @Test("the built-in tone needs no file: 880 Hz beeps, four per second, at the device's rate")
    func builtInTone() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("tone.wav").path
        let settings = AlarmPlaybackSettings(
            sound: .builtInTone, gain: AlarmGain(percent: 100, fadeIn: .zero),
            configuration: PCMConfiguration(sampleRate: 44_100, channels: 1), duration: .seconds(2))
        let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings)
        #expect(await playback.thread.outcome() == .finished)
        let recording = try AlarmPlayerTestSupport.readRawWAV(URL(fileURLWithPath: out))
        #expect(recording.channels == 1)
        #expect(recording.frames.count == 2 * 44_100)
        let samples = recording.frames.map(\.0)
        let window = 4_410 // 100 ms
        // Per 100 ms window: beeps in windows 0, 2, 4, 6 of each second, silence in the rest.
        for index in 0 ..< samples.count / window {
            let rms = AlarmPlayerTestSupport.rms(samples[(index * window) ..< ((index + 1) * window)])
            let inSecond = index % 10
            if inSecond < 8 && inSecond % 2 == 0 {
                #expect(rms > 0.4, "window \(index) should beep, RMS \(rms)")
            } else {
                #expect(rms == 0, "window \(index) should be silent, RMS \(rms)")
            }
        }
        let beep = Array(samples[0 ..< window])
        #expect(AlarmPlayerTestSupport.goertzelPower(beep, frequency: 880, rate: 44_100)
                > 100 * AlarmPlayerTestSupport.goertzelPower(beep, frequency: 1000, rate: 44_100))
    }

    @Test("a file at the device's rate plays without resampling, stereo mixed down to mono")
    func stereoToMonoWithoutResampling() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stereo = directory.appendingPathComponent("stereo.wav").path
        // Left 0.5 DC-free sine, right silent: the mono mix is half of the left channel.
        try runTool("sox", ["-n", "-r", "48000", "-c", "2", "-e", "floating-point", "-b", "32", stereo,
                            "synth", "0.25", "sine", "500", "remix", "1", "0"])
        let out = directory.appendingPathComponent("mono.wav").path
        let settings = AlarmPlaybackSettings(
            sound: .file(path: stereo), gain: AlarmGain(percent: 100, fadeIn: .zero),
            configuration: PCMConfiguration(sampleRate: 48_000, channels: 1), duration: .seconds(1))
        let playback = try AlarmPlayer.start(device: "file:FILE=\(out),FORMAT=wav", settings: settings)
        #expect(await playback.thread.outcome() == .finished)
        let recording = try AlarmPlayerTestSupport.readRawWAV(URL(fileURLWithPath: out))
        #expect(recording.channels == 1)
        #expect(recording.frames.count == 48_000)
        let samples = recording.frames.map(\.0)
        let rms = AlarmPlayerTestSupport.rms(samples[...])
        #expect(abs(rms - 0.5 / 2.0.squareRoot()) < 0.005, "mono mix RMS \(rms)")
        // The loop (every 12 000 frames) is seamless: a 500 Hz sine of amplitude 0.5 steps at most 0.033.
        let largest = zip(samples, samples.dropFirst()).map { abs($0 - $1) }.max() ?? 0
        #expect(largest <= 0.5 * 2 * Float.pi * 500 / 48_000 * 1.02)
    }

    @Test("frame counts far past a day convert to durations without overflowing")
    func longStreamDurations() {
        // The `null` PCM takes frames as fast as they come: 10^10 frames take seconds to write.
        let format = PCMStreamFormat(sampleFormat: .int16LE, sampleRate: 44_100, channels: 2,
                                     bufferFrames: 22_050, periodFrames: 11_025)
        #expect(format.duration(ofFrames: 10_000_000_000 * 44_100 + 22_050)
                == .seconds(10_000_000_000) + .milliseconds(500))
        #expect(format.duration(ofFrames: 441) == .milliseconds(10))
    }

    @Test("a start gate holds the first write until its due instant")
    func gateDelaysFirstWrite() async throws {
        let due = BootInstant.now.advanced(by: .milliseconds(300))
        let (events, continuation) = AsyncStream.makeStream(of: PCMPlaybackThread.Event.self)
        let settings = AlarmPlaybackSettings(duration: .milliseconds(500))
        let playback = try AlarmPlayer.start(device: "null", settings: settings, due: due) { event in
            continuation.yield(event)
        }
        var firstWrite: BootInstant?
        for await event in events {
            if case .firstWrite(let at, _) = event { firstWrite = at }
            if case .ended = event { break }
        }
        _ = await playback.thread.outcome()
        let written = try #require(firstWrite)
        #expect(written >= due, "first write \(due.duration(to: written)) after the due instant")
    }
}

/// A source of constant 0.25 that fails after `goodFrames` frames, as a decoder error or a plugin
/// that stopped would.
struct FailingSource: AlarmSoundSource {
    let sampleRate: Int
    var channels: Int { 1 }
    let goodFrames: Int
    var played = 0
    var failure: SoundFileError?

    mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        let count = max(min(buffer.count, goodFrames - played), 0)
        buffer.update(repeating: 0.25)
        played += count
        if count < buffer.count {
            failure = SoundFileError(operation: .read, path: "test source", code: .noError, message: "stopped on purpose")
        }
        return count
    }

    mutating func seek(to position: Duration) {}
}

/// The alarm player's own helpers (they stay in this target: they take SnoozeFuseAudio's `AlarmGain`).
enum AlarmPlayerTestSupport {
    /// 0.5 s of a mono 1 kHz float sine at full scale (`gain -n`: sox's synth alone peaks at
    /// -3 dB), in `directory`; returns its path.
    static func makeFullScaleSine(in directory: URL, rate: Int) throws -> String {
        let sine = directory.appendingPathComponent("sine.wav").path
        try runTool("sox", ["-n", "-r", "\(rate)", "-c", "1", "-e", "floating-point", "-b", "32", sine,
                            "synth", "0.5", "sine", "1000", "gain", "-n"])
        return sine
    }

    /// Checks the RMS of `samples` (a full-scale sine, gained) in 100 ms windows against the
    /// documented curve (`AlarmGain.gain(atSeconds:endingAt:)`), within 1 % of full scale + 2 %.
    static func expectEnvelope(_ samples: [Float], rate: Int, gain: AlarmGain, end: Double? = nil,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let window = rate / 10
        let fullScaleRMS = 1 / 2.0.squareRoot()
        for start in stride(from: 0, to: samples.count - window + 1, by: window) {
            let measured = rms(samples[start ..< start + window])
            let expected = fullScaleRMS * rmsGain(gain, frames: start ..< start + window, rate: rate, end: end)
            #expect(abs(measured - expected) <= 0.01 + 0.02 * expected,
                    "window at \(Double(start) / Double(rate)) s: RMS \(measured), curve says \(expected)",
                    sourceLocation: sourceLocation)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Recording {
        var sampleRate: Int
        var channels: Int
        /// Frames as (first channel, second channel or the first again).
        var frames: [(Float, Float)]
    }

    /// Reads a WAV file's samples raw: 32 bits means float here (labelled so by the output when
    /// it closes; alsa-lib writes tag 1) and 16 bits means S16.
    static func readRawWAV(_ url: URL) throws -> Recording {
        let wav = try WAVFile(contentsOf: url)
        let channels = wav.channels
        guard channels > 0, wav.bitsPerSample == 16 || wav.bitsPerSample == 32 else {
            throw Failure(description: "unexpected layout: \(channels) channels, \(wav.bitsPerSample) bits")
        }
        let samples = wav.bitsPerSample == 32 ? rawFloats(in: wav.data) : rawS16AsFloats(in: wav.data)
        let frames = (0 ..< samples.count / channels).map { frame in
            (samples[frame * channels], samples[frame * channels + (channels > 1 ? 1 : 0)])
        }
        return Recording(sampleRate: wav.sampleRate, channels: channels, frames: frames)
    }

    /// The RMS of g(t) over `frames` at `rate`: what a full-scale signal's RMS is scaled by there.
    static func rmsGain(_ gain: AlarmGain, frames: Range<Int>, rate: Int, end: Double? = nil) -> Double {
        guard !frames.isEmpty else { return 0 }
        let meanSquare = frames.reduce(0.0) { sum, frame in
            let g = gain.gain(atSeconds: Double(frame) / Double(rate), endingAt: end)
            return sum + g * g
        }
        return (meanSquare / Double(frames.count)).squareRoot()
    }

    /// Kept so that the assertions read as they did: the shared `rms`.
    static func rms(_ samples: ArraySlice<Float>) -> Double { SnoozeFuseTestSupport.rms(samples) }

    /// The power of `frequency` in `samples` (Goertzel algorithm).
    static func goertzelPower(_ samples: [Float], frequency: Double, rate: Int) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
    }
}

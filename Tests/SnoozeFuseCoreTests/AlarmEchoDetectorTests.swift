import Foundation
@testable import SnoozeFuseCore
import Testing

/// Signals the proof is tested on, made here (deterministic: the same samples every run).
enum TestSignal {
    /// Sines at `frequencies`, summed and scaled so the peak is `peak`.
    static func tones(_ frequencies: [Double], seconds: Double, rate: Int, peak: Float = 0.6) -> [Float] {
        let count = Int(seconds * Double(rate))
        let scale = peak / Float(frequencies.count)
        return (0 ..< count).map { index in
            let t = Double(index) / Double(rate)
            return scale * Float(frequencies.reduce(0.0) { $0 + sin(2 * Double.pi * $1 * t) })
        }
    }

    /// A sweep from `low` to `high` Hz over each `period` s (then again), square or saw.
    static func sweep(_ low: Double, _ high: Double, period: Double, seconds: Double, rate: Int, square: Bool, peak: Float = 0.5) -> [Float] {
        var phase = 0.0
        return (0 ..< Int(seconds * Double(rate))).map { index in
            let t = Double(index) / Double(rate)
            let within = t.truncatingRemainder(dividingBy: period) / period
            phase += (low + (high - low) * within) / Double(rate)
            let cycle = phase - phase.rounded(.down)
            return peak * (square ? (cycle < 0.5 ? 1 : -1) : Float(2 * cycle - 1))
        }
    }

    /// White noise from a seeded generator, uniform in ±peak.
    static func white(seconds: Double, rate: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15, peak: Float = 0.4) -> [Float] {
        var state = seed
        return (0 ..< Int(seconds * Double(rate))).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return peak * (Float(state >> 40) / Float(1 << 24) * 2 - 1)
        }
    }

    /// Pink noise: white noise through Paul Kellet's economy filter (−3 dB per octave).
    static func pink(seconds: Double, rate: Int, seed: UInt64 = 0x1234_5678_9ABC_DEF1) -> [Float] {
        var b0: Float = 0, b1: Float = 0, b2: Float = 0
        return white(seconds: seconds, rate: rate, seed: seed, peak: 1).map { white in
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            return 0.12 * (b0 + b1 + b2 + white * 0.1848)
        }
    }

    /// Something like music: a chord of three notes every 0.4 s, each with a decay, the chords
    /// picked by a seeded generator, every note played a little sharp or flat and with a vibrato of
    /// its own (as a voice or a string is), over a quiet hiss. A chord of steady pure tones repeats
    /// itself every few milliseconds, so that a stretch of it is the same waveform as any other
    /// stretch of the same chord; a chord played twice is not.
    static func music(seconds: Double, rate: Int, seed: UInt64 = 7) -> [Float] {
        let chords: [[Double]] = [[196, 247, 294], [220, 277, 330], [175, 220, 262], [233, 294, 349], [262, 330, 392]]
        var state = seed
        func random() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        let steps = Int(seconds / 0.4) + 1
        let notes = (0 ..< steps).map { _ -> [(frequency: Double, vibrato: Double)] in
            chords[Int(random() * Double(chords.count))].map { ($0 * (0.995 + 0.01 * random()), 4.5 + 2 * random()) }
        }
        let hiss = white(seconds: seconds, rate: rate, seed: seed ^ 0xABCD, peak: 0.02)
        var phases = [0.0, 0.0, 0.0]
        return (0 ..< Int(seconds * Double(rate))).map { index in
            let t = Double(index) / Double(rate)
            let step = Int(t / 0.4)
            let since = t - Double(step) * 0.4
            var value = 0.0
            for (note, played) in notes[step].enumerated() {
                phases[note] += played.frequency * (1 + 0.01 * sin(2 * Double.pi * played.vibrato * t)) / Double(rate)
                let angle = 2 * Double.pi * phases[note]
                value += sin(angle) + 0.3 * sin(2 * angle)
            }
            return Float(0.15 * value * exp(-since * 3)) + hiss[index]
        }
    }

    /// Speech from espeak-ng (a Debian package the tests install), at its own 22,050 Hz.
    static func speech(_ text: String = "Wake up. It is time to get up. The nap is over.") throws -> (samples: [Float], rate: Int) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("snoozefuse-speech-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
        process.arguments = ["-w", file.path, text]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return try readMono16BitWAV(file)
    }

    /// A 16-bit PCM WAV file's first channel as floats, and its rate.
    static func readMono16BitWAV(_ url: URL) throws -> (samples: [Float], rate: Int) {
        let data = try Data(contentsOf: url)
        func u32(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        var offset = 12, rate = 0, channels = 1
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset ..< offset + 4], as: UTF8.self), size = u32(offset + 4)
            if id == "fmt " {
                channels = u16(offset + 10)
                rate = u32(offset + 12)
            } else if id == "data" {
                let end = min(offset + 8 + size, data.count)
                var samples: [Float] = []
                var at = offset + 8
                while at + 2 * channels <= end {
                    samples.append(Float(Int16(bitPattern: UInt16(u16(at)))) / 32_768)
                    at += 2 * channels
                }
                return (samples, rate)
            }
            offset += 8 + size + (size & 1)
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    /// Resampled with a windowed sinc (Hann, 24 taps either side, cut off below the lower rate's
    /// half): another resampler than any the server or the detector uses.
    static func resample(_ samples: [Float], from source: Int, to target: Int) -> [Float] {
        guard source != target else { return samples }
        let ratio = Double(source) / Double(target)
        let cutoff = 0.92 * min(1, 1 / ratio)
        let taps = 24
        let count = Int(Double(samples.count) / ratio)
        return samples.withUnsafeBufferPointer { input in
            (0 ..< count).map { index in
                let center = Double(index) * ratio
                let first = Int(center.rounded(.down)) - Int((Double(taps) / cutoff).rounded(.up))
                let last = Int(center.rounded(.down)) + Int((Double(taps) / cutoff).rounded(.up))
                var sum = 0.0
                for k in max(first, 0) ... min(last, input.count - 1) {
                    let x = (center - Double(k)) * cutoff
                    guard abs(x) < Double(taps) else { continue }
                    let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
                    let window = 0.5 + 0.5 * cos(Double.pi * x / Double(taps))
                    sum += Double(input[k]) * sinc * window * cutoff
                }
                return Float(sum)
            }
        }
    }

    /// The sink's volume in percent as an amplitude factor (PulseAudio's and PipeWire's cubic scale).
    static func sinkGain(_ percent: Int) -> Float {
        let v = Float(percent) / 100
        return v * v * v
    }
}

/// A sound server, simulated over the written stream: the stream plays once the writer has put a
/// period in, the writer keeps its buffer a second ahead of what plays, the sink mixes in other
/// audio and applies its volume (and its own rate, when given: the stream is resampled to it and
/// the monitor back), and the monitor delivers what the sink played in fragments of 0.2 s (not
/// the detector's block), 30 ms after it played. Returns the verdicts with the second each came.
struct SimulatedSink {
    var rate: Int
    var sinkRate: Int? = nil
    var volumePercent = 100
    var other: [Float] = []
    /// The sink plays the stream this long after it was put in.
    var latency = 0.05
    var buffer = 1.0
    var fragment = 0.2
    var channels = 1
    var muted = false

    /// `stream` is interleaved with `channels`.
    func run(_ stream: [Float], detector: inout AlarmEchoDetector) -> [(second: Double, verdict: AlarmEchoDetector.Verdict)] {
        let frames = stream.count / channels
        var mono = (0 ..< frames).map { frame in
            (0 ..< channels).reduce(Float(0)) { $0 + stream[frame * channels + $1] } / Float(channels)
        }
        if let sinkRate, sinkRate != rate {
            mono = TestSignal.resample(TestSignal.resample(mono, from: rate, to: sinkRate), from: sinkRate, to: rate)
        }
        let gain = muted ? 0 : TestSignal.sinkGain(volumePercent)
        let delayFrames = Int(latency * Double(rate))
        let monitor = (0 ..< frames).map { index -> Float in
            let played = index - delayFrames
            let own = played >= 0 && played < mono.count ? mono[played] : 0
            let theirs = index < other.count ? other[index] : 0
            return muted ? 0 : (own + theirs) * gain
        }
        var results: [(Double, AlarmEchoDetector.Verdict)] = []
        var written = 0, delivered = 0
        let period = rate / 4, step = 0.01
        var time = 0.0
        while delivered < monitor.count {
            // The writer: whole periods, up to a second ahead of what plays.
            while written < frames, Double(written) / Double(rate) < time + buffer {
                let count = min(period, frames - written)
                stream[written * channels ..< (written + count) * channels].withUnsafeBufferPointer {
                    detector.wrote($0, channels: channels)
                }
                written += count
            }
            // The monitor: each fragment once the sink has played it.
            let fragmentFrames = Int(fragment * Double(rate))
            while delivered + fragmentFrames <= monitor.count, Double(delivered + fragmentFrames) / Double(rate) + 0.03 <= time {
                let verdicts = monitor[delivered ..< delivered + fragmentFrames].withUnsafeBufferPointer {
                    detector.recorded($0, from: "sink")
                }
                results += verdicts.map { (time, $0) }
                delivered += fragmentFrames
            }
            if delivered + fragmentFrames > monitor.count { break }
            time += step
        }
        return results
    }
}

/// One sound of the corpus: its samples (interleaved), rate and channels.
struct CorpusSound: Sendable, CustomTestStringConvertible {
    var name: String
    var samples: [Float]
    var rate: Int
    var channels = 1
    var sinkRate: Int?

    var testDescription: String { name }

    /// When the first frame louder than −60 dBFS is written, in seconds.
    var firstAudible: Double {
        let index = samples.firstIndex { abs($0) > 0.001 } ?? 0
        return Double(index / channels) / Double(rate)
    }

    static let seconds = 3.0

    static var all: [CorpusSound] {
        var sounds: [CorpusSound] = []
        for frequency in [100.0, 440, 1_000, 3_000, 6_000, 10_000] {
            sounds.append(CorpusSound(name: "\(Int(frequency)) Hz tone", samples: TestSignal.tones([frequency], seconds: seconds, rate: 24_000), rate: 24_000))
        }
        sounds.append(CorpusSound(name: "880 + 1320 Hz chord (the issue's sound), 48 kHz stream on a 44.1 kHz sink",
                                  samples: TestSignal.tones([880, 1_320], seconds: seconds, rate: 48_000), rate: 48_000, sinkRate: 44_100))
        sounds.append(CorpusSound(name: "three-tone chord", samples: TestSignal.tones([523, 659, 784], seconds: seconds, rate: 16_000), rate: 16_000))
        sounds.append(CorpusSound(name: "square sweep 600-1200 Hz", samples: TestSignal.sweep(600, 1_200, period: 1.5, seconds: seconds, rate: 16_000, square: true), rate: 16_000))
        sounds.append(CorpusSound(name: "saw sweep 200-2000 Hz", samples: TestSignal.sweep(200, 2_000, period: 1, seconds: seconds, rate: 16_000, square: false), rate: 16_000))
        sounds.append(CorpusSound(name: "white noise", samples: TestSignal.white(seconds: seconds, rate: 16_000), rate: 16_000))
        sounds.append(CorpusSound(name: "pink noise", samples: TestSignal.pink(seconds: seconds, rate: 16_000), rate: 16_000))
        sounds.append(CorpusSound(name: "8 kHz mono (a 1 kHz and 3.5 kHz chord) on a 44.1 kHz sink",
                                  samples: TestSignal.tones([1_000, 3_500], seconds: seconds, rate: 8_000), rate: 8_000, sinkRate: 44_100))
        let left = TestSignal.tones([660], seconds: seconds, rate: 16_000)
        sounds.append(CorpusSound(name: "stereo with a silent right channel", samples: left.flatMap { [$0, 0] }, rate: 16_000, channels: 2))
        sounds.append(CorpusSound(name: "quiet file (-30 dBFS)", samples: TestSignal.tones([1_000], seconds: seconds, rate: 16_000, peak: 0.0316), rate: 16_000))
        let silent = [Float](repeating: 0, count: 2 * 16_000)
        sounds.append(CorpusSound(name: "first 2 s silent", samples: silent + TestSignal.tones([750, 1_125], seconds: 2, rate: 16_000), rate: 16_000))
        if let speech = try? TestSignal.speech() {
            sounds.append(CorpusSound(name: "speech (espeak-ng)", samples: Array(speech.samples.prefix(Int(seconds * Double(speech.rate)))), rate: speech.rate))
        } else {
            sounds.append(CorpusSound(name: "speech (espeak-ng did not run)", samples: [], rate: 22_050))
        }
        return sounds
    }
}

@Suite("The proof of hearing: what was written, found in the monitor")
struct AlarmEchoDetectorTests {
    @Test func theTransformsCorrelationIsTheDirectOne() {
        let window = TestSignal.white(seconds: 0.3, rate: 8_000)
        let block = Array(window[700 ..< 1_200])
        var search = CrossCorrelation()
        var result: [Float] = []
        block.withUnsafeBufferPointer { b in window.withUnsafeBufferPointer { w in search.correlate(b, within: w, into: &result) } }
        #expect(result.count == window.count - block.count + 1)
        for lag in stride(from: 0, to: result.count, by: 37) {
            let direct = (0 ..< block.count).reduce(0.0) { $0 + Double(block[$1]) * Double(window[lag + $1]) }
            #expect(abs(Double(result[lag]) - direct) < 1e-3 * max(abs(direct), 1), "lag \(lag)")
        }
        #expect(result.indices.max { result[$0] < result[$1] } == 700)
    }

    /// Every sound of the corpus, at a sink's volume of 100, 60 and 20 %, is proved within a
    /// second of its first audible frame reaching the monitor, and stays proved.
    @Test(arguments: CorpusSound.all)
    func everySoundIsHeardWithinASecondAtEveryVolume(sound: CorpusSound) {
        #expect(!sound.samples.isEmpty, "the sound could not be made")
        guard !sound.samples.isEmpty else { return }
        for volume in [100, 60, 20] {
            var detector = AlarmEchoDetector(sampleRate: sound.rate)
            let sink = SimulatedSink(rate: sound.rate, sinkRate: sound.sinkRate, volumePercent: volume, channels: sound.channels)
            let results = sink.run(sound.samples, detector: &detector)
            let audibleOnMonitor = sound.firstAudible + sink.latency
            let first = results.first { $0.verdict.kind == .matched }
            #expect(first != nil, "\(sound.name) at \(volume) %: never heard; \(summary(results))")
            if let first {
                #expect(first.second - audibleOnMonitor <= 1.0, "\(sound.name) at \(volume) %: heard \(first.second - audibleOnMonitor) s after it was audible")
                // From then on every block that carries sound proves it (none unmatched).
                let later = results.filter { $0.second > first.second }
                let lost = later.filter { $0.verdict.kind == .unmatched || $0.verdict.kind == .silent }
                #expect(lost.isEmpty, "\(sound.name) at \(volume) %: \(lost.count) later blocks unproved; \(summary(results))")
            }
        }
    }

    /// Another program's audio on the sink while the alarm's own stream carries nothing there
    /// (muted in a mixer): never proof. Nor is silence, nor a muted sink.
    @Test(arguments: CorpusSound.all.filter { !$0.samples.isEmpty && $0.channels == 1 && $0.sinkRate == nil })
    func otherAudioSilenceAndAMutedSinkAreNeverHeard(sound: CorpusSound) {
        let rate = sound.rate
        let count = sound.samples.count
        let others: [(String, [Float])] = [
            ("a different sound", Array(TestSignal.sweep(300, 3_000, period: 0.7, seconds: 3, rate: rate, square: false).prefix(count))),
            ("noise", TestSignal.white(seconds: 3, rate: rate, seed: 42)),
            ("music", TestSignal.music(seconds: 3, rate: rate)),
            ("silence", [Float](repeating: 0, count: count)),
        ]
        for (what, other) in others {
            // The detector is told the alarm was written; the monitor carries only the other.
            var detector = AlarmEchoDetector(sampleRate: rate)
            let results = SimulatedSink(rate: rate).runOtherOnly(sound.samples, other: other, detector: &detector)
            let proofs = results.filter { $0.verdict.kind == .matched }
            #expect(proofs.isEmpty, "\(sound.name) with \(what) on the sink: \(proofs.count) proofs; \(summary(results))")
            if what != "silence" {
                #expect(results.filter { $0.verdict.kind == .unmatched }.count >= 8, "\(sound.name) with \(what): \(summary(results))")
            }
        }
        var detector = AlarmEchoDetector(sampleRate: rate)
        let muted = SimulatedSink(rate: rate, muted: true).run(sound.samples, detector: &detector)
        #expect(!muted.isEmpty && muted.allSatisfy { $0.verdict.kind == .silent }, "a muted sink: \(summary(muted))")
    }

    /// The same sound as the alarm, played by another program 3 s behind it, is not the alarm: it
    /// lies outside the delays a sink can add. (A sound that repeats within 3 s, a tone, a short
    /// loop, or a sustained chord that comes again, is nearly the same waveform 3 s later, at some
    /// delay within the window: no recording can tell them apart, so the sounds here are ones that
    /// do not repeat: noise and speech.)
    @Test func theSameSoundThreeSecondsLaterIsNoProof() throws {
        let rate = 16_000
        let speech = try TestSignal.speech("Wake up. It is time to get up. The nap is over. Open your eyes and stand up now, please.")
        let alarms: [(String, [Float])] = [
            ("white noise", TestSignal.white(seconds: 6, rate: rate)),
            ("pink noise", TestSignal.pink(seconds: 6, rate: rate)),
            ("speech", TestSignal.resample(Array(speech.samples.prefix(6 * speech.rate)), from: speech.rate, to: rate)),
        ]
        for (name, alarm) in alarms {
            #expect(alarm.count >= 5 * rate, "\(name) is \(alarm.count) frames")
            let later = Array(([Float](repeating: 0, count: 3 * rate) + alarm).prefix(alarm.count))
            var detector = AlarmEchoDetector(sampleRate: rate)
            let results = SimulatedSink(rate: rate).runOtherOnly(alarm, other: later, detector: &detector)
            // From the third second the monitor carries the alarm's own start, 3 s late.
            let carrying = results.filter { $0.second > 3.5 }
            #expect(carrying.count >= 6 && !carrying.contains { $0.verdict.kind == .matched }
                && carrying.filter { $0.verdict.kind == .unmatched }.count >= 4, "\(name): \(summary(results))")
            // The same, 0.4 s late (within a sink's delay), is the alarm.
            let soon = Array(([Float](repeating: 0, count: 2 * rate / 5) + alarm).prefix(alarm.count))
            var again = AlarmEchoDetector(sampleRate: rate)
            let heard = SimulatedSink(rate: rate).runOtherOnly(alarm, other: soon, detector: &again)
            #expect(heard.contains { $0.verdict.kind == .matched }, "\(name) 0.4 s late: \(summary(heard))")
        }
    }

    /// The alarm with other audio on the same sink is heard while its share is real; its own
    /// stream muted mid-alarm (the music playing on) is proof no longer.
    @Test func theAlarmUnderMusicIsHeardAndItsStreamMutedUnderMusicIsNot() {
        let rate = 16_000
        let alarm = TestSignal.tones([880, 1_320], seconds: 6, rate: rate)
        let music = TestSignal.music(seconds: 6, rate: rate)
        // Alarm and music together for 3 s, then only the music.
        let monitor = (0 ..< alarm.count).map { index in (index < 3 * rate ? alarm[index] : 0) + music[index] }
        var detector = AlarmEchoDetector(sampleRate: rate)
        let results = SimulatedSink(rate: rate).runOtherOnly(alarm, other: monitor, detector: &detector)
        let before = results.filter { $0.second > 1 && $0.second < 3 }, after = results.filter { $0.second > 3.6 }
        #expect(!before.isEmpty && before.allSatisfy { $0.verdict.kind == .matched }, "\(summary(results))")
        #expect(!after.isEmpty && after.allSatisfy { $0.verdict.kind == .unmatched }, "\(summary(results))")
    }

    /// A match found by a search that is not sure (the alarm under louder music) waits for the
    /// next block at the same delay.
    @Test func aMatchThatIsNotSureWaitsForASecondBlock() {
        let rate = 16_000
        let alarm = TestSignal.white(seconds: 2, rate: rate)
        let music = TestSignal.white(seconds: 2, rate: rate, seed: 99, peak: 0.4)
        var detector = AlarmEchoDetector(sampleRate: rate)
        alarm.withUnsafeBufferPointer { detector.wrote(UnsafeBufferPointer(rebasing: $0[0 ..< rate]), channels: 1) }
        // As much other noise as alarm: a correlation of about 0.7.
        let monitor = (0 ..< 2 * detector.blockFrames).map { alarm[$0] + music[$0] }
        let verdicts = monitor.withUnsafeBufferPointer { detector.recorded($0, from: "a") }
        #expect(verdicts.map(\.kind) == [.unmatched, .matched], "\(verdicts.map(\.correlation))")
        #expect(verdicts.allSatisfy { $0.correlation > 0.6 && $0.correlation < 0.8 })
    }

    /// A beep pattern (loud beeps between stretches of digital silence, as the built-in `beep`):
    /// the search's running sums leave rounding behind each beep, and a silent stretch of what was
    /// written must not then look like a perfect match. Every block that carries a beep is proved.
    @Test func beepsBetweenSilencesAreFoundAndSilenceIsNeverAMatch() {
        let rate = 22_050
        let beep = TestSignal.sweep(1_000, 1_000, period: 1, seconds: 0.15, rate: rate, square: true, peak: 0.55)
        let gap = [Float](repeating: 0, count: rate / 10)
        let pattern = beep + gap + beep + gap + beep + [Float](repeating: 0, count: rate / 2)
        let alarm = Array(repeating: pattern, count: 4).flatMap { $0 }
        var detector = AlarmEchoDetector(sampleRate: rate)
        let results = SimulatedSink(rate: rate, sinkRate: 44_100).run(alarm, detector: &detector)
        #expect(results.contains { $0.verdict.kind == .matched }, "\(summary(results))")
        let loudButUnproved = results.filter { $0.second > 1 && $0.verdict.kind == .unmatched && $0.verdict.monitorLevel > 0.1 }
        #expect(loudButUnproved.count <= 1, "\(summary(results))")
    }

    /// A hole in the recording (the server dropped frames) keeps the delay found; a gap in what
    /// is written (an underrun: the stream plays later than before) is found again by a search.
    @Test func aHoleInTheRecordingKeepsTheDelayAndAShiftedStreamIsFoundAgain() {
        let rate = 16_000
        let alarm = TestSignal.white(seconds: 4, rate: rate)
        var detector = AlarmEchoDetector(sampleRate: rate)
        // A second written ahead of what plays.
        alarm.withUnsafeBufferPointer { detector.wrote(UnsafeBufferPointer(rebasing: $0[0 ..< rate]), channels: 1) }
        let block = detector.blockFrames
        var kinds: [AlarmEchoDetector.Verdict.Kind] = []
        // The monitor carries the stream 0.1 s late.
        let delay = rate / 10
        func record(_ range: Range<Int>) {
            let samples = range.map { $0 >= delay ? alarm[$0 - delay] : 0 }
            kinds += samples.withUnsafeBufferPointer { detector.recorded($0, from: "a") }.map(\.kind)
        }
        record(0 ..< 2 * block)
        // The same waveform: sure at once.
        #expect(kinds == [.matched, .matched])
        #expect(detector.delay(of: "a") == -delay)
        detector.recordedGap(frames: block / 3, from: "a")
        kinds = []
        record(2 * block + block / 3 ..< 4 * block + block / 3)
        #expect(kinds == [.matched, .matched], "no search after a hole")
        // What follows plays 0.2 s later than before.
        alarm.withUnsafeBufferPointer { detector.wrote(UnsafeBufferPointer(rebasing: $0[rate ..< 2 * rate]), channels: 1) }
        kinds = []
        let shifted = 3 * delay
        let start = 4 * block + block / 3
        let samples = (start ..< start + 3 * block).map { $0 >= shifted ? alarm[$0 - shifted] : 0 }
        kinds = samples.withUnsafeBufferPointer { detector.recorded($0, from: "a") }.map(\.kind)
        #expect(kinds == [.matched, .matched, .matched], "lost, found again at once by a search")
        #expect(detector.delay(of: "a") == -shifted)
        detector.forget("a")
        #expect(detector.delay(of: "a") == nil)
    }

    private func summary(_ results: [(second: Double, verdict: AlarmEchoDetector.Verdict)]) -> String {
        results.map { "\(String(format: "%.2f", $0.second)):\($0.verdict.kind.rawValue)/\(String(format: "%.2f", $0.verdict.correlation))" }
            .joined(separator: " ")
    }
}

extension SimulatedSink {
    /// The detector is told `stream` was written; the monitor carries `other` only.
    func runOtherOnly(_ stream: [Float], other: [Float], detector: inout AlarmEchoDetector) -> [(second: Double, verdict: AlarmEchoDetector.Verdict)] {
        var results: [(Double, AlarmEchoDetector.Verdict)] = []
        var written = 0, delivered = 0
        let period = rate / 4
        let fragmentFrames = Int(fragment * Double(rate))
        var time = 0.0
        let monitor = Array(other.prefix(stream.count)) + [Float](repeating: 0, count: max(stream.count - other.count, 0))
        while delivered + fragmentFrames <= monitor.count {
            while written < stream.count, Double(written) / Double(rate) < time + buffer {
                let count = min(period, stream.count - written)
                stream[written ..< written + count].withUnsafeBufferPointer { detector.wrote($0, channels: 1) }
                written += count
            }
            while delivered + fragmentFrames <= monitor.count, Double(delivered + fragmentFrames) / Double(rate) + 0.03 <= time {
                let verdicts = monitor[delivered ..< delivered + fragmentFrames].withUnsafeBufferPointer { detector.recorded($0, from: "sink") }
                results += verdicts.map { (time, $0) }
                delivered += fragmentFrames
            }
            time += 0.01
        }
        return results
    }
}

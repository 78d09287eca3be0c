import Foundation

/// The recipes for the built-in alarm sounds in the repository's `Sounds/` folder, and the code that
/// renders them (`Tools/MakeSounds` is a thin command line around ``writeAll(toFolder:)``).
///
/// Rendering is deterministic: no randomness and no timestamps, only arithmetic on `Double`, so the
/// same build writes the same bytes every time. Every sound is a seamless loop: each note starts and
/// ends with a short raised-cosine fade, so the first and last samples are zero and the loop point
/// never clicks. The files are mono 16-bit linear PCM CAF.
public enum BuiltInSoundSynthesis {
    /// One rendered sound: its name (the file is `<name>.caf`), a one-line description and its
    /// samples.
    public struct Sound: Sendable, Hashable {
        public var name: String
        public var summary: String
        public var sampleRate: Int
        /// Mono 16-bit samples.
        public var samples: [Int16]

        /// The length of one pass, to the nanosecond.
        public var duration: Duration {
            let rate = Int64(sampleRate)
            let frames = Int64(samples.count)
            return .seconds(frames / rate) + .nanoseconds((frames % rate) * 1_000_000_000 / rate)
        }
    }

    /// The file format of every built-in sound.
    public static var format: SoundFileFormat { SoundFileFormat(.caf, .pcm16) }

    /// The file name extension of every built-in sound.
    public static let fileExtension = "caf"

    /// The names of the built-in sounds, in the order ``render()`` returns them.
    public static let names = ["beep", "chime", "rising", "digital", "gentle"]

    /// Renders every built-in sound.
    public static func render() -> [Sound] {
        [beep(), chime(), rising(), digital(), gentle()]
    }

    /// Renders every built-in sound into `folder` (created if missing) as `<name>.caf`, replacing
    /// files already there, and returns the paths written.
    public static func writeAll(toFolder folder: String) throws(SoundFileError) -> [String] {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw SoundFileError(operation: .create, path: folder, code: .system, message: "cannot create the folder: \(error.localizedDescription)")
        }
        var written: [String] = []
        for sound in render() {
            let path = (folder as NSString).appendingPathComponent("\(sound.name).\(fileExtension)")
            try write(sound, toPath: path)
            written.append(path)
        }
        return written
    }

    /// Writes `sound` to `path` as mono 16-bit PCM CAF.
    public static func write(_ sound: Sound, toPath path: String) throws(SoundFileError) {
        var writer = try SoundFileWriter(creatingAtPath: path, format: format, sampleRate: sound.sampleRate, channels: 1)
        // k / 32768 converts back to exactly k: libsndfile scales by 0x8000 when clipping is on.
        try writer.write(sound.samples.map { Float($0) / 32768 })
        try writer.close()
    }

    // MARK: The recipes

    /// A classic alarm clock: four short square-ish beeps at B5, then a pause.
    static func beep() -> Sound {
        var canvas = Canvas(sampleRate: 22050, seconds: 1.2)
        let partials = [Partial(ratio: 1, amplitude: 1), Partial(ratio: 3, amplitude: 0.25), Partial(ratio: 5, amplitude: 0.1)]
        for index in 0 ..< 4 {
            canvas.addNote(at: Double(index) * 0.2, length: 0.1, frequency: 987.77, partials: partials, attack: 0.004, release: 0.004)
        }
        return canvas.sound(name: "beep", summary: "Four short beeps at B5 (988 Hz), then a pause: a classic alarm clock.", peak: 0.7)
    }

    /// A church-bell phrase (E5 C5 D5 G4) with inharmonic, decaying partials.
    static func chime() -> Sound {
        var canvas = Canvas(sampleRate: 22050, seconds: 3.0)
        let bell = [
            Partial(ratio: 0.5, amplitude: 0.3, decay: 1.2),
            Partial(ratio: 1, amplitude: 1, decay: 0.9),
            Partial(ratio: 1.19, amplitude: 0.35, decay: 0.7),
            Partial(ratio: 1.5, amplitude: 0.3, decay: 0.6),
            Partial(ratio: 2, amplitude: 0.45, decay: 0.5),
            Partial(ratio: 2.74, amplitude: 0.2, decay: 0.35),
            Partial(ratio: 3, amplitude: 0.15, decay: 0.3),
            Partial(ratio: 4.07, amplitude: 0.1, decay: 0.2),
        ]
        for (index, frequency) in [659.26, 523.25, 587.33, 392.0].enumerated() {
            canvas.addNote(at: Double(index) * 0.45, length: 1.6, frequency: frequency, partials: bell, attack: 0.003, release: 0.3)
        }
        return canvas.sound(name: "chime", summary: "A four-note bell phrase (E5 C5 D5 G4) with ringing, decaying partials.", peak: 0.7)
    }

    /// A siren-like sweep from A4 up two octaves to A6, then a short pause.
    static func rising() -> Sound {
        var canvas = Canvas(sampleRate: 22050, seconds: 1.6)
        let partials = [Partial(ratio: 1, amplitude: 1), Partial(ratio: 2, amplitude: 0.3), Partial(ratio: 3, amplitude: 0.15)]
        canvas.addNote(at: 0, length: 1.2, frequency: 440, sweepTo: 1760, partials: partials, attack: 0.01, release: 0.03)
        return canvas.sound(name: "rising", summary: "A sweep up two octaves, A4 to A6 (440–1760 Hz), in 1.2 s, then a pause.", peak: 0.7)
    }

    /// A digital watch: two bursts of four bright square-wave chirps at 2048 Hz.
    static func digital() -> Sound {
        var canvas = Canvas(sampleRate: 44100, seconds: 1.5)
        let square = [1, 3, 5, 7, 9].map { Partial(ratio: Double($0), amplitude: 1 / Double($0)) }
        for burst in 0 ..< 2 {
            for index in 0 ..< 4 {
                canvas.addNote(
                    at: Double(burst) * 0.5 + Double(index) * 0.08, length: 0.05, frequency: 2048,
                    partials: square, attack: 0.002, release: 0.002)
            }
        }
        return canvas.sound(name: "digital", summary: "Two bursts of four square-wave chirps at 2048 Hz: a digital watch.", peak: 0.6)
    }

    /// A soft rising arpeggio (C5 E5 G5 C6) of near-sine tones with slow attacks.
    static func gentle() -> Sound {
        var canvas = Canvas(sampleRate: 22050, seconds: 3.2)
        let soft = [
            Partial(ratio: 1, amplitude: 1, decay: 0.8),
            Partial(ratio: 2, amplitude: 0.12, decay: 0.4),
            Partial(ratio: 3, amplitude: 0.04, decay: 0.25),
        ]
        for (index, frequency) in [523.25, 659.26, 783.99, 1046.5].enumerated() {
            canvas.addNote(at: Double(index) * 0.35, length: 1.5, frequency: frequency, partials: soft, attack: 0.04, release: 0.3)
        }
        return canvas.sound(name: "gentle", summary: "A soft arpeggio (C5 E5 G5 C6) of near-sine tones with slow attacks.", peak: 0.45)
    }
}

/// One partial of a note: a sine at `ratio` × the note's frequency, with an optional exponential
/// decay (time constant in seconds).
struct Partial {
    var ratio: Double
    var amplitude: Double
    var decay: Double? = nil
}

/// A mono buffer that notes are mixed into.
struct Canvas {
    let sampleRate: Int
    var samples: [Double]

    init(sampleRate: Int, seconds: Double) {
        self.sampleRate = sampleRate
        self.samples = Array(repeating: 0, count: Int((seconds * Double(sampleRate)).rounded()))
    }

    /// Mixes in a note that starts `at` seconds and lasts `length` seconds, fading in over `attack`
    /// and out over `release` (raised cosine, so it starts and ends at exactly zero). With `sweepTo`
    /// the frequency glides exponentially to that value over the note. Partials at or above 90% of
    /// the Nyquist frequency are left out, so nothing aliases.
    mutating func addNote(
        at start: Double, length: Double, frequency: Double, sweepTo: Double? = nil,
        partials: [Partial], attack: Double, release: Double
    ) {
        let rate = Double(sampleRate)
        let first = Int((start * rate).rounded())
        let count = Int((length * rate).rounded())
        precondition(first >= 0 && first + count <= samples.count, "a note must fit inside the sound")
        let end = sweepTo ?? frequency
        let highest = max(frequency, end)
        let audible = partials.filter { $0.ratio * highest < 0.45 * rate }
        let attackFrames = max(1, Int((attack * rate).rounded()))
        let releaseFrames = max(1, Int((release * rate).rounded()))
        var phase = 0.0
        for frame in 0 ..< count {
            let t = Double(frame) / rate
            var envelope = 1.0
            if frame < attackFrames {
                envelope = 0.5 - 0.5 * cos(Double.pi * Double(frame) / Double(attackFrames))
            }
            let remaining = count - 1 - frame
            if remaining < releaseFrames {
                envelope *= 0.5 - 0.5 * cos(Double.pi * Double(remaining) / Double(releaseFrames))
            }
            var value = 0.0
            for partial in audible {
                var amplitude = partial.amplitude
                if let decay = partial.decay { amplitude *= exp(-t / decay) }
                value += amplitude * sin(partial.ratio * phase)
            }
            samples[first + frame] += envelope * value
            let progress = Double(frame) / Double(max(1, count - 1))
            phase += 2 * Double.pi * frequency * pow(end / frequency, progress) / rate
        }
    }

    /// The canvas scaled to `peak` (a fraction of full scale) and rounded to 16-bit samples.
    func sound(name: String, summary: String, peak: Double) -> BuiltInSoundSynthesis.Sound {
        let loudest = samples.reduce(0) { max($0, abs($1)) }
        let scale = loudest > 0 ? peak * 32767 / loudest : 0
        let pcm = samples.map { Int16(clamping: Int(($0 * scale).rounded())) }
        return BuiltInSoundSynthesis.Sound(name: name, summary: summary, sampleRate: sampleRate, samples: pcm)
    }
}

import SnoozeFuseCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Frames for the alarm at the source's own rate and channel count, looping for ever.
///
/// A source lives on the audio thread once playback starts: `read` is called there, one call at a
/// time, and must not allocate, lock or block beyond what decoding the next frames needs.
public protocol AlarmSoundSource {
    /// Frames per second of what `read` produces.
    var sampleRate: Int { get }
    /// Interleaved channels per frame of what `read` produces.
    var channels: Int { get }
    /// Why the last `read` came up short, if it did (the source is unusable from then on).
    var failure: SoundFileError? { get }
    /// What the alarm says when it stops playing this source for ``failure`` (followed by what
    /// plays instead). A file's error by default; a source that is not a file says what it is.
    var failureText: String? { get }
    /// Fills `buffer` completely with whole frames (looping as needed) and returns how many frames it
    /// wrote: `buffer.count / channels`, or fewer only when decoding failed (see `failure`).
    mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int
    /// Moves to `position` from the start of the sound, wrapping around its length (for resuming an
    /// alarm where it was).
    mutating func seek(to position: Duration)
}

extension AlarmSoundSource {
    public var failureText: String? { failure?.description }
}

/// What the alarm plays.
public enum AlarmSound: Sendable, Hashable, CustomStringConvertible {
    /// The built-in beep pattern (`AlarmToneSource`): needs no file and no plugin.
    case builtInTone
    /// A sound file libsndfile can decode, streamed and looped.
    case file(path: String)
    /// A sound file held open since the nap began (see ``HeldSoundFile``): deleting, renaming or
    /// replacing it afterwards changes nothing.
    case held(HeldSoundFile)
    /// Frames made outside this module (a sound-source plugin's process): a fresh source per playback.
    /// When it comes up short the renderer switches to the built-in tone, as for a failing file.
    case custom(CustomAlarmSound)

    public var description: String {
        switch self {
        case .builtInTone: "built-in alarm tone"
        case .file(let path): path
        case .held(let file): file.path
        case .custom(let sound): sound.name
        }
    }
}

/// A sound made by code outside this module. Compared by identity.
public final class CustomAlarmSound: Sendable, Hashable {
    /// For reports, e.g. `plugin org.snoozefuse.tone`.
    public let name: String
    private let make: @Sendable (_ deviceRate: Int) throws(SoundFileError) -> any AlarmSoundSource

    public init(name: String, make: @escaping @Sendable (_ deviceRate: Int) throws(SoundFileError) -> any AlarmSoundSource) {
        self.name = name
        self.make = make
    }

    /// Opens the source for this sound. `deviceRate` is the rate the built-in tone is synthesized at.
    public func makeSource(deviceRate: Int) throws(SoundFileError) -> any AlarmSoundSource {
        try make(deviceRate)
    }

    public static func == (lhs: CustomAlarmSound, rhs: CustomAlarmSound) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A sound file streamed from disk and looped seamlessly.
///
/// Never loads the file whole: each `read` decodes just what it returns. At the end of the file it
/// seeks back to frame 0 and keeps filling the same buffer, so the loop seam lies inside one
/// continuous block of samples (no gap, no fade, no click beyond what the file's own last and first
/// samples make).
public final class LoopingSoundFileSource: AlarmSoundSource {
    private var file: SoundFile
    public let sampleRate: Int
    public let channels: Int
    /// Frames in one pass through the file.
    public let frames: Int64
    public private(set) var failure: SoundFileError?

    /// Opens `path` and checks that it holds at least one frame.
    /// - Throws: `SoundFileError` (see `isMissingInput` / `isBadData`).
    public init(path: String) throws(SoundFileError) {
        let file = try SoundFile(readingAtPath: path)
        let info = file.info
        guard info.frames > 0, info.channels > 0, info.sampleRate > 0 else {
            throw SoundFileError(operation: .open, path: path, code: .malformedFile,
                                 message: "the file holds no audio frames (\(info))")
        }
        self.file = file
        sampleRate = info.sampleRate
        channels = info.channels
        frames = info.frames
    }

    /// Whether the file holds 16-bit PCM, which `read(into:)` with `Int16` samples passes through
    /// unchanged (no conversion in libsndfile).
    public var isInt16PCM: Bool { file.info.format.subtype == .pcm16 }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        readLooping(into: buffer)
    }

    /// Reads 16-bit samples (`sf_readf_short`), looping like `read(into:)` with floats. For a 16-bit
    /// PCM file (`isInt16PCM`) these are the file's samples as stored.
    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        readLooping(into: buffer)
    }

    private func readLooping<Sample: SoundFileSample>(into buffer: UnsafeMutableBufferPointer<Sample>) -> Int {
        guard failure == nil else { return 0 }
        let wanted = buffer.count / channels
        var filled = 0
        var emptyReadsInARow = 0
        while filled < wanted {
            let rest = UnsafeMutableBufferPointer(rebasing: buffer[(filled * channels) ..< (wanted * channels)])
            let count: Int
            do {
                count = try Sample.read(from: &file, into: rest)
            } catch {
                failure = error
                return filled
            }
            if count > 0 {
                filled += count
                emptyReadsInARow = 0
                continue
            }
            // End of file: continue from the start within this same buffer.
            emptyReadsInARow += 1
            if emptyReadsInARow > 1 {
                failure = SoundFileError(operation: .read, path: file.path, code: .malformedFile,
                                         message: "no frames could be read after rewinding to the start")
                return filled
            }
            do {
                try file.seek(toFrame: 0)
            } catch {
                failure = error
                return filled
            }
        }
        return filled
    }

    public func seek(to position: Duration) {
        let frame = framesFor(position, rate: sampleRate) % frames
        do {
            try file.seek(toFrame: frame)
        } catch {
            failure = error
        }
    }
}

/// Converts `duration` to a whole number of frames at `rate` (rounded down, never negative).
func framesFor(_ duration: Duration, rate: Int) -> Int64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    return seconds * Int64(rate) + Int64((Double(attoseconds) / 1e18) * Double(rate))
}

/// How long `frames` frames last at `rate`, to the nanosecond (rounded down; zero for a rate or
/// count that is not positive). Whole seconds first, so no count of frames overflows.
func durationOf(frames: Int64, rate: Int) -> Duration {
    guard rate > 0, frames > 0 else { return .zero }
    let rate = Int64(rate)
    return .seconds(frames / rate) + .nanoseconds(frames % rate * 1_000_000_000 / rate)
}

/// The built-in alarm: a synthesized beep pattern that needs no file, no decoder and no plugin.
///
/// The pattern repeats every second: four beeps of 100 ms, each starting 200 ms after the last
/// (at 0, 0.2, 0.4 and 0.6 s), then 300 ms of silence. Each beep is a sine at `frequency` Hz with
/// peak `amplitude`, shaped by 5 ms raised-cosine edges so it starts and stops without a click.
/// It is synthesized at the device's rate (no resampling) in mono.
public struct AlarmToneSource: AlarmSoundSource {
    public let sampleRate: Int
    public var channels: Int { 1 }
    public var failure: SoundFileError? { nil }
    /// Beep pitch in Hz.
    public let frequency: Double
    /// Peak amplitude of a beep (full scale is 1).
    public let amplitude: Float

    private let periodFrames: Int
    private let beepFrames: Int
    private let beepSpacingFrames: Int
    /// One beep, worked out once (every beep of the pattern is the same): a sine per sample cost
    /// the alarm more CPU than its sound server's stream did.
    private let beepSamples: [Float]
    /// Frame index within the current one-second pattern.
    private var position = 0

    public init(sampleRate: Int, frequency: Double = 880, amplitude: Float = 0.7) {
        let rate = max(sampleRate, 1)
        self.sampleRate = rate
        self.frequency = frequency
        self.amplitude = amplitude
        periodFrames = rate
        beepFrames = rate / 10
        beepSpacingFrames = rate / 5
        let edgeFrames = max(rate / 200, 1)
        let phaseStep = 2 * Double.pi * frequency / Double(rate)
        let beepFrames = beepFrames
        beepSamples = (0 ..< beepFrames).map { inBeep in
            var envelope: Double = 1
            let fromEdge = min(inBeep, beepFrames - 1 - inBeep)
            if fromEdge < edgeFrames {
                envelope = 0.5 - 0.5 * Trigonometry.cosine(Double.pi * Double(fromEdge) / Double(edgeFrames))
            }
            return amplitude * Float(envelope * Trigonometry.sine(phaseStep * Double(inBeep)))
        }
    }

    public mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        for index in buffer.indices {
            buffer[index] = sample(at: position)
            position += 1
            if position == periodFrames { position = 0 }
        }
        return buffer.count
    }

    public mutating func seek(to position: Duration) {
        self.position = Int(framesFor(position, rate: sampleRate) % Int64(periodFrames))
    }

    /// The sample at frame `frame` of the pattern.
    func sample(at frame: Int) -> Float {
        let beep = frame / beepSpacingFrames
        guard beep < 4 else { return 0 }
        let inBeep = frame - beep * beepSpacingFrames
        guard inBeep < beepFrames else { return 0 }
        return beepSamples[inBeep]
    }
}

extension AlarmSound {
    /// Where a sound file is read from: its path, or the held descriptor's (`nil` for synthesized
    /// and custom sounds).
    public var readablePath: String? {
        switch self {
        case .file(let path): path
        case .held(let file): file.readPath
        case .builtInTone, .custom: nil
        }
    }

    /// The sound file named, for saving and messages (the path the person gave, even when held).
    public var filePath: String? {
        switch self {
        case .file(let path): path
        case .held(let file): file.path
        case .builtInTone, .custom: nil
        }
    }

    /// The same sound, held open from now on (a file; other sounds as they are).
    public func held() throws(SoundFileError) -> AlarmSound {
        guard case .file(let path) = self else { return self }
        return .held(try HeldSoundFile(path: path))
    }

    /// A sound file's own rate and channel count (read from its header), and whether it holds
    /// 16-bit PCM; `nil` for synthesized sounds, which render at whatever the device takes, and for
    /// files that do not open (the error surfaces when the source is made).
    public var nativeFormat: (sampleRate: Int, channels: Int, isInt16PCM: Bool)? {
        guard let path = readablePath, let file = try? SoundFile(readingAtPath: path),
              file.info.sampleRate > 0, file.info.channels > 0 else { return nil }
        return (file.info.sampleRate, file.info.channels, file.info.format.subtype == .pcm16)
    }

    /// Opens the source for this sound. `deviceRate` is the rate the built-in tone is synthesized at.
    public func makeSource(deviceRate: Int) throws(SoundFileError) -> any AlarmSoundSource {
        switch self {
        case .builtInTone: AlarmToneSource(sampleRate: deviceRate)
        case .file(let path): try LoopingSoundFileSource(path: path)
        case .held(let file): try LoopingSoundFileSource(path: file.readPath)
        case .custom(let sound): try sound.makeSource(deviceRate: deviceRate)
        }
    }

    /// The largest magnitude (full scale 1) in the first `limit` of a sound file, decoded as the
    /// alarm would; `nil` for synthesized sounds, which are never silent.
    public func peak(within limit: Duration) throws(SoundFileError) -> Float? {
        try measure(within: limit, loudness: false)?.peak
    }

    /// The largest magnitude (full scale 1) in the first `limit` of a sound file, and its loudness
    /// there (EBU R 128; nil when libebur128 cannot measure it, with `loudnessFailure` saying why),
    /// in one pass; `nil` for synthesized sounds, which are never silent and play as they are.
    public func measure(within limit: Duration, loudness measuring: Bool = true) throws(SoundFileError)
        -> (peak: Float, loudness: SoundLoudness?, loudnessFailure: LoudnessError?)? {
        guard let path = readablePath else { return nil }
        var file = try SoundFile(readingAtPath: path)
        let info = file.info
        let wanted = min(info.frames, framesFor(limit, rate: info.sampleRate))
        var samples = [Float](repeating: 0, count: 4096 * max(info.channels, 1))
        var total: Int64 = 0
        var peak: Float = 0
        var meter: LoudnessMeter?
        var failure: LoudnessError?
        if measuring {
            do { meter = try LoudnessMeter(channels: info.channels, sampleRate: info.sampleRate) } catch { failure = error }
        }
        while total < wanted {
            let count = try samples.withUnsafeMutableBufferPointer { buffer throws(SoundFileError) in
                try file.read(into: buffer)
            }
            if count == 0 { break }
            let frames = Int(min(Int64(count), wanted - total))
            samples.withUnsafeBufferPointer { buffer in
                let read = UnsafeBufferPointer(rebasing: buffer[0 ..< frames * info.channels])
                for sample in read { peak = max(peak, abs(sample)) }
                meter?.add(read)
            }
            total += Int64(count)
        }
        return (peak, meter?.result, failure)
    }

    /// Checks, before any nap begins, that the sound can be played: the file opens, holds frames,
    /// and its first second decodes. Returns the file's description (nil for the built-in tone).
    /// - Throws: `SoundFileError` (`isMissingInput` → exit 66, `isBadData` → exit 65).
    @discardableResult
    public func validate() throws(SoundFileError) -> SoundFileInfo? {
        guard let path = readablePath else { return nil }
        var file = try SoundFile(readingAtPath: path)
        let info = file.info
        guard info.frames > 0, info.channels > 0, info.sampleRate > 0 else {
            throw SoundFileError(operation: .open, path: path, code: .malformedFile,
                                 message: "the file holds no audio frames (\(info))")
        }
        // Decode up to one second, so a header that opens but data that does not decode is caught now.
        let wanted = Int(min(info.frames, Int64(info.sampleRate)))
        var samples = [Float](repeating: 0, count: max(wanted, 1) * info.channels)
        var total = 0
        while total < wanted {
            let count = try samples.withUnsafeMutableBufferPointer { buffer throws(SoundFileError) in
                try file.read(into: UnsafeMutableBufferPointer(rebasing: buffer[(total * info.channels)...]))
            }
            if count == 0 { break }
            total += count
        }
        guard total > 0 else {
            throw SoundFileError(operation: .read, path: path, code: .malformedFile,
                                 message: "the header promises \(info.frames) frames but none could be decoded")
        }
        return info
    }
}

/// A sound file held open from the start of a nap, so that deleting, renaming or replacing it
/// afterwards (a new file under its name) changes nothing: every playback opens it again through
/// `/proc/self/fd/N`, which reaches the same file even once it has no name, with a position of its
/// own. Only a change written into the file itself can still reach the alarm (the built-in sound
/// then takes over on the same device).
public final class HeldSoundFile: Sendable, Hashable {
    /// The path the person gave.
    public let path: String
    private let descriptor: Int32

    /// Opens `path` (a regular file, without blocking) and keeps it open for the life of the value.
    public init(path: String) throws(SoundFileError) {
        self.path = path
        descriptor = try SoundFileCalls.openRegularFile(path)
    }

    deinit { close(descriptor) }

    /// The path that opens the held file again.
    public var readPath: String { "/proc/self/fd/\(descriptor)" }

    public static func == (lhs: HeldSoundFile, rhs: HeldSoundFile) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

import CEbur128
public import SnoozeFuseCore
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#endif

/// A sound's loudness as EBU R 128 measures it (through libebur128, the library players use for
/// ReplayGain-style normalisation): its integrated loudness and its true peak.
public struct SoundLoudness: Sendable, Hashable, Codable {
    /// Integrated loudness in LUFS; nil when the sound is silent (nothing above the absolute gate,
    /// −70 LUFS).
    public var integrated: Double?
    /// True peak in dBTP (the largest magnitude between samples too, 4× oversampled); −∞ for silence.
    public var truePeak: Double

    /// How much of a sound is measured: its first minute, what a nap measures and plays first (a
    /// sound longer than that is a recording; measuring all of a long one would cost more than
    /// importing it).
    public static let window = Duration.seconds(60)

    public init(integrated: Double?, truePeak: Double) {
        self.integrated = integrated
        self.truePeak = truePeak
    }

    /// The gain in dB (and what limited it) that brings the sound to the alarm's loudness
    /// (``AlarmLoudness``).
    public var alarmGain: (decibels: Double, limit: AlarmLoudness.Limit?) {
        AlarmLoudness.gain(integrated: integrated, truePeak: truePeak)
    }

    /// What the alarm does with it, in words.
    public var summary: String? { AlarmLoudness.describe(integrated: integrated, truePeak: truePeak) }
}

/// Why a loudness could not be measured: libebur128 is missing, or refused the stream.
public struct LoudnessError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// An EBU R 128 measurement under way: frames go in as they are decoded (no second pass over a
/// file, no copy of it), the result comes out at the end.
public final class LoudnessMeter {
    private var state: UnsafeMutablePointer<ebur128_state>?
    public let channels: Int

    /// Loads libebur128 when it is not yet, and starts a measurement of `channels` channels at
    /// `sampleRate` (with true peak).
    public init(channels: Int, sampleRate: Int) throws(LoudnessError) {
        if let missing = AudioLibraries.loadLoudness() { throw LoudnessError(missing.description) }
        self.channels = max(channels, 1)
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
        guard channels > 0, sampleRate > 0, let state = ebur128_init(UInt32(self.channels), UInt(sampleRate), mode) else {
            throw LoudnessError("libebur128 cannot measure \(channels) channels at \(sampleRate) Hz")
        }
        // A mono sound is heard on both sides: it counts as it plays, not as one speaker.
        if self.channels == 1 { _ = ebur128_set_channel(state, 0, Int32(EBUR128_DUAL_MONO.rawValue)) }
        self.state = state
    }

    deinit {
        if state != nil { ebur128_destroy(&state) }
    }

    /// Adds `samples` (interleaved, ``channels`` per frame).
    public func add(_ samples: UnsafeBufferPointer<Float>) {
        guard let state, let base = samples.baseAddress else { return }
        let frames = samples.count / channels
        if frames > 0 { _ = ebur128_add_frames_float(state, base, frames) }
    }

    /// Adds interleaved samples of a sound file as they were decoded: `s16`, `s32`, `f64`, or
    /// floats (anything else), taken as libsndfile gives each (full scale ±1 for floats, the
    /// integer's own range otherwise).
    public func add(raw bytes: UnsafeRawBufferPointer, sampleType: String) {
        guard let state, let base = bytes.baseAddress else { return }
        switch sampleType {
        case "s16":
            let frames = bytes.count / (2 * channels)
            if frames > 0 { _ = ebur128_add_frames_short(state, base.assumingMemoryBound(to: Int16.self), frames) }
        case "s32":
            let frames = bytes.count / (4 * channels)
            if frames > 0 { _ = ebur128_add_frames_int(state, base.assumingMemoryBound(to: Int32.self), frames) }
        case "f64":
            let frames = bytes.count / (8 * channels)
            if frames > 0 { _ = ebur128_add_frames_double(state, base.assumingMemoryBound(to: Double.self), frames) }
        default:
            let frames = bytes.count / (4 * channels)
            if frames > 0 { _ = ebur128_add_frames_float(state, base.assumingMemoryBound(to: Float.self), frames) }
        }
    }

    /// The loudness of everything added.
    public var result: SoundLoudness {
        guard let state else { return SoundLoudness(integrated: nil, truePeak: -.infinity) }
        var global = -Double.infinity
        _ = ebur128_loudness_global(state, &global)
        var peak = 0.0
        for channel in 0 ..< channels {
            var value = 0.0
            if ebur128_true_peak(state, UInt32(channel), &value) == 0 { peak = max(peak, value) }
        }
        return SoundLoudness(integrated: global.isFinite ? global : nil,
                             truePeak: peak > 0 ? 20 * log10(peak) : -.infinity)
    }
}

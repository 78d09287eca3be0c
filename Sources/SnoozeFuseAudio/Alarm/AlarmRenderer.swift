import CSampleRate
import SnoozeFuseCore
public import SnoozeFuseSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Volume, fade-in and fade-out of a stream (an alarm, or a sleep sound that ends before it).
///
/// The gain applied to every sample `t` seconds into the stream is
///
///     g(t) = volume · sin(π/2 · min(t / fadeIn, 1)) · sin(π/2 · min((end − t) / fadeOut, 1))
///
/// an equal-power (quarter-sine) fade in each direction: it starts at exactly 0 (no click), reaches
/// `volume` at `t = fadeIn` and stays there. Power follows sin², so loudness rises quickly at first
/// and eases into the target. `volume` is a linear amplitude factor: 0.5 halves every sample
/// (−6 dB), so a full-scale sine played at volume 0.5 has an RMS of 0.5 · 1/√2. With `fadeIn` of
/// zero, g(t) = volume from the first sample. The second factor applies only to a stream that ends
/// (`AlarmPlaybackSettings.duration`) and has a `fadeOut`: it falls along the mirrored curve to
/// exactly 0 at the end, so the stream stops without a click. Alarms loop until stopped and have no
/// fade-out.
public struct AlarmGain: Sendable, Hashable {
    /// Linear amplitude factor in 0…1.
    public var volume: Double
    /// What brings the sound to the alarm's loudness (``AlarmLoudness``), as an amplitude factor
    /// (above 1 raises it): applied to the sound, never to the built-in tone that replaces one
    /// that fails.
    public var loudness: Double = 1
    /// How long the fade-in takes.
    public var fadeIn: Duration
    /// How long the fade-out before the end of a stream that ends takes.
    public var fadeOut: Duration

    public init(volume: Double, fadeIn: Duration, fadeOut: Duration = .zero) {
        self.volume = min(max(volume, 0), 1)
        self.fadeIn = max(fadeIn, .zero)
        self.fadeOut = max(fadeOut, .zero)
    }

    /// Makes the gain from a percentage (0–100).
    public init(percent: Int, fadeIn: Duration, fadeOut: Duration = .zero) {
        self.init(volume: Double(percent) / 100, fadeIn: fadeIn, fadeOut: fadeOut)
    }

    /// g(t), the gain `seconds` into a stream that ends at `end` seconds (`nil`: never ends).
    @inline(__always)
    public func gain(atSeconds seconds: Double, endingAt end: Double? = nil) -> Double {
        volume * Self.quarterSine(seconds, over: fadeIn.secondsDouble)
            * (end.map { Self.quarterSine($0 - seconds, over: fadeOut.secondsDouble) } ?? 1)
    }

    /// sin(π/2 · min(elapsed / length, 1)), clamped at 0; 1 for a zero-length fade.
    @inline(__always)
    private static func quarterSine(_ elapsed: Double, over length: Double) -> Double {
        guard length > 0 else { return 1 }
        return Trigonometry.sine(Double.pi / 2 * min(max(elapsed / length, 0), 1))
    }
}

extension Duration {
    var secondsDouble: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// How far an alarm has played, readable from any thread while the audio thread renders.
public final class AlarmPlaybackProgress: Sendable {
    private let renderedNanoseconds = Atomic<Int64>(0)

    public init() {}

    /// Time into the alarm of the last frame rendered (written to the device or about to be).
    public var rendered: Duration { .nanoseconds(renderedNanoseconds.load(ordering: .relaxed)) }

    func store(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        renderedNanoseconds.store(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, ordering: .relaxed)
    }
}

/// Holds the alarm's first write back until its due instant.
///
/// The audio thread renders the first buffer (opening, decoding and resampling are done by then),
/// then sleeps with `clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME)` until `due`, so the instant
/// keeps counting through suspend, and writes at once. The sleep is taken in slices of at most
/// 50 ms so `cancel()` is noticed; the last slice ends exactly at `due`.
///
/// Reading the clock for the last milliseconds instead of sleeping them was tried against the
/// wake-up latency of an idle virtual machine (a SCHED_FIFO `clock_nanosleep` overshot by up to
/// 5.5 ms there) and made the tail worse: idle lateness p99 4.3 ms with 2 ms of it and 14.7 ms
/// with 10 ms, against 2.0 and 0.7 ms sleeping (50 naps each, whole runs of `make bench`). The
/// host takes a busy virtual CPU as readily as it is slow to wake an idle one.
public final class AlarmStartGate: Sendable {
    /// When the first frame should be written.
    public let due: BootInstant
    private let cancelled = Atomic<Bool>(false)

    public init(due: BootInstant) {
        self.due = due
    }

    /// Makes `wait()` return `false` soon (within 50 ms).
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Sleeps until `due`; returns `false` if cancelled first.
    public func wait() -> Bool {
        SystemThread.sleep(until: due, unless: { isCancelled })
    }
}

/// The alarm's render chain, run by `PCMPlaybackThread`:
/// source → channel conversion (mono ↔ stereo, or any count) → resampling with libsamplerate (only
/// when the source's rate differs from the device's) → gain (`AlarmGain`) → the device.
///
/// Every buffer is allocated in `init`; `render` neither allocates nor locks. If the source fails
/// mid-stream (a decoding error, a plugin that stopped), the chain switches to its fallback
/// (`SourceFailureFallback`): for an alarm the built-in tone at the device's rate, so the alarm
/// never goes silent; for a sleep sound silence. `switchedToBuiltInTone` then tells why, and
/// `onSwitch` is called once (on the audio thread).
///
/// An alarm is audible or it is not an alarm: after the fade-in, the chain measures what it writes
/// (after the gain); when its peak stays below ``silenceThreshold`` (−50 dBFS) for
/// ``silenceLimit``, it switches to the built-in tone in the same way.
public final class AlarmRenderer: PCMRenderSource {
    /// Source frames decoded per step.
    private static let chunkFrames = 1024

    private var source: any AlarmSoundSource
    private var fallbackTone: AlarmToneSource
    private var usingFallbackTone = false
    private let onSourceFailure: SourceFailureFallback
    public private(set) var switchedToBuiltInTone: SoundFileError?
    private let onSwitch: @Sendable (String) -> Void

    /// Below this peak (−50 dBFS) an alarm's output counts as silent.
    public static let silenceThreshold: Float = 0.003_162_3
    /// How long an alarm's output may stay silent before the built-in tone takes over: longer than
    /// the silence a sound may start with or pause for (a file whose first 2 s are silent plays
    /// as itself).
    public static let silenceLimit = Duration.seconds(4)
    /// Frames written in a row, after the fade-in, whose peak stayed below the threshold.
    private var silentFrames: Int64 = 0
    private let silenceLimitFrames: Int64

    private let format: PCMStreamFormat
    private let gain: AlarmGain
    private let progress: AlarmPlaybackProgress?
    private var gate: AlarmStartGate?

    /// Source frames in the source's channel layout.
    private let sourceBuffer: UnsafeMutableBufferPointer<Float>
    /// Source frames converted to the device's channel count (the resampler's input).
    private let convertedBuffer: UnsafeMutableBufferPointer<Float>
    private var pendingOffset = 0
    private var pendingFrames = 0
    private var resampler: OpaquePointer?
    private var ratio: Double = 1

    /// Output frames rendered so far, counted from the start of the alarm (including `startingAt`).
    private var renderedFrames: Int64
    /// Where the stream ends (`duration` past the start), if it ends.
    private let endFrame: Int64?

    /// - Parameters:
    ///   - source: what to play; it is handed over to the audio thread.
    ///   - format: what the device negotiated.
    ///   - startingAt: resume this far into the alarm (source position and fade), e.g. after a reconnect.
    ///   - gate: when given, the first buffer is rendered and then held until the gate's due instant.
    ///   - progress: updated after every buffer.
    ///   - duration: end the stream (drained, so it plays out) after this much of the alarm, counted
    ///     from its start; `nil` loops until stopped.
    ///   - onSourceFailure: what plays when the source fails (an alarm's silence is watched only
    ///     when it is the built-in tone).
    ///   - onSwitch: called once, on the audio thread, when the chain leaves its source, with why.
    /// - Throws: `AlarmPlayerError.resampler` when libsamplerate refuses the conversion.
    public init(source: sending any AlarmSoundSource, format: PCMStreamFormat, gain: AlarmGain,
                startingAt: Duration = .zero, gate: AlarmStartGate? = nil,
                progress: AlarmPlaybackProgress? = nil, duration: Duration? = nil,
                onSourceFailure: SourceFailureFallback = .builtInTone,
                onSwitch: @escaping @Sendable (String) -> Void = { _ in }) throws(AlarmPlayerError) {
        var source = source
        self.onSourceFailure = onSourceFailure
        self.onSwitch = onSwitch
        silenceLimitFrames = framesFor(Self.silenceLimit, rate: format.sampleRate)
        self.format = format
        self.gain = gain
        self.progress = progress
        self.gate = gate
        fallbackTone = AlarmToneSource(sampleRate: format.sampleRate)
        renderedFrames = framesFor(startingAt, rate: format.sampleRate)
        endFrame = duration.map { framesFor($0, rate: format.sampleRate) }
        if startingAt > .zero {
            source.seek(to: startingAt)
            fallbackTone.seek(to: startingAt)
        }
        let sourceChannels = max(source.channels, 1)
        let deviceChannels = max(format.channels, 1)
        sourceBuffer = .allocate(capacity: Self.chunkFrames * max(sourceChannels, deviceChannels))
        sourceBuffer.initialize(repeating: 0)
        convertedBuffer = .allocate(capacity: Self.chunkFrames * deviceChannels)
        convertedBuffer.initialize(repeating: 0)
        if source.sampleRate != format.sampleRate {
            var error: Int32 = 0
            let state = src_new(Int32(SRC_SINC_MEDIUM_QUALITY), Int32(deviceChannels), &error)
            guard let state else {
                sourceBuffer.deallocate()
                convertedBuffer.deallocate()
                let reason = src_strerror(error).map { String(cString: $0) } ?? "error \(error)"
                throw .resampler("libsamplerate cannot convert \(source.sampleRate) Hz to \(format.sampleRate) Hz: \(reason)")
            }
            resampler = state
            ratio = Double(format.sampleRate) / Double(source.sampleRate)
        }
        self.source = source
    }

    deinit {
        if let resampler { src_delete(resampler) }
        sourceBuffer.deallocate()
        convertedBuffer.deallocate()
    }

    public func render(into buffer: UnsafeMutableBufferPointer<Float>, format: PCMStreamFormat) -> Int {
        let channels = max(self.format.channels, 1)
        var frames = buffer.count / channels
        if let endFrame { frames = Int(min(Int64(frames), max(endFrame - renderedFrames, 0))) }
        guard frames > 0 else { return 0 }
        let buffer = UnsafeMutableBufferPointer(rebasing: buffer[0 ..< frames * channels])
        if resampler != nil && !usingFallbackTone {
            fillResampled(buffer, frames: frames, channels: channels)
        } else {
            fillDirect(buffer, frames: frames, channels: channels)
        }
        let fadingIn = renderedFrames < fadeInFrames
        applyGain(buffer, frames: frames, channels: channels)
        if !fadingIn { watchSilence(peak: Self.peak(of: UnsafeBufferPointer(buffer)), frames: frames) }
        progress?.store(self.format.duration(ofFrames: Int(renderedFrames)))
        if let gate {
            self.gate = nil
            // The first buffer is ready; hold it until the due instant. Cancelled: end without writing.
            if !gate.wait() { return 0 }
        }
        return frames
    }

    // MARK: - Stages

    /// Source → channel conversion straight into the output (rates match).
    private func fillDirect(_ buffer: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        var done = 0
        while done < frames {
            let count = min(Self.chunkFrames, frames - done)
            let got = readSource(frames: count)
            convertChannels(frames: got, into: buffer.baseAddress! + done * channels, channels: channels)
            done += got
        }
    }

    /// Source → channel conversion → libsamplerate (streaming, `src_process`) into the output.
    private func fillResampled(_ buffer: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        var done = 0
        while done < frames {
            if pendingFrames == 0 {
                let got = readSource(frames: Self.chunkFrames)
                if usingFallbackTone {
                    // The file failed: the tone is at the device's rate, no resampling.
                    let rest = UnsafeMutableBufferPointer(rebasing: buffer[(done * channels)...])
                    fillDirect(rest, frames: frames - done, channels: channels)
                    return
                }
                convertChannels(frames: got, into: convertedBuffer.baseAddress!, channels: channels)
                pendingOffset = 0
                pendingFrames = got
            }
            var data = SRC_DATA(
                data_in: UnsafePointer(convertedBuffer.baseAddress! + pendingOffset * channels),
                data_out: buffer.baseAddress! + done * channels,
                input_frames: pendingFrames, output_frames: frames - done,
                input_frames_used: 0, output_frames_gen: 0, end_of_input: 0, src_ratio: ratio)
            let status = src_process(resampler, &data)
            if status != 0 {
                // Cannot happen with a valid state and ratio; never go silent if it does.
                switchToFallback(SoundFileError(operation: .read, path: "libsamplerate", code: .noError,
                                                message: String(cString: src_strerror(status))))
                continue
            }
            pendingOffset += data.input_frames_used
            pendingFrames -= data.input_frames_used
            done += data.output_frames_gen
        }
    }

    /// Reads `frames` (≤ chunk) source frames into `sourceBuffer`; switches to the fallback (the
    /// tone, or silence) on failure.
    private func readSource(frames: Int) -> Int {
        if !usingFallbackTone {
            let wanted = UnsafeMutableBufferPointer(rebasing: sourceBuffer[0 ..< frames * source.channels])
            let got = source.read(into: wanted)
            if got == frames { return got }
            switchToFallback(source.failure ?? SoundFileError(operation: .read, path: "the alarm sound", code: .noError,
                                                              message: "it came up short"), why: source.failureText)
        }
        let wanted = UnsafeMutableBufferPointer(rebasing: sourceBuffer[0 ..< frames])
        if onSourceFailure == .silence {
            wanted.update(repeating: 0)
            return frames
        }
        return fallbackTone.read(into: wanted)
    }

    /// Maps `frames` frames in `sourceBuffer` to `channels` output channels: equal counts copy;
    /// mono is copied to every channel; to mono, channels are averaged; otherwise output channel `c`
    /// takes source channel `c` (or, past the source's channels, the source's channel `c mod n`).
    private func convertChannels(frames: Int, into output: UnsafeMutablePointer<Float>, channels: Int) {
        let input = sourceBuffer.baseAddress!
        let inChannels = usingFallbackTone ? 1 : max(source.channels, 1)
        if inChannels == channels {
            output.update(from: input, count: frames * channels)
        } else if inChannels == 1 {
            for frame in 0 ..< frames {
                let value = input[frame]
                for channel in 0 ..< channels { output[frame * channels + channel] = value }
            }
        } else if channels == 1 {
            let scale = 1 / Float(inChannels)
            for frame in 0 ..< frames {
                var sum: Float = 0
                for channel in 0 ..< inChannels { sum += input[frame * inChannels + channel] }
                output[frame] = sum * scale
            }
        } else {
            for frame in 0 ..< frames {
                for channel in 0 ..< channels {
                    output[frame * channels + channel] = input[frame * inChannels + channel % inChannels]
                }
            }
        }
    }

    /// Multiplies by g(t) (see `AlarmGain`), frame by frame while fading in or out, and by the
    /// constant volume in between.
    ///
    /// Between the fades (all but the first seconds of an alarm) it is one flat loop over contiguous
    /// samples with loop-invariant values, which the compiler vectorises: this runs for every
    /// sample of every alarm, so it is kept as cheap as the copy around it.
    private func applyGain(_ buffer: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        guard let samples = buffer.baseAddress else { return }
        let rate = Double(max(format.sampleRate, 1))
        let gain = self.gain
        let first = renderedFrames
        let fadeInEnd = Int64(gain.fadeIn.secondsDouble * rate)
        let end = endFrame.map { Double($0) / rate }
        // Frames from here on fade out (never, for a stream that does not end).
        let fadeOutStart = endFrame.map { $0 - Int64(gain.fadeOut.secondsDouble * rate) } ?? .max
        // The sound's own loudness correction; the built-in tone plays as it is.
        let normal = usingFallbackTone ? 1 : gain.loudness
        func fade(_ range: Range<Int>) {
            for frame in range {
                let factor = Float(normal * gain.gain(atSeconds: Double(first + Int64(frame)) / rate, endingAt: end))
                for index in frame * channels ..< (frame + 1) * channels {
                    samples[index] = min(max(samples[index] * factor, -1), 1)
                }
            }
        }
        let flatStart = Int(min(max(fadeInEnd - first, 0), Int64(frames)))
        let flatEnd = max(Int(min(max(fadeOutStart - first, 0), Int64(frames))), flatStart)
        fade(0 ..< flatStart)
        let volume = Float(gain.volume * normal)
        for index in flatStart * channels ..< flatEnd * channels {
            samples[index] = min(max(samples[index] * volume, -1), 1)
        }
        fade(flatEnd ..< frames)
        renderedFrames = first + Int64(frames)
    }

    /// Leaves the source for the fallback (the tone, or silence) for good, saying why once
    /// (`why`, or the error's own description).
    private func switchToFallback(_ reason: SoundFileError, why: String? = nil) {
        guard !usingFallbackTone else { return }
        usingFallbackTone = true
        switchedToBuiltInTone = reason
        let instead = onSourceFailure == .silence ? "silence" : "the built-in tone"
        onSwitch("\(why ?? reason.description) \(instead) plays instead")
    }

    /// Frames into the stream where the fade-in ends.
    private var fadeInFrames: Int64 { Int64(gain.fadeIn.secondsDouble * Double(max(format.sampleRate, 1))) }

    /// The largest magnitude among `samples`. One flat loop, which the compiler vectorises.
    static func peak(of samples: UnsafeBufferPointer<Float>) -> Float {
        var peak: Float = 0
        for sample in samples { peak = max(peak, abs(sample)) }
        return peak
    }

    /// Counts `frames` just written at `peak` (full scale 1) towards the silence limit of an alarm,
    /// and switches to the built-in tone when the output stayed silent that long.
    func watchSilence(peak: Float, frames: Int) {
        guard onSourceFailure == .builtInTone, !usingFallbackTone else { return }
        guard peak < Self.silenceThreshold else {
            silentFrames = 0
            return
        }
        silentFrames += Int64(frames)
        if silentFrames >= silenceLimitFrames {
            let what = "the alarm's output stayed below -50 dBFS for \(Self.silenceLimit.components.seconds) s (a silent sound, or a volume too low to hear)"
            switchToFallback(SoundFileError(operation: .read, path: "the alarm sound", code: .noError, message: what),
                             why: what + ":")
        }
    }

    // MARK: - Pass-through for the S16 path (`AlarmS16Renderer`)

    /// The source, when it is a sound file.
    var fileSource: LoopingSoundFileSource? { source as? LoopingSoundFileSource }

    /// How many frames the next buffer of at most `capacity` frames holds (fewer near the end).
    func framesToRender(capacity: Int) -> Int {
        guard let endFrame else { return capacity }
        return Int(min(Int64(capacity), max(endFrame - renderedFrames, 0)))
    }

    /// The constant gain of the next `frames` frames when they may be taken straight from the source
    /// instead of through `render`: the source is healthy, needs no channel conversion or
    /// resampling, no start gate is pending, and the gain does not change within them (the fade-in
    /// is over). Must agree with `applyGain`: if it would scale any of those frames by something
    /// other than the value returned, this must be `nil`.
    func passThroughGain(frames: Int) -> Float? {
        guard gate == nil, resampler == nil, !usingFallbackTone, source.channels == format.channels else { return nil }
        let fadeFrames = Int64(gain.fadeIn.secondsDouble * Double(max(format.sampleRate, 1)))
        // Raised above full scale, the samples must be clipped: the float chain does that.
        let total = gain.volume * gain.loudness
        return renderedFrames >= fadeFrames && total <= 1 ? Float(total) : nil
    }

    /// Counts `frames` frames rendered outside `render` (taken straight from the source).
    func advance(by frames: Int) {
        renderedFrames += Int64(frames)
        progress?.store(format.duration(ofFrames: Int(renderedFrames)))
    }
}

@available(*, unavailable)
extension AlarmRenderer: Sendable {}

/// Why an alarm could not start playing.
public enum AlarmPlayerError: Error, Sendable, CustomStringConvertible {
    /// The device failed (to open, or to accept the configuration).
    case device(ALSAError)
    /// The sound could not be opened or decoded.
    case sound(SoundFileError)
    /// libsamplerate refused the conversion.
    case resampler(String)

    public var description: String {
        switch self {
        case .device(let error): error.description
        case .sound(let error): error.description
        case .resampler(let message): message
        }
    }
}

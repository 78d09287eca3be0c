/// The alarm's render chain for a 16-bit PCM file on a device that took S16 (`S16_LE`) at the
/// file's own rate and channel count: once the fade-in is over, frames go from the file
/// (`sf_readf_short`, which copies 16-bit PCM as stored) to the device without ever becoming floats,
/// scaled in integer arithmetic unless the volume is 100 %.
///
/// Everything else (the start gate, the fade-in, the fallback to the built-in tone when the file
/// fails, resuming from a position, the stream's end) is the float chain's (`AlarmRenderer`,
/// which reads the same source), with its output rounded to S16 as `PCMOutput` would round it. So
/// the two paths agree to within 1 LSB, and the loop seam is the same: the file source loops inside
/// one read on both.
///
/// Every buffer is allocated in `init`; `render` neither allocates nor locks.
public final class AlarmS16Renderer: PCMRenderSource {
    private let chain: AlarmRenderer
    private let file: LoopingSoundFileSource
    private let channels: Int
    /// The float chain's output before rounding: one period.
    private let floatBuffer: UnsafeMutableBufferPointer<Float>

    /// Why the file source was abandoned for the built-in tone, if it was.
    public var switchedToBuiltInTone: SoundFileError? { chain.switchedToBuiltInTone }

    /// Same parameters as `AlarmRenderer.init`; `format` must be `S16_LE`.
    /// - Throws: `AlarmPlayerError.resampler` when libsamplerate refuses the conversion (the float
    ///   chain resamples only if the device's rate is not the file's).
    public init(file: sending LoopingSoundFileSource, format: PCMStreamFormat, gain: AlarmGain,
                startingAt: Duration = .zero, gate: AlarmStartGate? = nil,
                progress: AlarmPlaybackProgress? = nil, duration: Duration? = nil,
                onSwitch: @escaping @Sendable (String) -> Void = { _ in }) throws(AlarmPlayerError) {
        precondition(format.sampleFormat == .int16LE, "the S16 chain needs an S16 device, not \(format.sampleFormat)")
        let chain = try AlarmRenderer(source: file, format: format, gain: gain, startingAt: startingAt,
                                      gate: gate, progress: progress, duration: duration, onSwitch: onSwitch)
        // The chain owns the file now; this renderer reads it through the same reference.
        self.file = chain.fileSource!
        self.chain = chain
        channels = max(format.channels, 1)
        floatBuffer = .allocate(capacity: max(format.periodFrames, 1) * channels)
        floatBuffer.initialize(repeating: 0)
    }

    deinit {
        floatBuffer.deallocate()
    }

    public func render(into buffer: UnsafeMutableBufferPointer<Int16>, format: PCMStreamFormat) -> Int {
        let frames = chain.framesToRender(capacity: buffer.count / channels)
        guard frames > 0, let samples = buffer.baseAddress else { return 0 }
        var done = 0
        if file.isInt16PCM, let volume = chain.passThroughGain(frames: frames) {
            done = file.read(into: UnsafeMutableBufferPointer(start: samples, count: frames * channels))
            let written = UnsafeMutableBufferPointer(start: samples, count: done * channels)
            Self.scale(written, by: volume)
            chain.watchSilence(peak: Float(Self.peak(of: UnsafeBufferPointer(written))) / 32768, frames: done)
            chain.advance(by: done)
        }
        // The rest (all of it while fading or after the file failed) through the float chain.
        while done < frames {
            let count = min(frames - done, floatBuffer.count / channels)
            let got = chain.render(into: UnsafeMutableBufferPointer(rebasing: floatBuffer[0 ..< count * channels]),
                                   format: format)
            guard got > 0 else { break }
            let output = samples + done * channels
            for index in 0 ..< got * channels {
                output[index] = PCMOutput.int16(from: floatBuffer[index])
            }
            done += got
        }
        return done
    }

    /// The largest magnitude among `samples`, in sample units. One flat loop, vectorised.
    static func peak(of samples: UnsafeBufferPointer<Int16>) -> Int32 {
        var peak: Int32 = 0
        for sample in samples { peak = max(peak, abs(Int32(sample))) }
        return peak
    }

    /// Multiplies every sample by `volume` (0…1) in Q15 fixed point, rounding to nearest: within
    /// 1 LSB of the float chain's `round(sample · volume)`. At 100 % it leaves the samples as they are.
    /// One flat loop over contiguous samples, which the compiler vectorises.
    static func scale(_ samples: UnsafeMutableBufferPointer<Int16>, by volume: Float) {
        let factor = Int32((min(max(volume, 0), 1) * 32768).rounded())
        guard factor < 32768, let base = samples.baseAddress else { return }
        for index in 0 ..< samples.count {
            base[index] = Int16(truncatingIfNeeded: (Int32(base[index]) &* factor &+ 16384) &>> 15)
        }
    }
}

@available(*, unavailable)
extension AlarmS16Renderer: Sendable {}

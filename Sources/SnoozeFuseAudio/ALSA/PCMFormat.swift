import CALSA

/// A sample format `PCMOutput` can negotiate (interleaved, little-endian).
public enum PCMSampleFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 32-bit IEEE float in [-1, 1], ALSA's `FLOAT_LE`. Preferred: no conversion, no clipping surprises.
    case float32LE = "FLOAT_LE"
    /// 16-bit signed integer, ALSA's `S16_LE`. Every device (or its `plug` layer) takes it.
    case int16LE = "S16_LE"

    /// Bytes of one sample of one channel.
    public var bytesPerSample: Int {
        switch self {
        case .float32LE: 4
        case .int16LE: 2
        }
    }

    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .float32LE: SND_PCM_FORMAT_FLOAT_LE
        case .int16LE: SND_PCM_FORMAT_S16_LE
        }
    }

    public var description: String { rawValue }
}

/// A sample type the audio thread can write to a `PCMOutput` (see `PCMRenderSource.Sample`).
public protocol PCMSample: AdditiveArithmetic {
    /// Writes interleaved samples to `output` (blocking until queued).
    static func write(_ samples: UnsafeBufferPointer<Self>, to output: any PCMWritable) throws(ALSAError)
}

extension Float: PCMSample {
    /// Writes as the device's format: as is to `FLOAT_LE`, converted to `S16_LE`.
    public static func write(_ samples: UnsafeBufferPointer<Float>, to output: any PCMWritable) throws(ALSAError) {
        try output.write(samples)
    }
}

extension Int16: PCMSample {
    /// Writes as is; the device must have taken `S16_LE`.
    public static func write(_ samples: UnsafeBufferPointer<Int16>, to output: any PCMWritable) throws(ALSAError) {
        try output.write(samples)
    }
}

/// What `PCMOutput` asks the device for. The device may give something else: see `PCMStreamFormat`.
///
/// Buffer sizing: an alarm needs no low latency, and the buffer time is what drives wake-ups
/// (10 ms ≈ 1200 wake-ups/s, 500 ms ≈ 40/s), and wake-ups are most of what a playing alarm costs
/// (through PulseAudio, the plugin's thread wakes with ours). The default asks for a 500 ms buffer in
/// 2 periods of 250 ms: the audio thread wakes about 4 times a second (aplay's 500 ms in 4 periods:
/// 8), a stop (drop) is noticed within one period, and a stall of up to ~250 ms in rendering does
/// not underrun.
public struct PCMConfiguration: Sendable, Hashable {
    /// Frames per second to ask for (taken "near": the device may pick the closest it supports).
    public var sampleRate: Int
    /// Channels to ask for (taken "near").
    public var channels: Int
    /// Sample formats in order of preference; the first one the device accepts is used.
    public var formats: [PCMSampleFormat]
    /// Total buffer length to ask for.
    public var bufferTime: Duration
    /// How many periods (wake-ups) per buffer to ask for.
    public var periodsPerBuffer: Int

    public init(sampleRate: Int = 48_000, channels: Int = 2,
                formats: [PCMSampleFormat] = [.float32LE, .int16LE],
                bufferTime: Duration = .milliseconds(500), periodsPerBuffer: Int = 2) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.formats = formats
        self.bufferTime = bufferTime
        self.periodsPerBuffer = periodsPerBuffer
    }
}

/// What the device agreed to after negotiation.
public struct PCMStreamFormat: Sendable, Hashable, CustomStringConvertible {
    /// The sample format written to the device.
    public var sampleFormat: PCMSampleFormat
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channels: Int
    /// The ring buffer's size in frames.
    public var bufferFrames: Int
    /// One period in frames (the device wakes the writer once per period).
    public var periodFrames: Int

    public init(sampleFormat: PCMSampleFormat, sampleRate: Int, channels: Int, bufferFrames: Int,
                periodFrames: Int) {
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        self.channels = channels
        self.bufferFrames = bufferFrames
        self.periodFrames = periodFrames
    }

    /// Bytes in one frame (all channels).
    public var bytesPerFrame: Int { sampleFormat.bytesPerSample * channels }

    /// How long `frames` frames play.
    public func duration(ofFrames frames: Int) -> Duration {
        durationOf(frames: Int64(frames), rate: sampleRate)
    }

    public func duration(ofFrames frames: Int64) -> Duration {
        durationOf(frames: frames, rate: sampleRate)
    }

    public var description: String {
        "\(sampleFormat) \(sampleRate) Hz \(channels) ch, buffer \(bufferFrames) frames, period \(periodFrames) frames"
    }
}

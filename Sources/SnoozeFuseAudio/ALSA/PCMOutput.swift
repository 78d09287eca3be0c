import CALSA

/// Where the audio thread (`PCMPlaybackThread`) writes: an ALSA PCM (`PCMOutput`), or the sound
/// server's streams on one or more sinks (`PulseSinkOutput`). Not thread-safe: one thread owns it
/// at a time. Failures are `ALSAError`s (`kind == .deviceLost`: close it and open it again).
public protocol PCMWritable: AnyObject {
    /// The name it was opened with, for messages.
    var device: String { get }
    /// What the device agreed to.
    var format: PCMStreamFormat { get }
    /// How many underruns or suspends `write` recovered from.
    var recoveries: Int { get }
    /// Whether it takes frames as fast as they are written (what plays must pace itself).
    var consumesInstantly: Bool { get }
    /// Whether everything written so far has already been taken.
    var queueIsEmpty: Bool { get }
    /// Writes interleaved float samples, blocking while the buffer is full.
    func write(_ samples: UnsafeBufferPointer<Float>) throws(ALSAError)
    /// Writes interleaved 16-bit samples (the device took `S16_LE`).
    func write(_ samples: UnsafeBufferPointer<Int16>) throws(ALSAError)
    /// Stops at once, discarding what is queued.
    func drop() throws(ALSAError)
    /// Blocks until what is queued has played.
    func drain() throws(ALSAError)
    /// Closes it. Idempotent.
    func close()
}

extension PCMOutput: PCMWritable {}

/// An ALSA PCM opened for playback in blocking mode, with interleaved samples in a negotiated format.
///
/// Not thread-safe and not `Sendable`: one thread owns it at a time (typically the audio thread, see
/// `PCMPlaybackThread`). Closed by `close()` or when released.
public final class PCMOutput {
    /// The PCM name it was opened with (`default`, `hw:0`, `null`, `file:FILE=out.wav,FORMAT=wav`…).
    public let device: String
    /// What the device agreed to.
    public let format: PCMStreamFormat
    /// How many xruns (underruns) or suspends `write` recovered from with `snd_pcm_recover`.
    public private(set) var recoveries: Int = 0

    private var pcm: OpaquePointer?
    /// Conversion buffer for float input to an S16 device: one period, allocated once at open.
    private let scratch: UnsafeMutableBufferPointer<Int16>

    /// Opens `device` for playback and negotiates `configuration` (taking the nearest rate and
    /// channel count the device offers; read the result from `format`). The PCM is prepared and ready
    /// for `write`.
    ///
    /// The open itself is non-blocking (a busy `hw:` device fails with `EBUSY` instead of hanging), then
    /// the PCM is switched to blocking mode for writing.
    public init(device: String, configuration: PCMConfiguration = PCMConfiguration()) throws(ALSAError) {
        self.device = device
        let pcm = try Self.open(device: device, nonBlocking: true)
        do {
            try ALSACall.check(device: device, .open, detail: "switching to blocking mode") {
                snd_pcm_nonblock(pcm, 0)
            }
            format = try Self.negotiate(pcm: pcm, device: device, configuration: configuration)
            try ALSACall.check(device: device, .prepare) { snd_pcm_prepare(pcm) }
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        self.pcm = pcm
        scratch = .allocate(capacity: max(format.periodFrames, 1) * max(format.channels, 1))
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// `true` until `close()`.
    public var isOpen: Bool { pcm != nil }

    /// Whether the device takes frames as fast as they are written rather than at the pace of a
    /// clock (ALSA's `file` and `null` PCMs): what plays on it must pace itself.
    public var consumesInstantly: Bool {
        guard let pcm else { return false }
        let type = snd_pcm_type(pcm)
        return type == SND_PCM_TYPE_FILE || type == SND_PCM_TYPE_NULL
    }

    /// Whether everything written so far has already been taken (nothing queued, the whole buffer
    /// free): right after a write, the sign of a device without a clock behind another plugin
    /// (`plug:null`).
    public var queueIsEmpty: Bool {
        guard let delay = try? delayFrames(), let available = try? availableFrames() else { return false }
        return delay == 0 && available >= format.bufferFrames
    }

    /// Closes the PCM (pending frames are discarded, as with `drop`). Idempotent. A `file` PCM
    /// finishes its file here.
    public func close() {
        guard let pcm else { return }
        self.pcm = nil
        _ = try? ALSACall.check(device: device, .close) { snd_pcm_close(pcm) }
        if format.sampleFormat == .float32LE, let path = Self.wavRecording(device) {
            WAVHeaderLabel.markFloat(atPath: path)
        }
    }

    /// The file that `device` records WAV to when it is ALSA's `file` PCM writing WAV
    /// (`file:FILE=alarm.wav,FORMAT=wav`, or by position `file:alarm.wav,wav`); nil otherwise.
    /// alsa-lib labels such a file integer PCM whatever its samples are; a float recording is
    /// labelled again when the PCM closes (``WAVHeaderLabel``).
    static func wavRecording(_ device: String) -> String? {
        guard device.lowercased().hasPrefix("file:") else { return nil }
        let unquoted = { (text: Substring) in String(text.filter { $0 != "'" && $0 != "\"" }) }
        var file: String?, wav = false
        for (index, argument) in device.dropFirst(5).split(separator: ",").enumerated() {
            let lower = argument.lowercased()
            if lower.hasPrefix("file=") {
                file = unquoted(argument.dropFirst(5))
            } else if lower.hasPrefix("format=") {
                wav = lower.dropFirst(7) == "wav"
            } else if index == 0 {
                file = unquoted(argument)
            } else if index == 1 {
                wav = lower == "wav"
            }
        }
        return wav ? file : nil
    }

    /// Writes interleaved float samples (`channels` per frame) and returns when all were queued,
    /// blocking while the buffer is full. Converts to S16 when that is what the device took.
    /// Recovers from xruns and suspends; throws `ALSAError` with `kind == .deviceLost` when the
    /// device is gone (close and reopen).
    public func write(_ samples: UnsafeBufferPointer<Float>) throws(ALSAError) {
        let pcm = try openPCM(.write)
        let channels = format.channels
        precondition(samples.count % channels == 0, "sample count must be a whole number of frames")
        guard let base = samples.baseAddress else { return }
        switch format.sampleFormat {
        case .float32LE:
            try writeFrames(pcm, UnsafeRawPointer(base), frames: samples.count / channels)
        case .int16LE:
            var offset = 0
            while offset < samples.count {
                let count = min(scratch.count, samples.count - offset)
                for index in 0..<count {
                    scratch[index] = Self.int16(from: base[offset + index])
                }
                try writeFrames(pcm, UnsafeRawPointer(scratch.baseAddress!), frames: count / channels)
                offset += count
            }
        }
    }

    /// Writes interleaved 16-bit samples. Requires `format.sampleFormat == .int16LE`.
    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(ALSAError) {
        let pcm = try openPCM(.write)
        precondition(format.sampleFormat == .int16LE, "the device was negotiated as \(format.sampleFormat)")
        precondition(samples.count % format.channels == 0, "sample count must be a whole number of frames")
        guard let base = samples.baseAddress else { return }
        try writeFrames(pcm, UnsafeRawPointer(base), frames: samples.count / format.channels)
    }

    /// Stops at once, discarding queued frames (for dismiss), and prepares the PCM for more writes.
    public func drop() throws(ALSAError) {
        let pcm = try openPCM(.drop)
        try ALSACall.check(device: device, .drop) { snd_pcm_drop(pcm) }
        try ALSACall.check(device: device, .prepare) { snd_pcm_prepare(pcm) }
    }

    /// Blocks until every queued frame has played (natural end), then prepares the PCM for more writes.
    public func drain() throws(ALSAError) {
        let pcm = try openPCM(.drain)
        try ALSACall.check(device: device, .drain) { snd_pcm_drain(pcm) }
        try ALSACall.check(device: device, .prepare) { snd_pcm_prepare(pcm) }
    }

    /// Frames that can be written now without blocking (`snd_pcm_avail`).
    public func availableFrames() throws(ALSAError) -> Int {
        let pcm = try openPCM(.status)
        return Int(try ALSACall.check(device: device, .status) { snd_pcm_avail(pcm) })
    }

    /// Frames written but not yet heard (`snd_pcm_delay`): how long a frame written now waits.
    /// Useful for measuring lateness. Fails with `EPIPE` after an underrun.
    public func delayFrames() throws(ALSAError) -> Int {
        let pcm = try openPCM(.status)
        var delay: snd_pcm_sframes_t = 0
        try ALSACall.check(device: device, .status) { snd_pcm_delay(pcm, &delay) }
        return Int(delay)
    }

    // MARK: - Internals

    private func openPCM(_ operation: ALSAError.Operation) throws(ALSAError) -> OpaquePointer {
        guard let pcm else {
            throw ALSAError(device: device, operation: operation, code: .badState, detail: "the PCM is closed")
        }
        return pcm
    }

    /// Loops until all `frames` are queued: partial writes continue, errors go through
    /// `ALSACall.handleStreamError` (EINTR retry, xrun/suspend recovery, otherwise throw).
    private func writeFrames(_ pcm: OpaquePointer, _ data: UnsafeRawPointer, frames: Int) throws(ALSAError) {
        let bytesPerFrame = format.bytesPerFrame
        var done = 0
        ALSAMessageCapture.begin()
        defer { ALSAMessageCapture.end() }
        while done < frames {
            let result = snd_pcm_writei(pcm, data + done * bytesPerFrame, snd_pcm_uframes_t(frames - done))
            if result >= 0 {
                done += Int(result)
                continue
            }
            let action = try ALSACall.handleStreamError(
                ALSAErrno(returnValue: result), pcm: pcm, device: device, operation: .write)
            if case .retry(recovered: true) = action {
                recoveries += 1
            }
        }
    }

    /// Float in [-1, 1] to S16: scaled by 32768, rounded to nearest, clamped. So `Float(k) / 32768`
    /// becomes exactly `k`.
    @inline(__always)
    static func int16(from sample: Float) -> Int16 {
        let scaled = (sample * 32768).rounded()
        if scaled >= 32767 { return .max }
        if scaled <= -32768 { return .min }
        if scaled.isNaN { return 0 }
        return Int16(scaled)
    }

    static func open(device: String, nonBlocking: Bool) throws(ALSAError) -> OpaquePointer {
        var pcm: OpaquePointer?
        try ALSACall.check(device: device, .open) {
            snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, nonBlocking ? SND_PCM_NONBLOCK : 0)
        }
        guard let pcm else {
            throw ALSAError(device: device, operation: .open, code: .noSuchEntry, detail: "snd_pcm_open returned no PCM")
        }
        return pcm
    }

    private static func negotiate(pcm: OpaquePointer, device: String,
                                  configuration: PCMConfiguration) throws(ALSAError) -> PCMStreamFormat {
        var paramsPointer: OpaquePointer?
        try ALSACall.check(device: device, .hwParams) { snoozefuse_pcm_hw_params_malloc(&paramsPointer) }
        guard let params = paramsPointer else {
            throw ALSAError(device: device, operation: .hwParams, code: .noMemory)
        }
        defer { snd_pcm_hw_params_free(params) }

        try ALSACall.check(device: device, .hwParams, detail: "no configurations") {
            snd_pcm_hw_params_any(pcm, params)
        }
        try ALSACall.check(device: device, .hwParams, detail: "interleaved read/write access") {
            snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        }
        guard let sampleFormat = configuration.formats.first(where: {
            snd_pcm_hw_params_test_format(pcm, params, $0.alsaFormat) == 0
        }) else {
            let wanted = configuration.formats.map(\.rawValue).joined(separator: ", ")
            throw ALSAError(device: device, operation: .hwParams, code: .invalidArgument,
                            detail: "none of the sample formats \(wanted)")
        }
        try ALSACall.check(device: device, .hwParams, detail: "sample format \(sampleFormat)") {
            snd_pcm_hw_params_set_format(pcm, params, sampleFormat.alsaFormat)
        }
        var channels = UInt32(clamping: max(configuration.channels, 1))
        try ALSACall.check(device: device, .hwParams, detail: "\(configuration.channels) channels") {
            snd_pcm_hw_params_set_channels_near(pcm, params, &channels)
        }
        var rate = UInt32(clamping: max(configuration.sampleRate, 1))
        try ALSACall.check(device: device, .hwParams, detail: "rate \(configuration.sampleRate) Hz") {
            snd_pcm_hw_params_set_rate_near(pcm, params, &rate, nil)
        }
        let bufferMicroseconds = configuration.bufferTime.components.seconds * 1_000_000
            + configuration.bufferTime.components.attoseconds / 1_000_000_000_000
        var bufferTime = UInt32(clamping: max(bufferMicroseconds, 1_000))
        try ALSACall.check(device: device, .hwParams, detail: "buffer time \(bufferTime) µs") {
            snd_pcm_hw_params_set_buffer_time_near(pcm, params, &bufferTime, nil)
        }
        var periodTime = bufferTime / UInt32(clamping: max(configuration.periodsPerBuffer, 1))
        try ALSACall.check(device: device, .hwParams, detail: "period time \(periodTime) µs") {
            snd_pcm_hw_params_set_period_time_near(pcm, params, &periodTime, nil)
        }
        try ALSACall.check(device: device, .hwParams, detail: "installing the parameters") {
            snd_pcm_hw_params(pcm, params)
        }

        var bufferFrames: snd_pcm_uframes_t = 0
        var periodFrames: snd_pcm_uframes_t = 0
        var direction: Int32 = 0
        try ALSACall.check(device: device, .hwParams) { snd_pcm_hw_params_get_buffer_size(params, &bufferFrames) }
        try ALSACall.check(device: device, .hwParams) {
            snd_pcm_hw_params_get_period_size(params, &periodFrames, &direction)
        }
        try ALSACall.check(device: device, .hwParams) { snd_pcm_hw_params_get_channels(params, &channels) }
        try ALSACall.check(device: device, .hwParams) { snd_pcm_hw_params_get_rate(params, &rate, &direction) }
        return PCMStreamFormat(sampleFormat: sampleFormat, sampleRate: Int(rate), channels: Int(channels),
                               bufferFrames: Int(bufferFrames), periodFrames: Int(periodFrames))
    }
}

/// `PCMOutput` is owned by one thread at a time; hand it over with `sending` (see `PCMPlaybackThread`).
@available(*, unavailable)
extension PCMOutput: Sendable {}

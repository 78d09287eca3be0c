public import SnoozeFuseSystem

/// What to play and how: the sound, its gain and the PCM configuration to ask for.
public struct AlarmPlaybackSettings: Sendable, Hashable {
    public var sound: AlarmSound
    public var gain: AlarmGain
    /// What to ask the device for; `nil` asks for the sound's own rate and channel count (48 kHz
    /// stereo for synthesized sounds), so nothing is resampled where the device can take it.
    public var configuration: PCMConfiguration?
    /// Play this long and end (the queued frames play out, after `gain.fadeOut`); `nil` loops until
    /// stopped.
    public var duration: Duration?
    /// What plays if the sound fails mid-stream.
    public var onSourceFailure: SourceFailureFallback
    /// What plays on the same device when `sound` cannot be read when the alarm starts (a built-in
    /// sound); the synthesized tone when that fails too.
    public var fallbackSound: AlarmSound
    /// The audio thread asks for SCHED_FIFO at this priority until its first write (`nil`: the
    /// ordinary policy throughout), so that the first frame goes out on time on a machine busy
    /// with other work. Alarms do; a sleep sound (`AudioSleepSound`) has no instant to keep and
    /// does not.
    public var realtimePriority: Int32? = AlarmPlaybackSettings.alarmRealtimePriority

    /// The alarm thread's SCHED_FIFO priority: above every ordinary thread, below the kernel's
    /// own real-time threads and the low-latency audio servers (JACK runs at 70 and more).
    public static let alarmRealtimePriority: Int32 = 10

    public init(sound: AlarmSound = .builtInTone, gain: AlarmGain = AlarmGain(percent: 80, fadeIn: .seconds(10)),
                configuration: PCMConfiguration? = nil, duration: Duration? = nil,
                onSourceFailure: SourceFailureFallback = .builtInTone, fallbackSound: AlarmSound = .builtInTone) {
        self.sound = sound
        self.fallbackSound = fallbackSound
        self.gain = gain
        self.configuration = configuration
        self.duration = duration
        self.onSourceFailure = onSourceFailure
    }
}

/// What a stream plays when its sound fails mid-stream (a decoding error, a plugin that stopped).
public enum SourceFailureFallback: Sendable, Hashable {
    /// The built-in tone: an alarm never goes silent.
    case builtInTone
    /// Silence: a sleep sound must not turn into a beep that wakes the sleeper.
    case silence
}

/// One alarm playing (or armed to play) on one ALSA device, on its own audio thread.
public final class AlarmPlayback: Sendable {
    /// The PCM name.
    public let device: String
    /// What the device negotiated.
    public let format: PCMStreamFormat
    /// The audio thread.
    public let thread: PCMPlaybackThread
    /// How far it has rendered (to resume elsewhere after a device loss).
    public let progress: AlarmPlaybackProgress
    /// Present when the first write waits for a due instant.
    public let gate: AlarmStartGate?

    init(device: String, format: PCMStreamFormat, thread: PCMPlaybackThread, progress: AlarmPlaybackProgress,
         gate: AlarmStartGate?) {
        self.device = device
        self.format = format
        self.thread = thread
        self.progress = progress
        self.gate = gate
    }

    /// Asks the audio thread to stop (cancelling a pending start) and returns at once.
    public func requestStop() {
        gate?.cancel()
        thread.requestStop()
    }

    /// Stops at once (cancelling a pending start) and waits until the device is closed (see
    /// `PCMPlaybackThread.stop()` about devices that stall).
    @discardableResult
    public func stop() async -> PCMPlaybackThread.Outcome {
        gate?.cancel()
        return await thread.stop()
    }

    /// Stops and waits at most `limit` on `clock` for the device to close; `nil` when it did not
    /// (a stalled device: its thread finishes by itself when the device answers).
    @discardableResult
    public func stop(waitingAtMost limit: Duration, on clock: BootClock) async -> PCMPlaybackThread.Outcome? {
        gate?.cancel()
        return await thread.stop(waitingAtMost: limit, on: clock)
    }

    /// Where the alarm would resume if this device were lost now: what it rendered, less the
    /// frames that may still sit in the device's buffer.
    public var resumePosition: Duration {
        max(progress.rendered - format.duration(ofFrames: format.bufferFrames), .zero)
    }
}

/// Starts alarms: opens the device, builds the render chain (`AlarmRenderer`) and starts the audio
/// thread.
public enum AlarmPlayer {
    /// Opens `device`, opens the sound, and starts the audio thread.
    ///
    /// - Parameters:
    ///   - due: when given, the first buffer is rendered at once and written at exactly this instant
    ///     (see `AlarmStartGate`); otherwise as soon as it is rendered.
    ///   - position: resume this far into the alarm (source position and fade).
    ///   - opening: opens the output for the configuration asked for; nil opens the ALSA PCM
    ///     `device`. The sound server's output (`PulseSinkOutput`) comes this way.
    ///   - onEvent: the audio thread's events (called on that thread: be quick, do not block).
    public static func start(
        device: String, settings: AlarmPlaybackSettings, due: BootInstant? = nil,
        from position: Duration = .zero,
        onEvent: @escaping @Sendable (PCMPlaybackThread.Event) -> Void = { _ in },
        opening: ((PCMConfiguration) throws(ALSAError) -> any PCMWritable)? = nil
    ) throws(AlarmPlayerError) -> AlarmPlayback {
        // Ask the device for the file's own rate and channel count: where it can take them (any
        // `plug`, `pulse` or `dmix` device can), nothing is resampled or remixed here, which is
        // most of the CPU an alarm costs. The render chain converts whatever the device grants.
        // A 16-bit PCM file asks for S16 first: then its samples reach the device without ever
        // becoming floats (`AlarmS16Renderer`).
        var configuration = settings.configuration ?? PCMConfiguration()
        if settings.configuration == nil, let native = settings.sound.nativeFormat {
            configuration.sampleRate = native.sampleRate
            configuration.channels = native.channels
            if native.isInt16PCM { configuration.formats = [.int16LE, .float32LE] }
        }
        let output: any PCMWritable
        do throws(ALSAError) {
            if let opening {
                output = try opening(configuration)
            } else {
                output = try PCMOutput(device: device, configuration: configuration)
            }
        } catch {
            throw .device(error)
        }
        let format = output.format
        let source: any AlarmSoundSource
        do {
            source = try settings.sound.makeSource(deviceRate: format.sampleRate)
        } catch {
            guard settings.onSourceFailure == .builtInTone else {
                output.close()
                throw .sound(error)
            }
            // The device works; the sound does not (deleted, replaced by garbage): the built-in
            // sound plays here rather than moving the alarm off a working device.
            let fallback = (try? settings.fallbackSound.makeSource(deviceRate: format.sampleRate))
                ?? AlarmToneSource(sampleRate: format.sampleRate)
            let instead = fallback is AlarmToneSource ? "the built-in tone" : "the built-in sound \(settings.fallbackSound)"
            onEvent(.soundSwitched("the alarm sound \(settings.sound) cannot be read (\(error.message)); \(instead) plays instead"))
            source = fallback
        }
        let progress = AlarmPlaybackProgress()
        let gate = due.map(AlarmStartGate.init(due:))
        let thread: PCMPlaybackThread
        // The S16 fast path plays 16-bit files to an S16 device; it knows no fade-out and falls
        // back to the tone, so streams that need either (a sleep sound) take the float chain.
        if format.sampleFormat == .int16LE, let file = source as? LoopingSoundFileSource, file.isInt16PCM,
           file.sampleRate == format.sampleRate, file.channels == format.channels,
           settings.gain.fadeOut == .zero, settings.onSourceFailure == .builtInTone {
            let renderer = try AlarmS16Renderer(file: file, format: format, gain: settings.gain,
                                                startingAt: position, gate: gate, progress: progress,
                                                duration: settings.duration) { onEvent(.soundSwitched($0)) }
            thread = PCMPlaybackThread(output: output, source: renderer, realtimePriority: settings.realtimePriority, onEvent: onEvent)
        } else {
            let renderer = try AlarmRenderer(source: source, format: format, gain: settings.gain,
                                             startingAt: position, gate: gate, progress: progress,
                                             duration: settings.duration, onSourceFailure: settings.onSourceFailure) {
                onEvent(.soundSwitched($0))
            }
            thread = PCMPlaybackThread(output: output, source: renderer, realtimePriority: settings.realtimePriority, onEvent: onEvent)
        }
        do {
            try thread.start()
        } catch {
            throw .device(error)
        }
        return AlarmPlayback(device: device, format: format, thread: thread, progress: progress, gate: gate)
    }
}

public import SnoozeFuseAudio
public import SnoozeFuseCore

/// A change of the output that sounds the alarm while it rings (the device was lost, or is back).
///
/// The driver shows each one as an `output` record: `{"event":"output","output":…,"message":…}`.
public struct AlarmOutputChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// The audio device failed mid-alarm; the alarm moved to the fallback.
        case lost
        /// A reconnect attempt failed; the fallback keeps sounding.
        case retryFailed = "retry_failed"
        /// The audio device is back; the alarm moved back to it.
        case restored
    }

    public var kind: Kind
    /// The output that sounds the alarm from now on, as in `AlarmStartReport.output`.
    public var output: String
    /// One line for people, naming the device and the reason.
    public var message: String

    public init(kind: Kind, output: String, message: String) {
        self.kind = kind
        self.output = output
        self.message = message
    }
}

/// The alarm on ALSA with a chain that never fails silently: the requested device, then `default`,
/// then a fallback output (the terminal bell).
///
/// - `arm` opens the first device that opens, renders the first buffer, and leaves the audio thread
///   waiting to write it at the due instant (`AlarmStartGate`); `start` then only waits for that
///   write and reports the lateness measured on the audio thread. Without `arm`, `start` does the same
///   at once.
/// - A device that fails to open, or fails before its first write, is skipped (each failure becomes
///   one of the report's `fallbacks`); when none is left the fallback output sounds.
/// - When the device is lost mid-alarm (`EIO`, `ENODEV`, `EBADFD`…) the fallback starts at once, and
///   the device is reopened after 2 s, 4 s, 8 s, then every 8 s; when it opens, the alarm resumes
///   where it was (file position and fade) and the fallback stops. Each change is published on
///   `outputChanges`.
public actor AudioAlarmOutput: AlarmOutput {
    /// The devices to try in order; `default` is appended when missing.
    public nonisolated let devices: [String]
    public nonisolated let settings: AlarmPlaybackSettings
    /// Waits between reconnect attempts; the last one repeats.
    public nonisolated let reconnectDelays: [Duration]
    /// Mid-alarm output changes, in order. Single consumer.
    public nonisolated let outputChanges: AsyncStream<AlarmOutputChange>

    private let changes: AsyncStream<AlarmOutputChange>.Continuation
    private let fallback: any AlarmOutput
    private let fallbackName: String

    private struct Active {
        var playback: AlarmPlayback
        var generation: Int
        var due: ContinuousClock.Instant
        var firstWrite: ContinuousClock.Instant?
    }

    private enum Mode {
        case idle
        /// Trying the chain from `index`; `due` is when the first frame should be written.
        case starting(index: Int, due: ContinuousClock.Instant)
        /// Playing on a device.
        case playing
        /// The fallback sounds; `device` is being reconnected.
        case onFallback(device: String)
    }

    private var mode = Mode.idle
    private var active: Active?
    private var generation = 0
    private var reason = AlarmReason.nap
    private var failures: [String] = []
    private var fallbackSounding = false
    private var reconnectTask: Task<Void, Never>?
    private var resumePosition = Duration.zero
    private var settledWaiters: [CheckedContinuation<Void, Never>] = []
    private var settled = false
    /// Whether `arm` or `start` has run the chain since the last `stop`.
    private var chainTried = false
    private var reconnectAttempt = 0
    /// How long `start` waits for an opened device's first write before the fallback sounds.
    public nonisolated let firstWriteTimeout: Duration
    private var watchdog: Task<Void, Never>?

    /// - Parameters:
    ///   - device: the requested PCM (`default` when nil).
    ///   - fallback: what sounds when no device does (the terminal bell).
    ///   - fallbackName: its name in reports (`AlarmStartReport.output` of the fallback is used when known).
    public init(device: String? = nil, settings: AlarmPlaybackSettings, fallback: any AlarmOutput,
                fallbackName: String = "terminal bell",
                reconnectDelays: [Duration] = [.seconds(2), .seconds(4), .seconds(8)],
                firstWriteTimeout: Duration = .seconds(1)) {
        self.firstWriteTimeout = firstWriteTimeout
        var devices = [device ?? "default"]
        if !devices.contains("default") { devices.append("default") }
        self.devices = devices
        self.settings = settings
        self.fallback = fallback
        self.fallbackName = fallbackName
        self.reconnectDelays = reconnectDelays.isEmpty ? [.seconds(8)] : reconnectDelays
        (outputChanges, changes) = AsyncStream.makeStream(of: AlarmOutputChange.self)
    }

    deinit {
        changes.finish()
    }

    // MARK: - AlarmOutput

    public func arm(reason: AlarmReason, after delay: Duration) async {
        guard !chainTried else { return }
        chainTried = true
        self.reason = reason
        failures = []
        settled = false
        await startChain(from: 0, due: ContinuousClock.now.advanced(by: max(delay, .zero)))
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        self.reason = reason
        if !chainTried {
            chainTried = true
            failures = []
            settled = false
            await startChain(from: 0, due: .now)
        }
        if !settled { startWatchdog() }
        while !settled {
            await withCheckedContinuation { settledWaiters.append($0) }
        }
        if let active, let firstWrite = active.firstWrite {
            return AlarmStartReport(output: Self.outputName(active.playback.device), fallbacks: failures,
                                    lateness: active.due.duration(to: firstWrite))
        }
        guard chainTried else {
            // Stopped while starting: stay silent, as asked.
            return AlarmStartReport(output: "none (stopped before it started)", fallbacks: failures)
        }
        let report = fallbackSounding ? AlarmStartReport(output: fallbackName) : await startFallback()
        return AlarmStartReport(output: report.output, fallbacks: failures + report.fallbacks, lateness: report.lateness)
    }

    public func stop() async {
        mode = .idle
        chainTried = false
        watchdog?.cancel()
        watchdog = nil
        reconnectTask?.cancel()
        reconnectTask = nil
        if let active {
            self.active = nil
            await active.playback.stop()
        }
        if fallbackSounding {
            fallbackSounding = false
            await fallback.stop()
        }
        settle()
    }

    /// Ends `outputChanges` (call when the output will not be used again).
    public func finish() {
        changes.finish()
    }

    // MARK: - Chain

    static func outputName(_ device: String) -> String { "ALSA \(device)" }

    /// Opens the devices from `index` on until one starts; the fallback settles it when none does.
    private func startChain(from index: Int, due: ContinuousClock.Instant) async {
        var index = index
        while index < devices.count {
            let device = devices[index]
            mode = .starting(index: index, due: due)
            if launch(device: device, due: due, position: .zero) { return }
            index += 1
        }
        // Nothing opened: the fallback sounds (at `start`, which the driver calls at the due instant).
        mode = .idle
        settle()
    }

    /// Starts playback on `device`; on failure records it in `failures` and returns false.
    private func launch(device: String, due: ContinuousClock.Instant?, position: Duration) -> Bool {
        generation += 1
        let generation = generation
        let (events, continuation) = AsyncStream.makeStream(of: PCMPlaybackThread.Event.self)
        do {
            let playback = try AlarmPlayer.start(device: device, settings: settings, due: due, from: position) { event in
                continuation.yield(event)
                if case .ended = event { continuation.finish() }
            }
            active = Active(playback: playback, generation: generation, due: due ?? .now, firstWrite: nil)
        } catch {
            continuation.finish()
            failures.append("\(Self.outputName(device)) failed: \(error)")
            return false
        }
        Task { [weak self] in
            for await event in events {
                await self?.handle(event, generation: generation)
            }
        }
        return true
    }

    private func handle(_ event: PCMPlaybackThread.Event, generation: Int) async {
        guard var active, active.generation == generation else { return }
        switch event {
        case .firstWrite(let at, _):
            active.firstWrite = at
            self.active = active
            if case .starting = mode { mode = .playing }
            settle()
            await restoredIfReconnecting()
        case .recovered:
            return
        case .ended(let outcome):
            guard case .failed(let error) = outcome else { return }
            self.active = nil
            if active.firstWrite != nil {
                resumePosition = max(active.playback.progress.rendered - active.playback.format.duration(
                    ofFrames: active.playback.format.bufferFrames), .zero)
            }
            switch mode {
            case .starting(let index, let due):
                // Failed before its first write: try the next device, as if it had not opened.
                failures.append("\(Self.outputName(active.playback.device)) failed: \(error)")
                await startChain(from: index + 1, due: due)
            case .playing:
                let device = active.playback.device
                mode = .onFallback(device: device)
                let report = await startFallback()
                changes.yield(AlarmOutputChange(
                    kind: .lost, output: report.output,
                    message: "\(Self.outputName(device)) was lost mid-alarm (\(error)); the alarm continues on the \(report.output) and \(device) is reopened in \(reconnectDelays[0].compactDescription)"))
                reconnectAttempt = 0
                scheduleReconnect(device: device)
            case .onFallback(let device):
                // A reconnected device failed again before or after its first write.
                if active.firstWrite == nil {
                    changes.yield(AlarmOutputChange(kind: .retryFailed, output: fallbackName,
                                                    message: "reopening \(device) failed: \(error)"))
                } else {
                    let report = await startFallback()
                    changes.yield(AlarmOutputChange(
                        kind: .lost, output: report.output,
                        message: "\(Self.outputName(device)) was lost again (\(error)); the alarm continues on the \(report.output)"))
                }
                scheduleReconnect(device: device)
            case .idle:
                return
            }
        }
    }

    private func startFallback() async -> AlarmStartReport {
        if fallbackSounding { return AlarmStartReport(output: fallbackName) }
        fallbackSounding = true
        return await fallback.start(reason: reason)
    }

    // MARK: - First-write watchdog

    /// A device that opened but does not write (a stalled server, a plugin stuck in a blocking
    /// write) must not keep the alarm silent: after `firstWriteTimeout` the fallback sounds, and the
    /// device counts as lost. If it does start later, its first write restores it as after a
    /// reconnect.
    private func startWatchdog() {
        watchdog?.cancel()
        let generation = generation
        let timeout = firstWriteTimeout
        watchdog = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            await self?.firstWriteOverdue(generation: generation)
        }
    }

    private func firstWriteOverdue(generation: Int) async {
        guard !settled, case .starting = mode, let active, active.generation == generation,
              active.firstWrite == nil else { return }
        let device = active.playback.device
        failures.append("\(Self.outputName(device)) opened but wrote nothing within \(firstWriteTimeout.compactDescription) of the alarm; the \(fallbackName) sounds until it does")
        mode = .onFallback(device: device)
        _ = await startFallback()
        settle()
    }

    // MARK: - Reconnecting

    /// Schedules the next attempt: 2 s, 4 s, 8 s, then every 8 s (with the default delays).
    private func scheduleReconnect(device: String) {
        reconnectTask?.cancel()
        let delay = reconnectDelays[min(reconnectAttempt, reconnectDelays.count - 1)]
        reconnectAttempt += 1
        reconnectTask = Task { [weak self] in
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            await self?.reconnect(device: device)
        }
    }

    /// One reconnect attempt. When the device opens, its first write restores the alarm
    /// (`restoredIfReconnecting`); when it fails, the next attempt is scheduled.
    private func reconnect(device: String) {
        guard case .onFallback(let lost) = mode, lost == device, active == nil else { return }
        let failuresBefore = failures.count
        if !launch(device: device, due: nil, position: resumePosition) {
            let reason = failures.count > failuresBefore ? failures.removeLast() : "\(device) did not open"
            changes.yield(AlarmOutputChange(kind: .retryFailed, output: fallbackName,
                                            message: "reopening failed: \(reason)"))
            scheduleReconnect(device: device)
        }
    }

    /// Called from `handle` when a reconnected device wrote its first buffer.
    private func restoredIfReconnecting() async {
        guard case .onFallback(let device) = mode, let active, active.firstWrite != nil else { return }
        mode = .playing
        reconnectTask = nil
        reconnectAttempt = 0
        if fallbackSounding {
            fallbackSounding = false
            await fallback.stop()
        }
        changes.yield(AlarmOutputChange(
            kind: .restored, output: Self.outputName(device),
            message: "\(Self.outputName(device)) is back; the alarm resumes there at \(resumePosition.compactDescription)"))
    }

    private func settle() {
        settled = true
        let waiters = settledWaiters
        settledWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

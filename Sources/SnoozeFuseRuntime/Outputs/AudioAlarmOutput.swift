public import SnoozeFuseAudio
public import SnoozeFuseCore
public import SnoozeFuseSystem

/// The alarm on ALSA with a chain that never fails silently: the requested device, then `default`,
/// then a fallback output (the terminal bell).
///
/// It drives an ``AlarmChain`` (where every decision lives: the order of the chain, the watchdog,
/// stalls, the reconnect backoff, moving back to a device that returns), and performs its effects:
/// devices are opened on threads of their own (``BoundedCall``), played on their audio threads,
/// asked to stop without waiting when they stall, and the fallback is started and stopped. Their
/// events (an open returned, the first write, a failure) and the passing of the chain's deadlines
/// (on the nap's event loop) go back into the chain. Each change of output is published on
/// `outputChanges`.
///
/// A stalled device's thread can stay blocked inside alsa-lib until its server answers (even
/// `drop` and `close` wait for it): it is asked to stop and left behind, never waited for, so
/// neither `stop` nor the process's exit hangs on it.
public actor AudioAlarmOutput: AlarmOutput {
    /// The devices to try in order; `default` is appended when missing.
    public nonisolated let devices: [String]
    public nonisolated let settings: AlarmPlaybackSettings
    public nonisolated let limits: AlarmChainLimits
    /// How long `stop` waits for a device to close before leaving its thread to finish by itself.
    public nonisolated let closeTimeout: Duration
    /// Mid-alarm output changes, in order. Single consumer.
    public nonisolated let outputChanges: AsyncStream<AlarmOutputChange>

    private let changes: AsyncStream<AlarmOutputChange>.Continuation
    /// The sound server's output: where it plays and what it tells (nil: ALSA only).
    private let server: SinkPlan?
    /// The fallback sounds beside the sound server, which no monitor proved.
    private var fallbackBeside = false
    /// The card itself (ALSA past the server) plays beside the sound server, which no monitor
    /// proved: wanted since the step came, its playback once it opened. A new generation for
    /// each start, so an open that returns after it was called off is closed at once.
    private var cardBeside: (generation: Int, playback: AlarmPlayback?)?
    private var cardGenerations = 0
    private let fallback: any AlarmOutput
    private let loop: EventLoop
    private var chain: AlarmChain<BootInstant>
    /// The devices that opened, by attempt.
    private var playbacks: [Int: AlarmPlayback] = [:]
    /// What each attempt's audio thread runs at (its `.priority` event).
    private var priorities: [Int: ThreadPriority] = [:]
    private var reason = AlarmReason.nap
    private var timer: Task<Void, Never>?
    private var timerDeadline: BootInstant?
    /// The report of a `start`, once the chain gave it; `start` waits for it.
    private var report: AlarmStartReport?
    private var reportWaiters: [CheckedContinuation<AlarmStartReport, Never>] = []
    /// What the fallback said when it started last.
    private var fallbackReport: AlarmStartReport?

    /// - Parameters:
    ///   - device: the requested PCM (`default` when nil).
    ///   - fallback: what sounds when no device does (the terminal bell).
    ///   - fallbackName: its name in reports and changes.
    ///   - loop: where its tasks run and what its deadlines are timed on (pass the nap's).
    public init(device: String? = nil, settings: AlarmPlaybackSettings, fallback: any AlarmOutput,
                fallbackName: String = "terminal bell", loop: EventLoop,
                reconnectDelays: [Duration] = [.seconds(2), .seconds(4), .seconds(8)],
                openTimeout: Duration = .seconds(1), silenceTimeout: Duration = .seconds(1),
                stallTimeout: Duration = .seconds(3),
                closeTimeout: Duration = .milliseconds(500), server: SinkPlan? = nil) {
        let limits = AlarmChainLimits(openTimeout: openTimeout, silenceTimeout: silenceTimeout,
                                      stallTimeout: stallTimeout, reconnectDelays: reconnectDelays)
        let chain = AlarmChain<BootInstant>(device: device, soundServer: server != nil, limits: limits, fallbackName: fallbackName)
        self.server = server
        self.chain = chain
        devices = chain.devices
        self.limits = limits
        self.settings = settings
        self.fallback = fallback
        self.loop = loop
        self.closeTimeout = closeTimeout
        (outputChanges, changes) = AsyncStream.makeStream(of: AlarmOutputChange.self)
    }

    deinit {
        changes.finish()
    }

    // MARK: - AlarmOutput

    /// Starts the chain (opening happens on threads of their own) and returns at once.
    public func arm(reason: AlarmReason, after delay: Duration) async {
        self.reason = reason
        await apply(.arm(reason: reason, due: BootInstant.now.advanced(by: max(delay, .zero))))
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        self.reason = reason
        report = nil
        await apply(.start(reason: reason))
        if let report { return report }
        return await withCheckedContinuation { reportWaiters.append($0) }
    }

    /// Stops sounding. Waits for the device to close at most `closeTimeout`: a stalled one is left
    /// to close by itself when its server answers.
    public func stop() async {
        await apply(.stop)
    }

    /// No sink's monitor proved the alarm (`true`): the fallback sounds beside the sound server
    /// until proof is back (`false`). Only while the sound server plays: on the fallback already,
    /// nothing changes.
    public func soundFallbackBeside(_ on: Bool) async {
        guard chain.current?.device == AlarmChain<BootInstant>.soundServer, case .playing = chain.mode else { return }
        guard on != fallbackBeside else { return }
        fallbackBeside = on
        if on { _ = await fallback.start(reason: reason) } else { await fallback.stop() }
    }

    /// No sink's monitor proved the alarm, even with every sink (`true`): the card itself plays it
    /// beside the sound server, through ALSA past the server (``AlarmChain/hardware``), from where
    /// the alarm is, until proof is back (`false`). Only while the sound server plays. Its open is
    /// on a thread of its own: one that hangs holds up nothing (the fallback is the next step).
    /// Where the server holds the card, the open fails and says so.
    public func soundCardBeside(_ on: Bool) async {
        guard on else {
            await stopCard(because: "a sink's monitor carries the alarm again")
            return
        }
        guard cardBeside == nil, let current = chain.current, current.device == AlarmChain<BootInstant>.soundServer,
              case .playing = chain.mode else { return }
        cardGenerations += 1
        let generation = cardGenerations
        cardBeside = (generation, nil)
        let (events, feed) = AsyncStream.makeStream(of: PCMPlaybackThread.Event.self)
        let opening = startPlayback(device: AlarmChain<BootInstant>.hardware, settings: settings, due: nil,
                                    position: playbacks[current.id]?.resumePosition ?? .zero, events: feed)
        Task(executorPreference: loop) {
            for await event in events {
                guard case .ended(let outcome) = event, case .failed(let error) = outcome else { continue }
                await self.cardFailed(generation: generation, because: error.description)
            }
        }
        Task(executorPreference: loop) {
            await self.cardOpened(await opening.value(), generation: generation)
        }
    }

    private var cardName: String { AlarmChain<BootInstant>.outputName(AlarmChain<BootInstant>.hardware) }

    /// Reports what became of the card playing beside the sound server.
    private func sayBeside(_ message: String) {
        changes.yield(AlarmOutputChange(kind: .beside,
                                        output: AlarmChain<BootInstant>.outputName(AlarmChain<BootInstant>.soundServer),
                                        message: message))
    }

    private func cardOpened(_ result: Result<AlarmPlayback, AlarmPlayerError>, generation: Int) async {
        switch result {
        case .success(let playback):
            guard cardBeside?.generation == generation else {
                playback.requestStop()
                return
            }
            cardBeside = (generation, playback)
            sayBeside("\(cardName) (the sound card itself) plays the alarm beside the sound server")
        case .failure(let error):
            await cardFailed(generation: generation, because: error.description)
        }
    }

    private func cardFailed(generation: Int, because reason: String) async {
        guard cardBeside?.generation == generation else { return }
        cardBeside = nil
        sayBeside("\(cardName) beside the sound server failed: \(reason)")
    }

    /// Stops the card beside the server, waiting for it at most `closeTimeout`.
    private func stopCard(because reason: String) async {
        guard let card = cardBeside else { return }
        cardBeside = nil
        guard let playback = card.playback else { return }
        _ = await playback.stop(waitingAtMost: closeTimeout, on: loop.clock)
        sayBeside("\(cardName) beside the sound server stopped: \(reason)")
    }

    /// Ends `outputChanges` (call when the output will not be used again).
    public func finish() {
        changes.finish()
    }

    // MARK: - Driving the chain

    private func apply(_ event: AlarmChainEvent<BootInstant>) async {
        if fallbackBeside, case .stop = event {
            fallbackBeside = false
            await fallback.stop()
        }
        if case .stop = event { await stopCard(because: "the alarm stopped") }
        let effects = chain.handle(event, at: BootInstant.now)
        for effect in effects { await perform(effect) }
        scheduleWakeup()
    }

    private func perform(_ effect: AlarmChainEffect<BootInstant>) async {
        switch effect {
        case .open(let attempt, let device, let due, let position):
            open(attempt: attempt, device: device, due: due, position: position)
        case .abandon(let attempt):
            playbacks.removeValue(forKey: attempt)?.requestStop()
        case .close(let attempt):
            if let playback = playbacks.removeValue(forKey: attempt) {
                _ = await playback.stop(waitingAtMost: closeTimeout, on: loop.clock)
            }
        case .startFallback:
            fallbackReport = await fallback.start(reason: reason)
        case .stopFallback:
            await fallback.stop()
        case .change(let change):
            changes.yield(change)
        case .report(let chainReport):
            var report = AlarmStartReport(output: chainReport.output, fallbacks: chainReport.fallbacks,
                                          lateness: chainReport.lateness)
            if chainReport.onFallback, let fallbackReport {
                report.fallbacks += fallbackReport.fallbacks
                report.lateness = fallbackReport.lateness
                report.audioThread = fallbackReport.audioThread
            } else {
                report.audioThread = chain.current.flatMap { priorities[$0.id] }?.description
            }
            self.report = report
            let waiters = reportWaiters
            reportWaiters = []
            for waiter in waiters { waiter.resume(returning: report) }
        }
    }

    /// Opens `device` and starts playing on it from a thread of its own (`snd_pcm_open` can hang for
    /// ever); its events come back as chain events.
    private func open(attempt: Int, device: String, due: BootInstant?, position: Duration) {
        let (events, feed) = AsyncStream.makeStream(of: PCMPlaybackThread.Event.self)
        var server = device == AlarmChain<BootInstant>.soundServer ? server : nil
        // The floor of the proof follows the fade-in from where this stream takes the alarm up.
        server?.level?.startingAt = position
        let opening = startPlayback(device: device, settings: settings, due: due, position: position, events: feed, server: server)
        Task(executorPreference: loop) {
            for await event in events {
                await self.handle(event, attempt: attempt)
            }
        }
        Task(executorPreference: loop) {
            await self.opened(await opening.value(), attempt: attempt)
        }
    }

    private func opened(_ result: Result<AlarmPlayback, AlarmPlayerError>, attempt: Int) async {
        switch result {
        case .success(let playback):
            playbacks[attempt] = playback
            await apply(.opened(attempt: attempt, lastWrite: playback.thread.lastWrite))
        case .failure(let error):
            await apply(.openFailed(attempt: attempt, reason: error.description))
        }
    }

    private func handle(_ event: PCMPlaybackThread.Event, attempt: Int) async {
        switch event {
        case .firstWrite(let at, _):
            await apply(.firstWrite(attempt: attempt, at: at))
        case .priority(let priority):
            priorities[attempt] = priority
        case .recovered:
            return
        case .soundSwitched(let why):
            guard chain.current?.id == attempt else { return }
            let output = AlarmChain<BootInstant>.outputName(chain.current?.device ?? "")
            changes.yield(AlarmOutputChange(kind: .soundReplaced, output: output, message: "on \(output): \(why)"))
        case .ended(let outcome):
            if case .failed = outcome, chain.current?.id == attempt {
                // The chain moves on, perhaps to the card: the card beside the server makes way.
                await stopCard(because: "the sound server it played beside was lost")
            }
            let playback = playbacks.removeValue(forKey: attempt)
            priorities.removeValue(forKey: attempt)
            let failure: String?
            var deviceLost = false
            if case .failed(let error) = outcome {
                failure = error.description
                deviceLost = error.isDeviceLost
            } else {
                failure = nil
            }
            await apply(.ended(attempt: attempt, failure: failure, deviceLost: deviceLost,
                               resumePosition: playback?.resumePosition))
        }
    }

    /// Sleeps (on the loop's clock) until the chain's next deadline, replacing an earlier wake-up.
    private func scheduleWakeup() {
        let next = chain.nextDeadline
        guard next != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = next
        guard let next else {
            timer = nil
            return
        }
        let clock = loop.clock
        timer = Task(executorPreference: loop) { [weak self] in
            guard (try? await clock.sleep(until: next)) != nil else { return }
            await self?.timeElapsed()
        }
    }

    private func timeElapsed() async {
        timerDeadline = nil
        var observation = AlarmChainObservation<BootInstant>()
        if let attempt = chain.current, let playback = playbacks[attempt.id] {
            observation.lastWrite = playback.thread.lastWrite
            observation.resumePosition = playback.resumePosition
        }
        await apply(.timeElapsed(observation))
    }
}

/// Opens `device` and starts playback on it (an alarm, or a sleep sound) from a thread of its own:
/// `snd_pcm_open` can hang for ever, and it must hold up neither the nap's loop nor the chain.
func startPlayback(
    device: String, settings: AlarmPlaybackSettings, due: BootInstant?, position: Duration,
    events: AsyncStream<PCMPlaybackThread.Event>.Continuation, server: SinkPlan? = nil
) -> BoundedCall<Result<AlarmPlayback, AlarmPlayerError>> {
    BoundedCall.start(named: "snoozefuse-open") {
        do throws(AlarmPlayerError) {
            var opening: ((PCMConfiguration) throws(ALSAError) -> any PCMWritable)?
            if let server { opening = soundServerOpener(server) }
            let playback = try AlarmPlayer.start(device: device, settings: settings, due: due, from: position, onEvent: { event in
                events.yield(event)
                if case .ended = event { events.finish() }
            }, opening: opening)
            return .success(playback)
        } catch {
            events.finish()
            return .failure(error)
        }
    }
}

/// Opens the sound server's output for a configuration (the audio thread's device).
private func soundServerOpener(_ plan: SinkPlan) -> (PCMConfiguration) throws(ALSAError) -> any PCMWritable {
    { (configuration: PCMConfiguration) throws(ALSAError) -> any PCMWritable in
        try PulseSinkOutput(plan: plan, configuration: configuration)
    }
}

import Foundation
public import SnoozeFuseAudio
public import SnoozeFuseCore

/// A change of the output that sounds the alarm while it rings (the device was lost, or is back).
///
/// The driver shows each one as an `output` record: `{"event":"output","output":…,"message":…}`.
public struct AlarmOutputChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// The audio device failed or stalled mid-alarm; the alarm moved to the fallback.
        case lost
        /// An attempt to move off the fallback failed (a reconnect, or a device of the chain that
        /// was still opening when the fallback took over); the fallback keeps sounding.
        case retryFailed = "retry_failed"
        /// The audio device is back (or started late); the alarm moved to it.
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

/// An audio device that did not answer in time. alsa-lib has no time limit of its own here (the
/// `pulse` plugin waits for a server that does not answer for ever, in its open as in a blocking
/// write), so the alarm output measures it.
public struct AlarmDeviceUnresponsive: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Stage: String, Sendable, Hashable {
        /// The open (`snd_pcm_open` and the setup after it) did not return.
        case open
        /// The device opened but accepted no frames once the alarm was due.
        case firstWrite = "first write"
        /// The device accepted frames, then stopped accepting them.
        case write
    }

    /// The PCM name.
    public var device: String
    public var stage: Stage
    /// How long it was given.
    public var limit: Duration

    public init(device: String, stage: Stage, limit: Duration) {
        self.device = device
        self.stage = stage
        self.limit = limit
    }

    public var description: String {
        let what = switch stage {
        case .open: "ALSA open on PCM '\(device)' did not return within \(limit.compactDescription)"
        case .firstWrite: "ALSA PCM '\(device)' opened but accepted no frames within \(limit.compactDescription) of when it was due to start"
        case .write: "ALSA PCM '\(device)' stalled: it accepted no frames for \(limit.compactDescription)"
        }
        return what + ". Hint: the device or its sound server does not answer (stopped, hung or overloaded); "
            + "check it (`pactl info` for PulseAudio) or choose another --device."
    }
}

/// The alarm on ALSA with a chain that never fails silently: the requested device, then `default`,
/// then a fallback output (the terminal bell).
///
/// - Devices are opened on a thread of their own, never on the caller's: `arm` returns at once. An
///   open that does not return within `openTimeout` (the `pulse` plugin waiting for a stopped
///   server) counts as failed and the chain moves on; it is left to finish in the background, and
///   it is used if it opens while that device is being reconnected.
/// - `arm` starts the chain so that the first device to open renders its first buffer and writes
///   it at the due instant by itself (`AlarmStartGate`); `start` waits for that write and reports
///   the lateness measured on the audio thread. Without `arm`, `start` runs the chain at once.
/// - A device that fails to open, or fails before its first write, is skipped (each failure becomes
///   one of the report's `fallbacks`); when none is left the fallback output sounds.
/// - A watchdog makes sure something sounds: when nothing does `silenceTimeout` after the alarm was
///   due (a device that opened but writes nothing, or one still opening), the fallback sounds at
///   once; and when the playing device accepts no frames for `stallTimeout` (a stalled server, a
///   stuck driver) it counts as lost. A device that is lost mid-alarm (`EIO`, `ENODEV`, `EBADFD`…,
///   or stalled) hands over to the fallback at once and is reopened after 2 s, 4 s, 8 s, then every
///   8 s; when it writes again, the alarm resumes where it was (file position and fade) and the
///   fallback stops. Each change is published on `outputChanges`.
/// - A stalled device's thread can stay blocked inside alsa-lib until its server answers (even
///   `drop` and `close` wait for it): it is asked to stop and left behind, never waited for, so
///   neither `stop` nor the process's exit hangs on it.
public actor AudioAlarmOutput: AlarmOutput {
    /// The devices to try in order; `default` is appended when missing.
    public nonisolated let devices: [String]
    public nonisolated let settings: AlarmPlaybackSettings
    /// Waits between reconnect attempts; the last one repeats.
    public nonisolated let reconnectDelays: [Duration]
    /// How long a device may take to open before the chain moves on.
    public nonisolated let openTimeout: Duration
    /// How long the alarm may stay silent after it was due (nothing written yet) before the fallback
    /// sounds.
    public nonisolated let silenceTimeout: Duration
    /// How long a playing device may accept no frames before it counts as lost. Longer than
    /// `silenceTimeout`: a healthy PulseAudio null sink holds a new stream's writes for up to 1.7 s
    /// (measured; it renders in blocks of up to 2 s) while the first buffers play.
    public nonisolated let stallTimeout: Duration
    /// How long `stop` waits for a device to close before leaving its thread to finish by itself.
    public nonisolated let closeTimeout: Duration
    /// Mid-alarm output changes, in order. Single consumer.
    public nonisolated let outputChanges: AsyncStream<AlarmOutputChange>

    private let changes: AsyncStream<AlarmOutputChange>.Continuation
    private let fallback: any AlarmOutput
    private let fallbackName: String

    /// One try at sounding the alarm on a device: opening (on a thread of its own), then playing
    /// (on its audio thread).
    private struct Attempt {
        var generation: Int
        var device: String
        /// When its first frame is due (the lateness is measured from here).
        var due: ContinuousClock.Instant
        /// Present once it opened.
        var playback: AlarmPlayback?
        /// Silence is counted from here: the due instant, or when it opened if that was later.
        var silentSince: ContinuousClock.Instant
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
        /// The sound played out (a set duration).
        case finished
    }

    private var mode = Mode.idle
    private var current: Attempt?
    private var generation = 0
    private var reason = AlarmReason.nap
    /// When the alarm is due: nothing is reopened before it, and silence is counted from it.
    private var alarmDue = ContinuousClock.now
    private var failures: [String] = []
    /// Whether `start` took `failures` into its report; later failures become `outputChanges`.
    private var reported = false
    /// Devices of the chain that hung or stalled (worth reopening), in chain order.
    private var transient: [String] = []
    /// Opens that did not return within `openTimeout` and still run, by device: the device is not
    /// opened again while one hangs.
    private var hungOpens: [String: (generation: Int, since: ContinuousClock.Instant)] = [:]
    private var fallbackSounding = false
    private var reconnectTask: Task<Void, Never>?
    private var reconnectAttempt = 0
    private var resumePosition = Duration.zero
    private var settledWaiters: [CheckedContinuation<Void, Never>] = []
    private var settled = false
    /// Whether `arm` or `start` has run the chain since the last `stop`.
    private var chainTried = false
    private var watchdog: Task<Void, Never>?
    private let scheduling: AlarmScheduling

    /// - Parameters:
    ///   - device: the requested PCM (`default` when nil).
    ///   - fallback: what sounds when no device does (the terminal bell).
    ///   - fallbackName: its name in reports (`AlarmStartReport.output` of the fallback is used when known).
    ///   - scheduling: where its tasks run and what the watchdog, the reconnects and the time
    ///     limits sleep on (see ``AlarmScheduling``; pass the nap's).
    public init(device: String? = nil, settings: AlarmPlaybackSettings, fallback: any AlarmOutput,
                fallbackName: String = "terminal bell", scheduling: AlarmScheduling = AlarmScheduling(),
                reconnectDelays: [Duration] = [.seconds(2), .seconds(4), .seconds(8)],
                openTimeout: Duration = .seconds(1), silenceTimeout: Duration = .seconds(1),
                stallTimeout: Duration = .seconds(3),
                closeTimeout: Duration = .milliseconds(500)) {
        var devices = [device ?? "default"]
        if !devices.contains("default") { devices.append("default") }
        self.devices = devices
        self.settings = settings
        self.fallback = fallback
        self.fallbackName = fallbackName
        self.scheduling = scheduling
        self.reconnectDelays = reconnectDelays.isEmpty ? [.seconds(8)] : reconnectDelays
        self.openTimeout = openTimeout
        self.silenceTimeout = silenceTimeout
        self.stallTimeout = stallTimeout
        self.closeTimeout = closeTimeout
        (outputChanges, changes) = AsyncStream.makeStream(of: AlarmOutputChange.self)
    }

    deinit {
        changes.finish()
    }

    // MARK: - AlarmOutput

    /// Starts the chain (opening happens on threads of its own) and returns at once.
    public func arm(reason: AlarmReason, after delay: Duration) async {
        guard !chainTried else { return }
        self.reason = reason
        beginAlarm(due: ContinuousClock.now.advanced(by: max(delay, .zero)))
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        self.reason = reason
        if !chainTried { beginAlarm(due: .now) }
        while !settled {
            await withCheckedContinuation { settledWaiters.append($0) }
        }
        let failed = failures
        reported = true
        if let current, let firstWrite = current.firstWrite {
            return AlarmStartReport(output: Self.outputName(current.device), fallbacks: failed,
                                    lateness: current.due.duration(to: firstWrite))
        }
        guard chainTried else {
            // Stopped while starting: stay silent, as asked.
            return AlarmStartReport(output: "none (stopped before it started)", fallbacks: failed)
        }
        let report = fallbackSounding ? AlarmStartReport(output: fallbackName) : await startFallback()
        return AlarmStartReport(output: report.output, fallbacks: failed + report.fallbacks, lateness: report.lateness)
    }

    /// Stops sounding. Waits for the device to close at most `closeTimeout`: a stalled one is left
    /// to close by itself when its server answers.
    public func stop() async {
        mode = .idle
        chainTried = false
        watchdog?.cancel()
        watchdog = nil
        reconnectTask?.cancel()
        reconnectTask = nil
        if let attempt = current {
            current = nil
            // One still opening is stopped by `opened` when it opens.
            if let playback = attempt.playback {
                _ = await value(of: scheduling.task { await playback.stop() }, waitingAtMost: closeTimeout, scheduling: scheduling)
            }
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

    private func beginAlarm(due: ContinuousClock.Instant) {
        chainTried = true
        failures = []
        transient = []
        reported = false
        settled = false
        alarmDue = due
        resumePosition = .zero
        reconnectAttempt = 0
        startWatchdog(firstLook: due.advanced(by: silenceTimeout))
        startChain(from: 0, due: due)
    }

    /// Starts opening the first device from `index` on; the fallback settles it when none is left.
    private func startChain(from index: Int, due: ContinuousClock.Instant) {
        for index in index ..< devices.count {
            let device = devices[index]
            if let hung = hungOpens[device] {
                noteFailure("\(Self.outputName(device)) skipped: its open from \(hung.since.duration(to: .now).compactDescription) ago has not returned (the device or its sound server does not answer)")
                markTransient(device)
                continue
            }
            mode = .starting(index: index, due: due)
            begin(device: device, due: due, position: .zero)
            return
        }
        // Nothing left: the fallback sounds (at `start`, which the driver calls at the due instant).
        current = nil
        if let device = transient.first {
            mode = .onFallback(device: device)
            reconnectAttempt = 0
            scheduleReconnect(device: device)
        } else {
            mode = .idle
        }
        settle()
    }

    /// Starts opening `device` on a thread of its own; `opened` (or `openTimedOut`) carries on.
    private func begin(device: String, due: ContinuousClock.Instant?, position: Duration) {
        generation += 1
        let generation = generation
        let now = ContinuousClock.now
        current = Attempt(generation: generation, device: device, due: due ?? now, playback: nil,
                          silentSince: max(due ?? now, now), firstWrite: nil)
        let (events, continuation) = AsyncStream.makeStream(of: PCMPlaybackThread.Event.self)
        let opening = startPlaybackOnItsOwnThread(device: device, settings: settings, due: due, position: position,
                                                  events: continuation, scheduling: scheduling)
        scheduling.task {
            for await event in events {
                await self.handle(event, generation: generation)
            }
        }
        scheduling.task {
            if let result = await value(of: opening, waitingAtMost: self.openTimeout, scheduling: self.scheduling) {
                await self.opened(result, generation: generation, device: device)
            } else {
                await self.openTimedOut(generation: generation, device: device)
                await self.opened(await opening.value, generation: generation, device: device)
            }
        }
    }

    /// An open returned (in time, or late after `openTimedOut`).
    private func opened(_ result: Result<AlarmPlayback, AlarmPlayerError>, generation: Int, device: String) async {
        if hungOpens[device]?.generation == generation { hungOpens[device] = nil }
        guard var attempt = current, attempt.generation == generation else {
            guard case .success(let playback) = result else { return }
            if case .onFallback(let lost) = mode, lost == device, current == nil {
                // A reopen that hung has opened after all: use it; its first write restores the alarm.
                reconnectTask?.cancel()
                reconnectTask = nil
                current = Attempt(generation: generation, device: device, due: .now, playback: playback,
                                  silentSince: .now, firstWrite: nil)
                if let at = playback.thread.lastWrite { await firstWrite(at: at, generation: generation) }
            } else {
                // Stopped, or the alarm went on elsewhere: nobody wants it.
                playback.requestStop()
            }
            return
        }
        switch result {
        case .success(let playback):
            attempt.playback = playback
            attempt.silentSince = max(attempt.silentSince, .now)
            current = attempt
        case .failure(let error):
            current = nil
            await attemptFailed(attempt, because: error.description, transient: false)
        }
    }

    private func openTimedOut(generation: Int, device: String) async {
        hungOpens[device] = (generation, ContinuousClock.now.advanced(by: .zero - openTimeout))
        guard let attempt = current, attempt.generation == generation, attempt.playback == nil,
              attempt.firstWrite == nil else { return }
        current = nil
        let error = AlarmDeviceUnresponsive(device: device, stage: .open, limit: openTimeout)
        await attemptFailed(attempt, because: error.description, transient: true)
    }

    private func handle(_ event: PCMPlaybackThread.Event, generation: Int) async {
        guard let attempt = current, attempt.generation == generation else { return }
        switch event {
        case .firstWrite(let at, _):
            await firstWrite(at: at, generation: generation)
        case .recovered:
            return
        case .ended(.failed(let error)):
            current = nil
            await attemptFailed(attempt, because: error.description, transient: error.isDeviceLost)
        case .ended:
            // Played out (a set duration) or stopped.
            current = nil
            if case .playing = mode { mode = .finished }
        }
    }

    private func firstWrite(at instant: ContinuousClock.Instant, generation: Int) async {
        guard var attempt = current, attempt.generation == generation, attempt.firstWrite == nil else { return }
        attempt.firstWrite = instant
        current = attempt
        let wasReconnecting: Bool
        switch mode {
        case .starting:
            wasReconnecting = false
        case .onFallback:
            wasReconnecting = true
        case .idle, .playing, .finished:
            return
        }
        mode = .playing
        reconnectTask?.cancel()
        reconnectTask = nil
        reconnectAttempt = 0
        settle()
        guard fallbackSounding else { return }
        fallbackSounding = false
        await fallback.stop()
        let name = Self.outputName(attempt.device)
        changes.yield(AlarmOutputChange(
            kind: .restored, output: name,
            message: wasReconnecting
                ? "\(name) is back; the alarm resumes there at \(resumePosition.compactDescription)"
                : "\(name) started late; the alarm moved there from the \(fallbackName)"))
    }

    /// `attempt` failed to open, failed, or stalled: the chain goes on, or the fallback sounds.
    private func attemptFailed(_ attempt: Attempt, because reason: String, transient isTransient: Bool) async {
        let name = Self.outputName(attempt.device)
        if let playback = attempt.playback, attempt.firstWrite != nil {
            resumePosition = max(playback.progress.rendered - playback.format.duration(
                ofFrames: playback.format.bufferFrames), .zero)
        }
        switch mode {
        case .idle, .finished:
            return
        case .starting(let index, let due):
            // Failed before its first write: try the next device, as if it had not opened.
            noteFailure("\(name) failed: \(reason)")
            if isTransient { markTransient(attempt.device) }
            startChain(from: index + 1, due: due)
        case .playing:
            mode = .onFallback(device: attempt.device)
            let report = await startFallback()
            changes.yield(AlarmOutputChange(
                kind: .lost, output: report.output,
                message: "\(name) was lost mid-alarm (\(reason)); the alarm continues on the \(report.output) and \(attempt.device) is reopened in \(reconnectDelays[0].compactDescription)"))
            reconnectAttempt = 0
            scheduleReconnect(device: attempt.device)
        case .onFallback(let device):
            // A reconnected device failed again before or after its first write.
            if attempt.firstWrite == nil {
                changes.yield(AlarmOutputChange(kind: .retryFailed, output: fallbackName,
                                                message: "reopening \(device) failed: \(reason)"))
            } else {
                let report = await startFallback()
                changes.yield(AlarmOutputChange(
                    kind: .lost, output: report.output,
                    message: "\(name) was lost again (\(reason)); the alarm continues on the \(report.output)"))
            }
            scheduleReconnect(device: device)
        }
    }

    /// A failure for the report, or, once `start` has reported, for `outputChanges`.
    private func noteFailure(_ message: String) {
        if reported {
            changes.yield(AlarmOutputChange(kind: .retryFailed, output: fallbackName, message: message))
        } else {
            failures.append(message)
        }
    }

    private func markTransient(_ device: String) {
        if !transient.contains(device) { transient.append(device) }
    }

    private func startFallback() async -> AlarmStartReport {
        if fallbackSounding { return AlarmStartReport(output: fallbackName) }
        fallbackSounding = true
        return await fallback.start(reason: reason)
    }

    // MARK: - Watchdog

    /// Looks first at `firstLook` (the alarm's due instant plus `silenceTimeout`), then whenever the
    /// device would have been silent too long, and at least once per `silenceTimeout`.
    private func startWatchdog(firstLook: ContinuousClock.Instant) {
        watchdog?.cancel()
        let scheduling = scheduling
        watchdog = scheduling.task { [weak self] in
            var wake = firstLook
            while true {
                guard (try? await scheduling.clock.sleep(for: ContinuousClock.now.duration(to: wake))) != nil else { return }
                // Woken well after its time: the system was suspended (the clock counts through
                // suspend); the device gets a fresh period to resume before it counts as stalled.
                let overslept = wake.duration(to: .now) > .milliseconds(500)
                guard let self, let next = await self.watch(overslept: overslept) else { return }
                wake = next
            }
        }
    }

    /// Hands over to the fallback when nothing sounds, or the device stalled. Returns when to look
    /// again, or `nil` to stop watching.
    private func watch(overslept: Bool) async -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        switch mode {
        case .finished: return nil
        case .idle where !chainTried: return nil
        default: break
        }
        let next = now.advanced(by: silenceTimeout)
        let silenceDeadline = alarmDue.advanced(by: silenceTimeout)
        if overslept { return max(next, silenceDeadline) }
        if now < silenceDeadline { return silenceDeadline }
        if let attempt = current, let playback = attempt.playback {
            let limit = attempt.firstWrite == nil ? silenceTimeout : stallTimeout
            let since = max(attempt.silentSince, playback.thread.lastWrite ?? attempt.silentSince)
            let deadline = since.advanced(by: limit)
            // Past the alarm's own deadline nothing may stay silent: a device that has not written
            // yet counts as stalled when nothing else sounds either.
            let silent = attempt.firstWrite == nil && !fallbackSounding
            if now < deadline && !silent { return deadline }
            current = nil
            // Its thread may be blocked inside alsa-lib until the server answers: ask it to stop,
            // never wait for it.
            playback.requestStop()
            let error = AlarmDeviceUnresponsive(device: attempt.device,
                                                stage: attempt.firstWrite == nil ? .firstWrite : .write,
                                                limit: limit)
            await attemptFailed(attempt, because: error.description, transient: true)
        }
        if current?.firstWrite == nil, !fallbackSounding, chainTried {
            // Nothing sounds (a device is still opening, or the driver has not called `start`).
            let opening = current.map { " while \(Self.outputName($0.device)) is still opening" } ?? ""
            noteFailure("nothing sounded within \(silenceTimeout.compactDescription) of the alarm\(opening); the \(fallbackName) sounds until a device does")
            _ = await startFallback()
            settle()
        }
        return next
    }

    // MARK: - Reconnecting

    /// Schedules the next attempt: 2 s, 4 s, 8 s, then every 8 s (with the default delays), never
    /// before the alarm is due.
    private func scheduleReconnect(device: String) {
        reconnectTask?.cancel()
        let delay = reconnectDelays[min(reconnectAttempt, reconnectDelays.count - 1)]
        reconnectAttempt += 1
        let at = max(ContinuousClock.now, alarmDue).advanced(by: delay)
        let scheduling = scheduling
        reconnectTask = scheduling.task { [weak self] in
            guard (try? await scheduling.clock.sleep(for: ContinuousClock.now.duration(to: at))) != nil else { return }
            await self?.reconnect(device: device)
        }
    }

    /// One reconnect attempt. When the device opens, its first write restores the alarm; when it
    /// fails, the next attempt is scheduled. While an earlier open of it still hangs, that one is
    /// waited for instead of opening it again.
    private func reconnect(device: String) {
        guard case .onFallback(let lost) = mode, lost == device, current == nil else { return }
        if let hung = hungOpens[device] {
            changes.yield(AlarmOutputChange(
                kind: .retryFailed, output: fallbackName,
                message: "reopening \(device) waits: its open from \(hung.since.duration(to: .now).compactDescription) ago has not returned (the device or its sound server does not answer); it is used if it does"))
            scheduleReconnect(device: device)
            return
        }
        begin(device: device, due: nil, position: resumePosition)
    }

    private func settle() {
        settled = true
        let waiters = settledWaiters
        settledWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

/// A change of the output that sounds the alarm while it rings (the device was lost, or is back).
///
/// The session shows each one as an `output` record: `{"event":"output","output":…,"message":…}`.
public struct AlarmOutputChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// The audio device failed or stalled mid-alarm; the alarm moved to the fallback.
        case lost
        /// An attempt to move off the fallback failed (a reconnect, or a device of the chain that
        /// was still opening when the fallback took over); the fallback keeps sounding.
        case retryFailed = "retry_failed"
        /// The audio device is back (or started late); the alarm moved to it.
        case restored
        /// The same output plays something else: the alarm sound failed or stayed silent, and the
        /// built-in sound took over.
        case soundReplaced = "sound_replaced"
        /// A second output started, stopped or failed beside the one that sounds the alarm (the
        /// card itself beside a sound server whose monitors prove nothing); `output` is unchanged.
        case beside
    }

    public var kind: Kind
    /// The output that sounds the alarm from now on, as in `AlarmChainReport.output`.
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
/// write), so the chain measures it.
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

/// The time limits of the chain.
public struct AlarmChainLimits: Sendable, Hashable {
    /// How long a device may take to open before the chain moves on.
    public var openTimeout: Duration
    /// How long the alarm may stay silent after it was due (nothing written yet) before the fallback
    /// sounds.
    public var silenceTimeout: Duration
    /// How long a playing device may accept no frames before it counts as lost. Longer than
    /// `silenceTimeout`: a healthy PulseAudio null sink holds a new stream's writes for up to 1.7 s
    /// (measured; it renders in blocks of up to 2 s) while the first buffers play.
    public var stallTimeout: Duration
    /// Waits between reconnect attempts; the last one repeats.
    public var reconnectDelays: [Duration]
    /// A look of the watchdog this much later than it was due means the machine was suspended: the
    /// device gets a fresh period before it counts as stalled.
    public var oversleep: Duration

    public init(openTimeout: Duration = .seconds(1), silenceTimeout: Duration = .seconds(1),
                stallTimeout: Duration = .seconds(3),
                reconnectDelays: [Duration] = [.seconds(2), .seconds(4), .seconds(8)],
                oversleep: Duration = .milliseconds(500)) {
        self.openTimeout = openTimeout
        self.silenceTimeout = silenceTimeout
        self.stallTimeout = stallTimeout
        self.reconnectDelays = reconnectDelays.isEmpty ? [.seconds(8)] : reconnectDelays
        self.oversleep = oversleep
    }
}

/// What the alarm started on, for `start`.
public struct AlarmChainReport: Sendable, Hashable {
    /// The output that sounds it, e.g. `terminal bell` or `ALSA default`.
    public var output: String
    /// Outputs that were tried first and failed, each with the reason, in order.
    public var fallbacks: [String]
    /// From the due instant to the device's first write; `nil` when a device did not start it.
    public var lateness: Duration?
    /// The fallback sounds it.
    public var onFallback: Bool

    public init(output: String, fallbacks: [String], lateness: Duration?, onFallback: Bool) {
        self.output = output
        self.fallbacks = fallbacks
        self.lateness = lateness
        self.onFallback = onFallback
    }
}

/// What the driver saw of the playing device when time passed: when it last accepted frames, and
/// where the alarm would resume if it were lost now.
public struct AlarmChainObservation<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    public var lastWrite: Instant?
    public var resumePosition: Duration?

    public init(lastWrite: Instant? = nil, resumePosition: Duration? = nil) {
        self.lastWrite = lastWrite
        self.resumePosition = resumePosition
    }
}

/// Something that happens to the chain. The driver feeds these to ``AlarmChain/handle(_:at:)``.
public enum AlarmChainEvent<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// Prepare the alarm due at `due`: devices open ahead and start themselves then.
    case arm(reason: AlarmReason, due: Instant)
    /// Sound now (if arming has not); a `report` effect answers once something sounds.
    case start(reason: AlarmReason)
    /// Stop sounding, or disarm.
    case stop
    /// The open of `attempt` returned with a device that plays; `lastWrite` when it has written
    /// already (a late open).
    case opened(attempt: Int, lastWrite: Instant?)
    /// The open of `attempt` failed (a missing device, a sound that cannot be read).
    case openFailed(attempt: Int, reason: String)
    /// `attempt`'s device took its first frames at `at`.
    case firstWrite(attempt: Int, at: Instant)
    /// `attempt`'s device stopped: played out or stopped (`failure` nil), or failed.
    case ended(attempt: Int, failure: String?, deviceLost: Bool, resumePosition: Duration?)
    /// Time passed (the driver woke at ``AlarmChain/nextDeadline``), with what it saw of the
    /// playing device.
    case timeElapsed(AlarmChainObservation<Instant>)
}

/// What the driver must do after an event, in order.
public enum AlarmChainEffect<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// Open `device` on a thread of its own and play from `position`; with `due`, its first frame
    /// is written at that instant.
    case open(attempt: Int, device: String, due: Instant?, position: Duration)
    /// Ask `attempt`'s device to stop and never wait for it (it may be stalled inside alsa-lib).
    case abandon(attempt: Int)
    /// Stop `attempt`'s device, waiting a short time for it to close.
    case close(attempt: Int)
    case startFallback
    case stopFallback
    /// Tell the session: the alarm moved.
    case change(AlarmOutputChange)
    /// Answer the waiting `start`.
    case report(AlarmChainReport)
}

/// The never-silent output chain of an alarm as a pure value: `(state, event, now) → (state,
/// effects)`, like ``Session``. No clock, I/O or threads live here; `AudioAlarmOutput` is its
/// driver.
///
/// - The devices are tried in order (the requested one, then `default`): each opens on a thread of
///   its own; one that fails to open, fails before its first write, or does not open within
///   `openTimeout`, is skipped (each failure goes into the report); when none is left the fallback
///   (the terminal bell) sounds.
/// - Armed ahead, the first device to open writes its first frame at the due instant by itself;
///   `start` answers once something sounds.
/// - A watchdog makes sure something sounds: when nothing does `silenceTimeout` after the alarm was
///   due (a device that opened but writes nothing, or one still opening), the fallback sounds at
///   once; a playing device that accepts no frames for `stallTimeout` counts as lost.
/// - A device lost mid-alarm hands over to the fallback at once and is reopened after 2 s, 4 s,
///   8 s, then every 8 s; when it writes again, the alarm resumes where it was and the fallback
///   stops. An open that hung is never repeated while it hangs: it is used if it completes.
/// - The sound server lost mid-alarm (it died, or froze): beside the fallback, the ALSA devices
///   after it in the chain are tried at once, in order (`default`, then `sysdefault`: the card
///   itself, which a dead server no longer holds); the first to write takes the alarm over where
///   it was and the fallback stops. While none plays, the server is reopened as above.
/// - `stop` wins over everything: whatever is pending, nothing sounds after it.
public struct AlarmChain<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    public enum Mode: Sendable, Hashable {
        case idle
        /// Trying the chain from `index`; `due` is when the first frame should be written.
        case starting(index: Int, due: Instant)
        /// Playing on a device.
        case playing
        /// The fallback sounds; `device` is being reconnected.
        case onFallback(device: String)
        /// The sound played out (a set duration).
        case finished
    }

    /// One try at sounding the alarm on a device.
    public struct Attempt: Sendable, Hashable {
        public var id: Int
        public var device: String
        /// When its first frame is due (the lateness is measured from here).
        public var due: Instant
        /// Its open returned with a playing device.
        public var opened: Bool
        /// Silence is counted from here: the due instant, or when it opened if that was later.
        public var silentSince: Instant
        public var firstWrite: Instant?
    }

    /// The devices to try in order (`default` is appended when missing).
    public let devices: [String]
    public let limits: AlarmChainLimits
    /// How reports and changes name the fallback.
    public let fallbackName: String

    public private(set) var mode = Mode.idle
    public private(set) var current: Attempt?
    /// Whether the fallback sounds now.
    public private(set) var fallbackSounding = false
    /// Whether `arm` or `start` has run the chain since the last `stop`.
    public private(set) var chainTried = false
    /// When the alarm is due: nothing is reopened before it, and silence is counted from it.
    public private(set) var alarmDue: Instant?
    /// When the device that was lost is reopened next.
    public private(set) var reconnectAt: Instant?
    /// Where the alarm resumes on a device that comes back.
    public private(set) var resumePosition = Duration.zero
    /// Opens that did not return within `openTimeout` and still run, by device: the device is not
    /// opened again while one hangs.
    public private(set) var hungOpens: [String: HungOpen] = [:]

    public struct HungOpen: Sendable, Hashable {
        public var attempt: Int
        public var since: Instant
    }

    private var nextAttempt = 0
    private var reconnectDevice: String?
    /// The devices still to try in place of a sound server lost mid-alarm, in order.
    public private(set) var substitutes: [String] = []
    private var reconnectCount = 0
    /// Opens that have not returned, with when they count as hung.
    private var pendingOpens: [Int: PendingOpen] = [:]

    private struct PendingOpen: Sendable, Hashable {
        var device: String
        var deadline: Instant
    }
    private var failures: [String] = []
    /// Whether a `report` has gone out since the chain began: later failures become changes.
    private var reported = false
    /// A `start` waits for its report.
    private var startWaiting = false
    private var settled = false
    /// Devices of the chain that hung or stalled (worth reopening), in chain order.
    private var transient: [String] = []
    /// When the watchdog looks next.
    private var watchAt: Instant?

    /// The name of the sound server's own output (libpulse streams on the routed sinks) in the chain.
    public static var soundServer: String { "sound server" }
    /// ALSA's name for the card's own default device, past any sound server.
    public static var hardware: String { "sysdefault" }

    /// - Parameter soundServer: try the sound server's own output first when the device asked
    ///   for is ALSA's `default` (on a desktop, the same server through ALSA's `pulse` plugin),
    ///   and ALSA's `sysdefault` (the card, past the server) after `default`.
    public init(device: String?, soundServer: Bool = false, limits: AlarmChainLimits = AlarmChainLimits(),
                fallbackName: String = "terminal bell") {
        var devices = [device ?? "default"]
        if soundServer, devices == ["default"] { devices = [Self.soundServer, "default", Self.hardware] }
        if !devices.contains("default") { devices.append("default") }
        self.devices = devices
        self.limits = limits
        self.fallbackName = fallbackName
    }

    public static func outputName(_ device: String) -> String { device == soundServer ? device : "ALSA \(device)" }

    /// The earliest instant at which time alone changes the chain; `nil` when only an event can.
    ///
    /// A loop, not `map` and `+` over the values: those run here unspecialised (`Instant` is
    /// generic), ask the runtime for their element types by name, and the first such question
    /// scans every protocol conformance record of the binary, whose pages then stay in a playing
    /// alarm's memory (issue 23).
    public var nextDeadline: Instant? {
        var earliest: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            if let known = earliest, known <= instant { return }
            earliest = instant
        }
        consider(watchAt)
        consider(reconnectAt)
        for open in pendingOpens.values { consider(open.deadline) }
        return earliest
    }

    /// Something sounds now: the fallback, or a device that has written.
    public var isSounding: Bool { fallbackSounding || current?.firstWrite != nil }

    // MARK: - Events

    public mutating func handle(_ event: AlarmChainEvent<Instant>, at now: Instant) -> [AlarmChainEffect<Instant>] {
        var effects: [AlarmChainEffect<Instant>] = []
        switch event {
        case .arm(let reason, let due):
            _ = reason
            if !chainTried { beginAlarm(due: max(due, now), now: now, into: &effects) }
        case .start:
            if !chainTried { beginAlarm(due: now, now: now, into: &effects) }
            startWaiting = true
            if settled { answerStart(into: &effects) }
        case .stop:
            stop(into: &effects)
        case .opened(let id, let lastWrite):
            opened(id, lastWrite: lastWrite, now: now, into: &effects)
        case .openFailed(let id, let reason):
            let pending = pendingOpens.removeValue(forKey: id)
            if let device = pending?.device, hungOpens[device]?.attempt == id { hungOpens[device] = nil }
            guard let attempt = current, attempt.id == id else { break }
            current = nil
            attemptFailed(attempt, because: reason, transient: false, position: nil, now: now, into: &effects)
        case .firstWrite(let id, let at):
            firstWrite(id, at: at, into: &effects)
        case .ended(let id, let failure, let deviceLost, let position):
            guard let attempt = current, attempt.id == id else { break }
            current = nil
            if let failure {
                attemptFailed(attempt, because: failure, transient: deviceLost, position: position, now: now, into: &effects)
            } else if case .playing = mode {
                mode = .finished
                watchAt = nil
            }
        case .timeElapsed(let observation):
            applyDeadlines(upTo: now, observation: observation, into: &effects)
        }
        return effects
    }

    // MARK: - Time

    /// Applies each deadline at or before `now`, earliest first.
    private mutating func applyDeadlines(upTo now: Instant, observation: AlarmChainObservation<Instant>,
                                         into effects: inout [AlarmChainEffect<Instant>]) {
        while let deadline = nextDeadline, deadline <= now {
            if let (id, open) = pendingOpen(dueAt: deadline) {
                pendingOpens[id] = nil
                openTimedOut(id, device: open.device, now: now, into: &effects)
            } else if reconnectAt == deadline {
                reconnectAt = nil
                reconnect(now: now, into: &effects)
            } else if watchAt == deadline {
                watchAt = nil
                let overslept = deadline.duration(to: now) > limits.oversleep
                watchAt = watch(now: now, overslept: overslept, observation: observation, into: &effects)
            } else {
                return
            }
        }
    }

    /// The open that counts as hung at `deadline`. A loop over the dictionary, not `first(where:)`,
    /// for the reason ``nextDeadline`` gives: that call asked the runtime for the dictionary's
    /// `Sequence` conformance by name a second into every alarm, and its scan of every conformance
    /// record added 0.5 MiB to a playing alarm (issue 23).
    private func pendingOpen(dueAt deadline: Instant) -> (id: Int, open: PendingOpen)? {
        for (id, open) in pendingOpens where open.deadline == deadline { return (id, open) }
        return nil
    }

    /// The device whose hung open is attempt `id` (a loop, as in ``pendingOpen(dueAt:)``).
    private func hungDevice(ofAttempt id: Int) -> String? {
        for (device, hung) in hungOpens where hung.attempt == id { return device }
        return nil
    }

    // MARK: - The chain

    private mutating func beginAlarm(due: Instant, now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        chainTried = true
        failures = []
        transient = []
        reported = false
        settled = false
        alarmDue = due
        resumePosition = .zero
        reconnectCount = 0
        watchAt = due.advanced(by: limits.silenceTimeout)
        startChain(from: 0, due: due, now: now, into: &effects)
    }

    /// Starts opening the first device from `index` on; the fallback settles it when none is left.
    private mutating func startChain(from index: Int, due: Instant, now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        for index in index ..< devices.count {
            let device = devices[index]
            if let hung = hungOpens[device] {
                noteFailure("\(Self.outputName(device)) skipped: its open from \(hung.since.duration(to: now).compactDescription) ago has not returned (the device or its sound server does not answer)", into: &effects)
                markTransient(device)
                continue
            }
            mode = .starting(index: index, due: due)
            begin(device: device, due: due, position: .zero, now: now, into: &effects)
            return
        }
        // Nothing left: the fallback sounds (at `start`, which the session calls at the due instant).
        current = nil
        if let device = transient.first {
            mode = .onFallback(device: device)
            reconnectCount = 0
            scheduleReconnect(device: device, now: now)
        } else {
            mode = .idle
        }
        settle(into: &effects)
    }

    private mutating func begin(device: String, due: Instant?, position: Duration, now: Instant,
                                into effects: inout [AlarmChainEffect<Instant>]) {
        nextAttempt += 1
        let id = nextAttempt
        current = Attempt(id: id, device: device, due: due ?? now, opened: false,
                          silentSince: max(due ?? now, now), firstWrite: nil)
        pendingOpens[id] = PendingOpen(device: device, deadline: now.advanced(by: limits.openTimeout))
        effects.append(.open(attempt: id, device: device, due: due, position: position))
    }

    private mutating func opened(_ id: Int, lastWrite: Instant?, now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        let device = pendingOpens.removeValue(forKey: id)?.device
            ?? hungDevice(ofAttempt: id)
        if let device, hungOpens[device]?.attempt == id { hungOpens[device] = nil }
        guard var attempt = current, attempt.id == id else {
            if case .onFallback(let lost) = mode, lost == device, current == nil {
                // A reopen that hung has opened after all: use it; its first write restores the alarm.
                reconnectAt = nil
                current = Attempt(id: id, device: lost, due: now, opened: true, silentSince: now, firstWrite: nil)
                if let lastWrite { firstWrite(id, at: lastWrite, into: &effects) }
            } else {
                // Stopped, or the alarm went on elsewhere: nobody wants it.
                effects.append(.abandon(attempt: id))
            }
            return
        }
        attempt.opened = true
        attempt.silentSince = max(attempt.silentSince, now)
        current = attempt
        if let lastWrite { firstWrite(id, at: lastWrite, into: &effects) }
    }

    private mutating func openTimedOut(_ id: Int, device: String, now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        hungOpens[device] = HungOpen(attempt: id, since: now.advanced(by: .zero - limits.openTimeout))
        guard let attempt = current, attempt.id == id, !attempt.opened, attempt.firstWrite == nil else { return }
        current = nil
        let error = AlarmDeviceUnresponsive(device: device, stage: .open, limit: limits.openTimeout)
        attemptFailed(attempt, because: error.description, transient: true, position: nil, now: now, into: &effects)
    }

    private mutating func firstWrite(_ id: Int, at instant: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        guard var attempt = current, attempt.id == id, attempt.firstWrite == nil else { return }
        attempt.firstWrite = instant
        current = attempt
        let lost: String?
        switch mode {
        case .starting: lost = nil
        case .onFallback(let device): lost = device
        case .idle, .playing, .finished: return
        }
        mode = .playing
        reconnectAt = nil
        reconnectDevice = nil
        reconnectCount = 0
        substitutes = []
        settle(into: &effects)
        guard fallbackSounding else { return }
        fallbackSounding = false
        effects.append(.stopFallback)
        let name = Self.outputName(attempt.device)
        let message = switch lost {
        case nil: "\(name) started late; the alarm moved there from the \(fallbackName)"
        case attempt.device: "\(name) is back; the alarm resumes there at \(resumePosition.compactDescription)"
        case let lost?: "\(name) took the alarm over from the lost \(Self.outputName(lost)); it resumes there at \(resumePosition.compactDescription)"
        }
        effects.append(.change(AlarmOutputChange(kind: .restored, output: name, message: message)))
    }

    /// `attempt` failed to open, failed, or stalled: the chain goes on, or the fallback sounds.
    private mutating func attemptFailed(_ attempt: Attempt, because reason: String, transient isTransient: Bool,
                                        position: Duration?, now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        let name = Self.outputName(attempt.device)
        if attempt.firstWrite != nil, let position { resumePosition = max(position, .zero) }
        switch mode {
        case .idle, .finished:
            return
        case .starting(let index, let due):
            // Failed before its first write: try the next device, as if it had not opened.
            noteFailure("\(name) failed: \(reason)", into: &effects)
            if isTransient { markTransient(attempt.device) }
            startChain(from: index + 1, due: due, now: now, into: &effects)
        case .playing:
            mode = .onFallback(device: attempt.device)
            startFallback(into: &effects)
            // The sound server's loss leaves the ALSA devices after it: tried at once, beside the fallback.
            if attempt.device == Self.soundServer, let index = devices.firstIndex(of: attempt.device) {
                substitutes = devices[(index + 1)...].filter { hungOpens[$0] == nil }
            }
            let tried = substitutes.isEmpty ? ""
                : "; \(substitutes.map(Self.outputName).joined(separator: ", then ")) \(substitutes.count == 1 ? "is" : "are") tried now"
            effects.append(.change(AlarmOutputChange(
                kind: .lost, output: fallbackName,
                message: "\(name) was lost mid-alarm (\(reason)); the alarm continues on the \(fallbackName)\(tried) and \(attempt.device) is reopened in \(limits.reconnectDelays[0].compactDescription)")))
            reconnectCount = 0
            scheduleReconnect(device: attempt.device, now: now)
            trySubstitute(now: now, into: &effects)
        case .onFallback(let device) where attempt.device != device:
            // A device tried in place of the lost sound server failed: the next one, if any; the
            // server's reconnect stays on its schedule.
            effects.append(.change(AlarmOutputChange(kind: .retryFailed, output: fallbackName,
                                                     message: "\(name) in place of the \(Self.outputName(device)) failed: \(reason)")))
            trySubstitute(now: now, into: &effects)
        case .onFallback(let device):
            // A reconnected device failed again before or after its first write.
            if attempt.firstWrite == nil {
                effects.append(.change(AlarmOutputChange(kind: .retryFailed, output: fallbackName,
                                                         message: "reopening \(device) failed: \(reason)")))
            } else {
                startFallback(into: &effects)
                effects.append(.change(AlarmOutputChange(
                    kind: .lost, output: fallbackName,
                    message: "\(name) was lost again (\(reason)); the alarm continues on the \(fallbackName)")))
            }
            scheduleReconnect(device: device, now: now)
        }
    }

    /// Opens the next device in place of the lost sound server, if one is left and nothing opens.
    private mutating func trySubstitute(now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        guard current == nil, !substitutes.isEmpty else { return }
        let device = substitutes.removeFirst()
        begin(device: device, due: nil, position: resumePosition, now: now, into: &effects)
    }

    /// A failure for the report, or, once the report went out, a change.
    private mutating func noteFailure(_ message: String, into effects: inout [AlarmChainEffect<Instant>]) {
        if reported {
            effects.append(.change(AlarmOutputChange(kind: .retryFailed, output: fallbackName, message: message)))
        } else {
            failures.append(message)
        }
    }

    private mutating func markTransient(_ device: String) {
        if !transient.contains(device) { transient.append(device) }
    }

    private mutating func startFallback(into effects: inout [AlarmChainEffect<Instant>]) {
        guard !fallbackSounding else { return }
        fallbackSounding = true
        effects.append(.startFallback)
    }

    private mutating func settle(into effects: inout [AlarmChainEffect<Instant>]) {
        settled = true
        if startWaiting { answerStart(into: &effects) }
    }

    /// The report for a waiting `start`; when no device has written, the fallback sounds now.
    private mutating func answerStart(into effects: inout [AlarmChainEffect<Instant>]) {
        startWaiting = false
        reported = true
        let failed = failures
        if let attempt = current, let firstWrite = attempt.firstWrite {
            effects.append(.report(AlarmChainReport(output: Self.outputName(attempt.device), fallbacks: failed,
                                                    lateness: attempt.due.duration(to: firstWrite), onFallback: false)))
            return
        }
        guard chainTried else {
            // Stopped while starting: stay silent, as asked.
            effects.append(.report(AlarmChainReport(output: "none (stopped before it started)", fallbacks: failed,
                                                    lateness: nil, onFallback: false)))
            return
        }
        startFallback(into: &effects)
        effects.append(.report(AlarmChainReport(output: fallbackName, fallbacks: failed, lateness: nil, onFallback: true)))
    }

    private mutating func stop(into effects: inout [AlarmChainEffect<Instant>]) {
        mode = .idle
        chainTried = false
        watchAt = nil
        reconnectAt = nil
        reconnectDevice = nil
        substitutes = []
        if let attempt = current {
            current = nil
            // One still opening is abandoned when its open returns.
            if attempt.opened { effects.append(.close(attempt: attempt.id)) }
        }
        if fallbackSounding {
            fallbackSounding = false
            effects.append(.stopFallback)
        }
        settle(into: &effects)
    }

    // MARK: - Watchdog

    /// Hands over to the fallback when nothing sounds, or the device stalled. Returns when to look
    /// again, or `nil` to stop watching.
    private mutating func watch(now: Instant, overslept: Bool, observation: AlarmChainObservation<Instant>,
                                into effects: inout [AlarmChainEffect<Instant>]) -> Instant? {
        switch mode {
        case .finished: return nil
        case .idle where !chainTried: return nil
        default: break
        }
        let next = now.advanced(by: limits.silenceTimeout)
        let silenceDeadline = (alarmDue ?? now).advanced(by: limits.silenceTimeout)
        // Woken well after its time: the system was suspended (the clock counts through suspend);
        // the device gets a fresh period to resume before it counts as stalled.
        if overslept { return max(next, silenceDeadline) }
        if now < silenceDeadline { return silenceDeadline }
        if let attempt = current, attempt.opened {
            let limit = attempt.firstWrite == nil ? limits.silenceTimeout : limits.stallTimeout
            let since = max(attempt.silentSince, observation.lastWrite ?? attempt.silentSince)
            let deadline = since.advanced(by: limit)
            // Past the alarm's own deadline nothing may stay silent: a device that has not written
            // yet counts as stalled when nothing else sounds either.
            let silent = attempt.firstWrite == nil && !fallbackSounding
            if now < deadline && !silent { return deadline }
            current = nil
            // Its thread may be blocked inside alsa-lib until the server answers: ask it to stop,
            // never wait for it.
            effects.append(.abandon(attempt: attempt.id))
            let error = AlarmDeviceUnresponsive(device: attempt.device,
                                                stage: attempt.firstWrite == nil ? .firstWrite : .write, limit: limit)
            attemptFailed(attempt, because: error.description, transient: true,
                          position: observation.resumePosition, now: now, into: &effects)
        }
        if current?.firstWrite == nil, !fallbackSounding, chainTried {
            // Nothing sounds (a device is still opening, or the session has not called `start`).
            let opening = current.map { " while \(Self.outputName($0.device)) is still opening" } ?? ""
            noteFailure("nothing sounded within \(limits.silenceTimeout.compactDescription) of the alarm\(opening); the \(fallbackName) sounds until a device does", into: &effects)
            startFallback(into: &effects)
            settle(into: &effects)
        }
        return next
    }

    // MARK: - Reconnecting

    /// Schedules the next attempt: 2 s, 4 s, 8 s, then every 8 s (with the default delays), never
    /// before the alarm is due.
    private mutating func scheduleReconnect(device: String, now: Instant) {
        let delay = limits.reconnectDelays[min(reconnectCount, limits.reconnectDelays.count - 1)]
        reconnectCount += 1
        reconnectDevice = device
        reconnectAt = max(now, alarmDue ?? now).advanced(by: delay)
    }

    /// One reconnect attempt. While an earlier open of the device still hangs, that one is waited
    /// for instead of opening it again.
    private mutating func reconnect(now: Instant, into effects: inout [AlarmChainEffect<Instant>]) {
        guard let device = reconnectDevice, case .onFallback(let lost) = mode, lost == device else { return }
        guard current == nil else {
            // A device tried in its place is still opening: the reconnect waits for the next turn.
            scheduleReconnect(device: device, now: now)
            return
        }
        if let hung = hungOpens[device] {
            effects.append(.change(AlarmOutputChange(
                kind: .retryFailed, output: fallbackName,
                message: "reopening \(device) waits: its open from \(hung.since.duration(to: now).compactDescription) ago has not returned (the device or its sound server does not answer); it is used if it does")))
            scheduleReconnect(device: device, now: now)
            return
        }
        begin(device: device, due: nil, position: resumePosition, now: now, into: &effects)
    }
}

extension AlarmChain {
    /// The number of times the lost device has been reopened since it was lost (for tests of the
    /// backoff schedule).
    public var reconnectAttempts: Int { reconnectCount }
}

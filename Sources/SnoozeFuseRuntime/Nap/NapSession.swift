public import Foundation
public import SnoozeFuseCore
import SnoozeFuseSystem

/// What a nap is: the timers and everything its alarm and plugins need. The CLI builds one from
/// flags (later also from the environment, presets and settings); ``NapSession/live(_:loop:)``
/// turns it into a running nap.
public struct NapConfiguration: Sendable, Hashable {
    public var timers: SessionTimers
    /// The preset the timers came from, for messages.
    public var presetName: String
    /// What holds the nap before its release (`--hold`): a key in the terminal, the desktop, none.
    public var hold: HoldSource
    /// With a desktop hold: no input for this long ends the hold.
    public var idleAfter: Duration
    /// Whether the nap waits for a hold (not `--no-hold`).
    public var holdMode: Bool { hold.waitsForHold }
    /// The alarm sound: a built-in's name, an imported sound's name or a file; nil for the default.
    public var sound: String?
    /// Alarm volume, 0–100.
    public var volume: Int
    public var fadeIn: Duration
    /// The ALSA PCM the alarm plays on first.
    public var device: String
    /// The system volume while the alarm sounds (nil: leave it).
    public var systemVolume: Int?
    /// `--route`: where the alarm plays on a sound server.
    public var route: AlarmRoute
    /// `--fix-volume`: unmute and raise the sinks the alarm plays on.
    public var fixesVolume: Bool
    /// `--source ID[:key=value,...]`.
    public var source: String?
    /// `--emitter ID[:key=value,...]`, each.
    public var emitters: [String]
    /// Heartbeats per minute while holding.
    public var bpm: Int
    /// How a ringing alarm is stopped for good, from its terminal and from `snoozefuse stop`.
    public var dismissal: DismissMode
    /// `--sleep-sound ID[:key=value,...]`.
    public var sleepSound: String?
    public var sleepVolume: Int
    /// The PCM of the sleep sound (the alarm's when nil).
    public var sleepDevice: String?
    /// Show a countdown (wake once per displayed second).
    public var showsCountdown: Bool
    /// Colour on the terminal (the bell's flash).
    public var usesColour: Bool
    /// False for a terminal that may not have its cursor moved (`--plain`, TERM=dumb): the bell
    /// writes one plain line, then rings alone.
    public var movesCursor: Bool
    /// The wall-clock time the alarm rings (`--until`), from the start, held or not (the timers'
    /// nap and max are then what it leaves); nil: the timers decide. Made an instant of the
    /// boot-time clock as the nap starts, so a later change of the clock does not move it.
    public var wakeAt: Date?

    public init(timers: SessionTimers, presetName: String, hold: HoldSource, idleAfter: Duration = .seconds(10), sound: String? = nil, volume: Int = 80,
                fadeIn: Duration = .seconds(10), device: String = "default", systemVolume: Int? = nil,
                route: AlarmRoute = .wake, fixesVolume: Bool = true, source: String? = nil, emitters: [String] = [], bpm: Int = 60, sleepSound: String? = nil,
                sleepVolume: Int = 60, sleepDevice: String? = nil, dismissal: DismissMode = .word,
                showsCountdown: Bool = false, usesColour: Bool = false, movesCursor: Bool = true, wakeAt: Date? = nil) {
        self.timers = timers
        self.presetName = presetName
        self.hold = hold
        self.idleAfter = idleAfter
        self.sound = sound
        self.volume = volume
        self.fadeIn = fadeIn
        self.device = device
        self.systemVolume = systemVolume
        self.route = route
        self.fixesVolume = fixesVolume
        self.source = source
        self.emitters = emitters
        self.bpm = bpm
        self.sleepSound = sleepSound
        self.sleepVolume = sleepVolume
        self.sleepDevice = sleepDevice
        self.dismissal = dismissal
        self.showsCountdown = showsCountdown
        self.usesColour = usesColour
        self.movesCursor = movesCursor
        self.wakeAt = wakeAt
    }
}

/// What can be asked of a running nap. Every command goes in through ``NapSession/send(_:)``: keys
/// from its terminal, signals, and (later) the control socket of another terminal.
public enum NapCommand: Sendable, Hashable {
    /// A terminal's keys: what they mean depends on the phase (see ``NapKeys``).
    case key(KeyInput)
    /// The person holds, or let go.
    case hold, release
    /// Stop the alarm for good.
    case dismiss
    /// Silence the alarm for this long (the configured snooze when nil).
    case snooze(Duration?)
    /// Move the coming alarm (negative: sooner).
    case adjust(Duration)
    /// Give up on the nap; `interrupted` for Ctrl-C (SIGINT, exit 130).
    case cancel(interrupted: Bool)
    /// Give up on a nap whose alarm has not rung (another terminal's `stop --yes`): the session
    /// ignores it once the alarm rings, where the phase the asker saw was already past.
    case cancelBeforeAlarm
    /// The terminal went away (SIGHUP): not a cancel; the nap goes on without it.
    case detach
}

/// How a nap ended.
public struct NapResult: Sendable, Hashable {
    public var outcome: SessionOutcome
    /// Cancelled by SIGINT.
    public var interrupted: Bool

    public init(outcome: SessionOutcome, interrupted: Bool) {
        self.outcome = outcome
        self.interrupted = interrupted
    }
}

/// Where keys come from (a terminal).
public protocol KeySource: Sendable {
    /// Starts reporting; with `releaseGap`, `quiet` follows each burst of keys.
    func start(releaseGap: Duration?, deliver: @escaping @Sendable (KeyInput) -> Void)
    /// Stops reporting and restores the terminal.
    func stop()
}

extension TerminalKeyReader: KeySource {}

/// What a nap talks to: its clock and executor, its alarm, what plays while it sleeps, where pulses
/// go, where keys come from, and what those outputs report.
public struct NapPorts<C: Clock>: Sendable where C.Duration == Duration {
    public var clock: C
    public var executor: (any TaskExecutor)?
    public var alarm: any AlarmOutput
    public var sleepSound: (any SleepSoundOutput)?
    public var pulses: [any PulseSink]
    public var keys: (any KeySource)?
    /// What the outputs report (output changes, warnings), in order.
    public var notes: AsyncStream<SessionNote>
    /// Winds the outputs down once the session has ended; it must end `notes`.
    public var shutdown: @Sendable () async -> Void
    public var wallClock: @Sendable () -> Date
    /// Where the session starts: fresh (nil), or taken up again where it stood (a guardian, `resume`).
    public var initialSession: Session<C.Instant>?
    /// A fresh session's alarm at a time of day (`--until`), as an instant of `clock`.
    public var alarmAt: C.Instant?
    /// Told the session at the start and at every change (see `SessionDriver.onChange`).
    public var onChange: (@Sendable (Session<C.Instant>, C.Instant) async -> Void)?
    /// Told every record as it goes into ``NapSession/records`` (the desktop notification, the
    /// hooks). Called on the nap's loop: it must hand slow work (a bus call, a program) to a
    /// thread of its own and return at once.
    public var onRecord: (@Sendable (SessionRecord) -> Void)?
    /// What the alarm plays (`plugin org.snoozefuse.noise`, `sound beep`, `the built-in tone`),
    /// said in the `alarm` event; nil: not said.
    public var alarmSound: String?

    public init(clock: C, executor: (any TaskExecutor)?, alarm: any AlarmOutput, sleepSound: (any SleepSoundOutput)? = nil,
                pulses: [any PulseSink] = [], keys: (any KeySource)? = nil,
                notes: AsyncStream<SessionNote> = AsyncStream { $0.finish() },
                shutdown: @escaping @Sendable () async -> Void = {},
                wallClock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
        self.executor = executor
        self.alarm = alarm
        self.sleepSound = sleepSound
        self.pulses = pulses
        self.keys = keys
        self.notes = notes
        self.shutdown = shutdown
        self.wallClock = wallClock
    }
}

/// A running nap, and the one owner of it: every record of it (phases, the alarm and its
/// lateness, output changes, warnings from the mixer and the plugins, the countdown, the
/// heartbeat) comes out of ``records``, stamped on the session's clock by its ``SessionDriver``,
/// and every command goes in through ``send(_:)``.
public final class NapSession<C: Clock>: Sendable where C.Duration == Duration {
    public let configuration: NapConfiguration
    /// Everything that happens, in order; ends when the nap has ended and its outputs are down.
    public let records: AsyncStream<SessionRecord>
    private let ports: NapPorts<C>
    private let recordFeed: AsyncStream<SessionRecord>.Continuation
    private let events: AsyncStream<SessionEvent>
    private let eventFeed: AsyncStream<SessionEvent>.Continuation
    private let state: Locked<State>
    /// Rung each time a change is saved (``waitForSave(after:atMost:)``).
    private let saveBell = EventBell()

    private struct State {
        var phase = Phase.ready
        var keys: NapKeys<C.Instant>
        /// The session as of the last change the nap saved (its live state written), and how many
        /// changes it saved so far.
        var saved: Session<C.Instant>?
        var savedChanges = 0
        var interrupted = false
        /// Where the session's `t` counts from, once it has started.
        var origin: C.Instant?
        var history: NapHistoryFacts?
        /// The `t` of the last record given out: none goes before it.
        var lastT = 0.0
    }

    /// A nap of `configuration` on `ports`; with `history`, every record also goes into those facts
    /// (see ``history``).
    public init(configuration: NapConfiguration, ports: NapPorts<C>, history: NapHistoryFacts? = nil) {
        self.configuration = configuration
        self.ports = ports
        (records, recordFeed) = AsyncStream.makeStream(of: SessionRecord.self, bufferingPolicy: .unbounded)
        (events, eventFeed) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .unbounded)
        // A session taken up again (a guardian, `resume`) stands in its phase from the start: it
        // makes no phase record to get there, and other terminals are answered from this phase.
        state = Locked(State(phase: ports.initialSession?.phase ?? .ready,
                            keys: NapKeys(holdMode: configuration.hold == .key, dismissal: configuration.dismissal), history: history))
    }

    /// The phase of the nap now.
    public var phase: Phase { state.withLock { $0.phase } }

    /// What the keys can do now: the word that stops the ringing alarm, a pending confirmation.
    public var keyPrompt: KeyPrompt { state.withLock { $0.keys.prompt } }

    /// What the history will record of this nap so far: up to date with every record already
    /// relayed (so with a change's records when the driver reports the change).
    public var history: NapHistoryFacts? { state.withLock { $0.history } }

    /// The session as of the last saved change, and how many changes were saved so far.
    public var saved: (session: Session<C.Instant>?, changes: Int) { state.withLock { ($0.saved, $0.savedChanges) } }

    /// The clock's now, for what previews a command on ``saved``.
    public var now: C.Instant { ports.clock.now }

    private func noteSaved(_ session: Session<C.Instant>) {
        state.withLock { state in
            state.saved = session
            state.savedChanges += 1
        }
        saveBell?.ring()
    }

    /// Blocks until a change after the first `changes` is saved whose session `done` says is the
    /// one waited for, at most `limit`: that session, or nil when none came in time. For another
    /// terminal's answer, on the control thread (never the nap's loop, which makes the change).
    public func waitForSave(after changes: Int, atMost limit: Duration,
                            until done: (Session<C.Instant>) -> Bool = { _ in true }) -> Session<C.Instant>? {
        let deadline = BootInstant.now.advanced(by: limit)
        var seen = changes
        while true {
            let (session, count) = saved
            if count > seen, let session {
                if done(session) { return session }
                seen = count
            }
            guard let saveBell, BootInstant.now < deadline else { return nil }
            _ = saveBell.wait(until: deadline)
        }
    }

    /// Hands a command to the nap; never waits.
    public func send(_ command: NapCommand) {
        let now = ports.clock.now
        var prompt: KeyPrompt?
        let events: [SessionEvent] = state.withLock { state in
            switch command {
            case .key(let input):
                let before = state.keys.prompt
                let events = state.keys.events(for: input, in: state.phase, at: now)
                if state.keys.prompt != before { prompt = state.keys.prompt }
                return events
            case .hold: return [.holdBegan]
            case .release: return [.holdEnded]
            case .dismiss: return [.dismiss]
            case .snooze(let length): return [.snooze(length)]
            case .adjust(let change): return [.adjust(change)]
            case .detach: return [.detach]
            case .cancel(let interrupted):
                state.interrupted = state.interrupted || interrupted
                return [.cancel]
            case .cancelBeforeAlarm: return [.cancelBeforeAlarm]
            }
        }
        if let prompt { relayPrompt(prompt, at: now) }
        for event in events { eventFeed.yield(event) }
    }

    /// Runs the nap until it has ended and its outputs are down.
    public func run() async -> NapResult {
        let ports = ports, configuration = configuration
        let alarm: any AlarmOutput = ports.pulses.isEmpty ? ports.alarm
            : PulsingAlarmOutput(base: ports.alarm, sinks: ports.pulses, clock: ports.clock, executor: ports.executor)
        var driver = SessionDriver(clock: ports.clock, timers: configuration.timers, alarm: alarm,
                                   observer: Relay(session: self), showsCountdown: configuration.showsCountdown,
                                   taskExecutor: ports.executor, wallClock: ports.wallClock)
        driver.sleepSound = ports.sleepSound
        driver.pulseSinks = ports.pulses
        driver.heartbeatBPM = configuration.bpm
        driver.initialSession = ports.initialSession
        driver.alarmAt = ports.alarmAt
        driver.alarmSound = ports.alarmSound
        let changed = ports.onChange
        driver.onChange = { [weak self] session, now in
            // Saved (and told to the guardian) first: a terminal answered on the strength of it
            // finds it in the live state at once.
            await changed?(session, now)
            self?.noteSaved(session)
        }
        // The quiet after a burst of keys ends a hold: in hold mode the one that starts the nap,
        // and with --dismiss hold the one that stops the alarm.
        ports.keys?.start(releaseGap: .milliseconds(750)) { [weak self] input in
            self?.send(.key(input))
        }
        // A session taken up again starts where it stood: its deadlines are looked at at once.
        let first: SessionEvent? = ports.initialSession != nil ? .timeElapsed : configuration.holdMode ? nil : .start
        let outcome = await driver.run(startingWith: first, inputs: events,
                                       notes: ports.notes) {
            ports.keys?.stop()
            await alarm.stop()
            await ports.shutdown()
        }
        eventFeed.finish()
        recordFeed.finish()
        return NapResult(outcome: outcome, interrupted: state.withLock { $0.interrupted })
    }

    fileprivate func relay(_ given: SessionRecord) {
        let now = ports.clock.now
        var record = given
        let prompt: KeyPrompt? = state.withLock { state in
            // In the order they are given out, `t` never goes back: a phase stamped at the deadline
            // it was due at comes after what its change made happen (the alarm stopping as its
            // ring limit ends), a millisecond later.
            record.t = max(record.t, state.lastT)
            state.lastT = record.t
            // Given out under the lock that ordered it: two threads' records never swap.
            recordFeed.yield(record)
            state.history?.observe(record)
            guard record.event == .phase, let phase = record.phase else { return nil }
            if state.origin == nil { state.origin = now.advanced(by: .zero - .milliseconds(Int64(record.t * 1000))) }
            let before = state.keys.prompt
            if phase == .ringing {
                // A new word at every ring (the first, and after each snooze).
                var generator = SystemRandomNumberGenerator()
                state.keys.ringingBegan(word: DismissWords.random(using: &generator))
            } else if state.phase == .ringing {
                state.keys.ringingEnded()
            }
            state.phase = phase
            return state.keys.prompt != before || phase == .ringing ? state.keys.prompt : nil
        }
        ports.onRecord?(record)
        if let prompt { relayPrompt(prompt, at: ports.clock.now) }
    }

    /// A `prompt` record: what the display's key line shows changed.
    private func relayPrompt(_ prompt: KeyPrompt, at now: C.Instant) {
        var record = SessionRecord(.prompt, elapsed: .zero, wall: ports.wallClock())
        state.withLock { state in
            let origin = state.origin ?? now
            record.t = max((origin.duration(to: now).secondsValue * 1000).rounded() / 1000, state.lastT)
            state.lastT = record.t
            record.prompt = prompt
            record.phase = state.phase
            recordFeed.yield(record)
        }
    }

    /// Checks an answer to the ringing alarm's challenge from another terminal (`snoozefuse stop`):
    /// the word in `word` mode, a hold measured by the asking terminal in `hold` mode, nothing in
    /// `key` mode. A right answer dismisses the alarm.
    public func dismiss(answer: String?) -> Bool {
        let prompt = keyPrompt
        switch prompt.dismissal {
        case .key: break
        case .hold: guard answer == "held" else { return false }
        case .word: guard let word = prompt.word, answer?.lowercased() == word else { return false }
        }
        send(.dismiss)
        return true
    }

    /// The driver's observer: every record, the countdown too, goes into ``records``.
    private struct Relay: SessionObserver {
        let session: NapSession

        func record(_ record: SessionRecord) async { session.relay(record) }
        func countdown(_ tick: CountdownTick) async {}
        func countdown(_ tick: CountdownTick, stamped: SessionRecord) async { session.relay(stamped) }
    }
}

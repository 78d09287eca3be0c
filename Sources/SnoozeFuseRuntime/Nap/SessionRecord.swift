public import Foundation
public import SnoozeFuseCore
import SnoozeFuseAudio

/// One line of `--events jsonl`: a phase change, an alarm event, a warning or the end (SPEC §3).
///
/// `t` is seconds since the session started, on the same clock as the deadlines; `wall` is the
/// wall-clock time in ISO 8601. Fields that do not apply are left out of the JSON.
public struct SessionRecord: Sendable, Equatable, Encodable {
    public enum Kind: String, Sendable, Encodable {
        /// The session entered `phase`.
        case phase
        /// The alarm started sounding (`reason`, `lateness_ms`, `output`).
        case alarm
        /// The alarm stopped sounding (snooze, dismissal, ring limit or cancel).
        case alarmStopped = "alarm_stopped"
        /// The alarm moved to another output (`output`, `message`).
        case output
        /// Something the person should know (`message`).
        case warning
        /// The session is over (`outcome`).
        case end
        /// The alarm (or the end of a snooze) moved (`until`: when it comes now; `message`).
        case adjusted
        /// The terminal went away; the nap goes on without it (`message`).
        case detached
        /// An interrupted nap's alarm passed too long ago to ring (`message`): recorded, not rung.
        case missed
        /// The countdown on screen changes (`countdown`); for displays, never written as an event.
        case countdown
        /// A heartbeat pulse went to the emitters while holding; for displays, never written as an event.
        case heartbeat
        /// What the keys can do changed (`prompt`: the word to type, a pending confirmation); for
        /// displays, never written as an event.
        case prompt
        /// The wake alarm that resumes a suspended machine is armed (`until`, `boottime`: when it
        /// fires, as the kernel holds it; `message`).
        case wakeAlarm = "wake_alarm"
        /// A sink's monitor carries the alarm (`sink`, `level_dbfs`, `after`: seconds after it was
        /// due): proof that it is heard, not only played.
        case heard
        /// What the alarm did on the sound server (`what`: routed, fixed, restored, unheard,
        /// escalated, recovered, lost, unverified; `sink`; `message`).
        case sink
        /// What holds the nap before its release (`what`: key, desktop or none; `message`: for a
        /// desktop hold, where its idle time comes from).
        case hold
        /// What the terminal's job control did (`what`: background, foreground, suspend_refused;
        /// `message`): a nap in the background reads no keys and rings by itself.
        case terminal
        /// What became of the nap's guardian (`what`: replaced, unguarded; `message`): one that
        /// died is replaced at once, or the nap says that nothing rings its alarm if it dies.
        case guardian
    }

    public var event: Kind
    public var phase: Phase?
    public var t: Double
    public var wall: String
    /// For `phase`: when this phase's timer runs out, in the same seconds as `t`.
    public var until: Double?
    public var reason: AlarmReason?
    /// For `alarm`: milliseconds from the deadline to the first signal written to the output.
    public var latenessMs: Double?
    /// For `alarm`: the scheduling of the thread that writes it (`realtime (SCHED_FIFO 10)`, or
    /// `normal priority: …` with why and how to allow real-time).
    public var audioThread: String?
    public var output: String?
    /// For `alarm`: what it plays (`plugin ID`, `sound NAME`, `the built-in tone`).
    public var sound: String?
    public var outcome: SessionOutcome?
    public var message: String?
    /// For `countdown`: what the countdown shows (not part of the JSON).
    public var countdown: CountdownTick?
    /// For `heartbeat`: the pulse's intensity (1 the beat, 0.7 the lighter one after it).
    public var intensity: Double?
    /// For `prompt`: what the keys can do now (not part of the JSON).
    public var prompt: KeyPrompt?
    /// For `phase`: when its timer runs out on the wall clock, from the moment the record was made
    /// (not part of the JSON, which has `until`). A phase handled late is stamped when it was due,
    /// so `until - t` is no measure from now.
    public var untilWall: Date?
    /// For `wake_alarm`: when it fires, in seconds of CLOCK_BOOTTIME (as the live state's
    /// `bootSeconds` and `/proc/PID/fdinfo` count).
    public var boottime: Double?
    /// For `heard` and `sink`: the sink's name.
    public var sink: String?
    /// For `sink`: what happened.
    public var what: String?
    /// For `heard`: the level measured in the sink's monitor, in dBFS.
    public var levelDbfs: Double?
    /// For `heard`: seconds from when the alarm was due to the proof.
    public var after: Double?

    public init(
        event: Kind, phase: Phase? = nil, t: Double, wall: String, until: Double? = nil,
        reason: AlarmReason? = nil, latenessMs: Double? = nil, output: String? = nil,
        outcome: SessionOutcome? = nil, message: String? = nil
    ) {
        self.event = event
        self.phase = phase
        self.t = t
        self.wall = wall
        self.until = until
        self.reason = reason
        self.latenessMs = latenessMs
        self.output = output
        self.outcome = outcome
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case event, phase, t, wall, until, reason, output, sound, outcome, message, boottime, sink, what, after
        case latenessMs = "lateness_ms"
        case levelDbfs = "level_dbfs"
        case audioThread = "audio_thread"
    }

    /// A record of `event` that happened `elapsed` after the session started (`t`, to the
    /// millisecond) at wall-clock time `wall`.
    public init(_ event: Kind, elapsed: Duration, wall: Date, message: String? = nil) {
        self.init(event: event, t: (elapsed.secondsValue * 1000).rounded() / 1000,
                  wall: WallClockText.iso8601(secondsSince1970: wall.timeIntervalSince1970), message: message)
    }

    /// `duration` in milliseconds, to the microsecond (for `lateness_ms`).
    public static func milliseconds(_ duration: Duration) -> Double {
        (duration.secondsValue * 1_000_000).rounded() / 1000
    }

    /// Whether the record is an event of `--events jsonl` (countdown, heartbeat and prompt records
    /// are for displays only).
    public var isEvent: Bool { event != .countdown && event != .heartbeat && event != .prompt }

    /// The record as one line of JSON (no trailing newline), keys sorted. Written with Core's
    /// JSONValueEncoder, not JSONEncoder, whose pages a nap would map back while its alarm rings
    /// (issue 23).
    public func jsonLine() -> String {
        // Encoding a struct of strings and finite numbers cannot fail.
        (try? JSONValueEncoder().encode(self)) ?? "{\"event\":\"\(event.rawValue)\"}"
    }
}

/// Something the session's outputs report while it runs, for its records: the alarm moved to
/// another output, or a warning (the mixer, a plugin).
public enum SessionNote: Sendable, Hashable {
    case output(AlarmOutputChange)
    case warning(String)
    /// The wake alarm is armed (see ``WakeFromSuspend``).
    case wakeAlarm(WakeAlarmArmed)
    /// What the sound server's output did or found (see ``SinkReport``).
    case sink(SinkReport)
    /// What holds the nap (`what`) and, for the desktop, where its idle time comes from.
    case hold(what: HoldSource, message: String)
    /// The nap's terminal moved it (``ForegroundKeys``).
    case terminal(JobControlNews)
    /// The nap's guardian died (``Guardianship``): `what` is `replaced` or `unguarded`.
    case guardian(what: String, message: String)
}

/// Where records and countdown updates go. The CLI implements it (stdout for JSON lines, the
/// terminal for the countdown); tests collect into memory.
public protocol SessionObserver: Sendable {
    /// A record of something that happened, in order.
    func record(_ record: SessionRecord) async
    /// The countdown changed its whole-second value (only called when the countdown is shown).
    func countdown(_ tick: CountdownTick) async
    /// The same, with a `countdown` record stamped like every other (`t`, `wall`, `countdown`).
    /// By default it calls ``countdown(_:)``.
    func countdown(_ tick: CountdownTick, stamped: SessionRecord) async
}

extension SessionObserver {
    public func countdown(_ tick: CountdownTick, stamped: SessionRecord) async {
        await countdown(tick)
    }
}

/// Where pulses go (a pulse-emitter plugin's process): never waits.
public protocol PulseSink: Sendable {
    /// Hands one pulse over without waiting; a busy or gone sink drops it.
    func emit(intensity: Double, duration: Duration)
    /// Asks the sink to stop a pulse in progress.
    func cancel()
}

/// What a countdown line shows.
public struct CountdownTick: Sendable, Equatable {
    public var phase: Phase
    /// Time left in the current phase's timer; `nil` when nothing runs down (holding, ringing
    /// without a limit).
    public var remaining: Duration?
    /// The layout chosen from the timer's configured length (SPEC §2: no flicker).
    public var layout: RemainingTimeLayout
    /// The configured length of the phase's timer, for a progress bar.
    public var total: Duration?
    /// When the alarm rings if nothing else happens (whole seconds, wall clock).
    public var wakeAt: Date?
    /// When the failsafe rings it at the latest, before the alarm (whole seconds, wall clock).
    public var latestAt: Date?

    public init(phase: Phase, remaining: Duration?, layout: RemainingTimeLayout, total: Duration? = nil,
                wakeAt: Date? = nil, latestAt: Date? = nil) {
        self.phase = phase
        self.remaining = remaining
        self.layout = layout
        self.total = total
        self.wakeAt = wakeAt
        self.latestAt = latestAt
    }

    /// Whether `other` shows the same count (phase, whole seconds, layout): a new tick is only
    /// worth a record when it does not. The wall-clock times may differ by a rounding.
    public func countsTheSame(as other: CountdownTick?) -> Bool {
        guard let other else { return false }
        return phase == other.phase && remaining == other.remaining && layout == other.layout
    }

    /// How much of the phase's timer has run, 0–1; `nil` when nothing runs down.
    public var progress: Double? {
        guard let remaining, let total, total > .zero else { return nil }
        return Swift.min(1, Swift.max(0, 1 - remaining.secondsValue / total.secondsValue))
    }

    /// `remaining` in `layout`, or an empty string.
    public var remainingText: String { remaining.map(layout.format) ?? "" }
}

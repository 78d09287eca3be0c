import Foundation
public import SnoozeFuseCore

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
    public var output: String?
    public var outcome: SessionOutcome?
    public var message: String?

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
        case event, phase, t, wall, until, reason, output, outcome, message
        case latenessMs = "lateness_ms"
    }

    /// The record as one line of JSON (no trailing newline).
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        // Encoding a struct of strings and finite numbers cannot fail.
        guard let data = try? encoder.encode(self) else { return "{\"event\":\"\(event.rawValue)\"}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Where records and countdown updates go. The CLI implements it (stdout for JSON lines, the
/// terminal for the countdown); tests collect into memory.
public protocol SessionObserver: Sendable {
    /// A record of something that happened, in order.
    func record(_ record: SessionRecord) async
    /// The countdown changed its whole-second value (only called when the countdown is shown).
    func countdown(_ tick: CountdownTick) async
}

/// What a countdown line shows.
public struct CountdownTick: Sendable, Equatable {
    public var phase: Phase
    /// Time left in the current phase's timer; `nil` when nothing runs down (holding, ringing
    /// without a limit).
    public var remaining: Duration?
    /// The layout chosen from the timer's configured length (SPEC §2: no flicker).
    public var layout: RemainingTimeLayout

    public init(phase: Phase, remaining: Duration?, layout: RemainingTimeLayout) {
        self.phase = phase
        self.remaining = remaining
        self.layout = layout
    }

    /// `remaining` in `layout`, or an empty string.
    public var remainingText: String { remaining.map(layout.format) ?? "" }
}

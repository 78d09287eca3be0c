/// Watches the proof that the alarm is heard (SPEC §9) and decides when to escalate: a pure value
/// over virtual time, like ``Session``. The output that plays feeds it each proof from a sink's
/// monitor and wakes it at ``nextDeadline``; it answers with what to report and what to do.
///
/// - Each sink's first proof is reported (`heard`, with the level and how long after the alarm
///   was due it came).
/// - A sink that was heard and then has no proof for `limit` is reported (`unheard`): the output
///   fixes its mute and volume again, or drops it when it is gone.
/// - No proof on any sink for `limit` (from the start, or from the last escalation): the next step,
///   in order: fix every sink's mute and volume again, add the other sinks, play on the sound card
///   itself (ALSA, past the server) beside the sinks, sound the fallback beside them too. Once a
///   proof comes, the card and the fallback stop (the sinks added stay); silence again plays the
///   card again, then the fallback.
/// - Sinks whose monitor cannot be read prove nothing and are not waited for: with none left, it
///   never escalates (the alarm is played but not verified, said once by the output).
/// - What the alarm itself wrote as silence cannot be proved: a long silence of its own (a file's
///   silent first seconds, a pause of a second or more, ``paused(for:at:)``) moves every deadline
///   that it falls after later by its length. What counts is 2 s of the alarm's sound without proof.
public struct HeardWatch<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    public typealias Step = EscalationStep

    public enum Effect: Sendable, Hashable {
        case heard(sink: String, level: Double, after: Duration)
        case unheard(sink: String)
        case escalate(Step)
        /// Proof is back after the card or the fallback sounded: they may stop.
        case recovered
    }

    public let due: Instant
    public let limit: Duration
    /// The sinks whose monitors are read.
    public private(set) var listening: Set<String>
    private var lastProof: [String: Instant] = [:]
    private var reportedUnheard: Set<String> = []
    private var lastAnyProof: Instant?
    private var lastEscalation: Instant?
    /// The alarm's own long silences, when each was noted and how long it is.
    private var pauses: [Pause] = []

    private struct Pause: Sendable, Hashable {
        var at: Instant
        var length: Duration
    }
    public private(set) var steps: [Step] = []

    public init(due: Instant, listening: Set<String>, limit: Duration = .seconds(2)) {
        self.due = due
        self.listening = listening
        self.limit = limit
    }

    /// The card plays beside the sinks.
    public var onCard: Bool { steps.contains(.card) }
    /// The fallback sounds beside the sinks.
    public var onFallback: Bool { steps.contains(.fallback) }

    /// How long no sink's monitor has carried the alarm, at `now`.
    public func silence(at now: Instant) -> Duration { (lastAnyProof ?? due).duration(to: now) }

    /// The alarm wrote `length` more of a long silence of its own at `now`: no monitor can carry
    /// proof of it, so the silence it makes on them does not count.
    public mutating func paused(for length: Duration, at now: Instant) {
        guard length > .zero else { return }
        pauses.append(Pause(at: now, length: length))
        // Only pauses after the oldest base that can still need them are kept.
        let oldest = ([lastAnyProof ?? due, lastEscalation ?? due] + lastProof.values).min() ?? due
        pauses.removeAll { $0.at < oldest }
    }

    /// `base`, moved later by the alarm's own long silences noted since.
    private func heldOff(_ base: Instant) -> Instant {
        pauses.reduce(base) { $1.at >= base ? $0.advanced(by: $1.length) : $0 }
    }

    /// A sink now also plays and is listened to, or no longer is.
    public mutating func listen(to sink: String) { listening.insert(sink) }

    public mutating func forget(_ sink: String) {
        listening.remove(sink)
        lastProof.removeValue(forKey: sink)
        reportedUnheard.remove(sink)
    }

    /// `sink`'s monitor carried the alarm at `level` (RMS) at `now`.
    public mutating func proof(sink: String, level: Double, at now: Instant) -> [Effect] {
        var effects: [Effect] = []
        if lastProof[sink] == nil { effects.append(.heard(sink: sink, level: level, after: max(due.duration(to: now), .zero))) }
        lastProof[sink] = now
        reportedUnheard.remove(sink)
        lastAnyProof = now
        if onCard {
            // What sounds beside the sinks stops; silence again starts it again, step by step.
            steps.removeAll { $0 == .card || $0 == .fallback }
            effects.append(.recovered)
        }
        return effects
    }

    /// When ``timeElapsed(at:)`` must run next; nil when nothing is listened to. The output asks
    /// after each change and keeps the answer: it plays, and must not work this out on every write.
    public var nextDeadline: Instant? {
        guard !listening.isEmpty else { return nil }
        var next: Instant?
        if steps.count < Step.allCases.count {
            next = heldOff(max(lastAnyProof ?? due, lastEscalation ?? due)).advanced(by: limit)
        }
        for sink in listening where !reportedUnheard.contains(sink) {
            guard let last = lastProof[sink] else { continue }
            let deadline = heldOff(last).advanced(by: limit)
            if next.map({ deadline < $0 }) ?? true { next = deadline }
        }
        return next
    }

    public mutating func timeElapsed(at now: Instant) -> [Effect] {
        guard !listening.isEmpty else { return [] }
        var effects: [Effect] = []
        for sink in listening.sorted() where !reportedUnheard.contains(sink) {
            if let last = lastProof[sink], heldOff(last).duration(to: now) >= limit {
                reportedUnheard.insert(sink)
                effects.append(.unheard(sink: sink))
            }
        }
        let quietSince = heldOff(max(lastAnyProof ?? due, lastEscalation ?? due))
        guard quietSince.duration(to: now) >= limit else { return effects }
        if let next = Step.allCases.first(where: { !steps.contains($0) }) {
            steps.append(next)
            lastEscalation = now
            effects.append(.escalate(next))
        }
        return effects
    }
}

/// The steps a nap takes, in order, when no sink's monitor proves its alarm (``HeardWatch``).
public enum EscalationStep: String, Sendable, Hashable, CaseIterable {
    case fixLevels = "fix_levels"
    case addSinks = "add_sinks"
    /// The sound card itself, through ALSA past the sound server.
    case card
    case fallback
}

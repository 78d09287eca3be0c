/// What the alarm does on a sound server's sinks while it plays (SPEC §9: played is not heard), as
/// a pure value over virtual time, like ``Session``: where it plays (``SinkRouting``), which mute
/// and volume it fixes (the alarm's own stream first, then the sink, ``SinkLevelFix``), where it
/// goes when a sink is lost, whether a block of a monitor proves it (the proof's floor,
/// ``AlarmLoudness``), and when it escalates (``HeardWatch``). `(state, event, now) → effects`:
/// the output that plays reports what it sees, and performs what comes back.
public struct SinkWatch<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public struct Settings: Sendable, Hashable {
        public var route: AlarmRoute
        /// The volume no sink the alarm plays on stays below, in percent; nil leaves every mute and
        /// volume alone, the alarm's own stream's too (`--no-fix-volume`).
        public var floorPercent: Int?
        /// How loud the alarm is meant to reach the sinks; nil: no floor (`doctor --listen`'s tone).
        public var level: AlarmLevel?
        /// What an earlier holder of this alarm changed and did not put back (a guardian, `resume`).
        public var earlierFixes: [SinkLevelFix]

        public init(route: AlarmRoute = .wake, floorPercent: Int? = SinkLevelFix.defaultFloorPercent,
                    level: AlarmLevel? = nil, earlierFixes: [SinkLevelFix] = []) {
            self.route = route
            self.floorPercent = floorPercent
            self.level = level
            self.earlierFixes = earlierFixes
        }
    }

    public let settings: Settings
    /// The server's sinks as last listed, by name, and its default sink.
    public private(set) var sinks: [String: SinkDescription] = [:]
    public private(set) var defaultSink: String?
    /// The sinks the alarm plays on now.
    public private(set) var playing: Set<String> = []
    /// Each sink as the alarm first found it: the person's own mute and volume.
    private var originals: [String: SinkDescription] = [:]
    /// What the alarm changed, to put back, by sink.
    public private(set) var fixes: [String: SinkLevelFix] = [:]
    /// Whose monitors are read.
    private var monitored: Set<String> = []
    /// Sinks said to carry the alarm too quietly (said once each).
    private var tooQuiet: Set<String> = []
    public private(set) var heard: HeardWatch<Instant>?

    public init(settings: Settings) {
        self.settings = settings
        fixes = Dictionary(settings.earlierFixes.map { ($0.sink, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// When ``handle(_:at:)`` must get `.timeElapsed` next; nil when nothing is due on time alone.
    public var nextDeadline: Instant? { heard?.nextDeadline }

    public mutating func handle(_ event: SinkEvent, at now: Instant) -> [SinkEffect] {
        switch event {
        case .opened(let listed, let defaultSink):
            note(listed, defaultSink: defaultSink)
            let decision = SinkRouting.route(listed, defaultSink: defaultSink, route: settings.route)
            guard !decision.sinks.isEmpty else { return [] }
            return [.report(.routed(sinks: decision.sinks, reasons: decision.reasons, missing: decision.missing))]
                + decision.sinks.map { .play($0) }
        case .playing(let sink, let stream, let monitor):
            return started(sink, stream: stream, monitor: monitor)
        case .sinksChanged(let listed, let changed, let defaultSink):
            let known = sinks
            note(listed, defaultSink: defaultSink)
            var effects: [SinkEffect] = []
            // `--route all` means every sink, the ones that appear while it rings too (a headset
            // plugged in, a display woken). The other routes keep the sinks they chose: what the
            // person hears already stays, and a sink lost is replaced (below).
            if settings.route == .all {
                let now = SinkRouting.route(listed, defaultSink: defaultSink, route: .all)
                for name in now.sinks where known[name] == nil && !playing.contains(name) {
                    effects += [.report(.added(sink: name, message: "sink '\(name)' appeared while the alarm rings: it plays there too (--route all)")),
                                .play(name)]
                }
            }
            for name in playing.sorted() where changed.contains(name) {
                if let sink = sinks[name] { effects += fixLevels(of: sink) }
            }
            for name in playing.sorted() where sinks[name] == nil {
                effects += lose(name, because: "was removed")
            }
            return effects
        case .streamChanged(let sink, let level):
            return fixStream(on: sink, level: level, first: false)
        case .streamFailed(let sink):
            guard playing.contains(sink) else { return [] }
            return lose(sink, because: "stopped taking the alarm's stream")
        case .started:
            heard = HeardWatch(due: now, listening: monitored)
            return []
        case .carried(let sink, let level, let writtenSeconds):
            return carried(sink, level: level, writtenSeconds: writtenSeconds, at: now)
        case .paused(let length):
            heard?.paused(for: length, at: now)
            return []
        case .timeElapsed:
            guard var watch = heard, let next = watch.nextDeadline, next <= now else { return [] }
            let effects = watch.timeElapsed(at: now)
            heard = watch
            return perform(effects, at: now)
        }
    }

    // MARK: - Streams

    private mutating func note(_ listed: [SinkDescription], defaultSink: String?) {
        sinks = Dictionary(listed.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.defaultSink = defaultSink
    }

    /// The alarm's stream on `sink` plays: its own mute and volume first (what the server restored
    /// for it), then the sink's; its monitor is listened to where it can be read.
    private mutating func started(_ sink: String, stream: StreamLevel?, monitor: MonitorReading) -> [SinkEffect] {
        playing.insert(sink)
        var effects: [SinkEffect] = []
        if let stream { effects += fixStream(on: sink, level: stream, first: true) }
        if let description = sinks[sink] {
            if originals[sink] == nil { originals[sink] = description }
            effects += fixLevels(of: description)
        }
        switch monitor {
        case .reading:
            monitored.insert(sink)
            heard?.listen(to: sink)
        case .none:
            effects.append(.report(.unverified("sink '\(sink)' has no monitor: the alarm plays there but is not verified")))
        case .unreadable:
            effects.append(.report(.unverified("the monitor of sink '\(sink)' cannot be read: the alarm plays there but is not verified")))
        }
        return effects
    }

    /// `sink` is gone (or its stream failed): the alarm goes on on the other sinks, or moves to the
    /// ones the route picks now (`wake`: the default, and the speakers past a headset or display).
    private mutating func lose(_ sink: String, because why: String) -> [SinkEffect] {
        var effects: [SinkEffect] = [.stop(sink)]
        playing.remove(sink)
        monitored.remove(sink)
        heard?.forget(sink)
        if fixes.removeValue(forKey: sink) != nil { effects.append(.fixes(allFixes)) }
        var now = playing.sorted()
        if playing.isEmpty {
            let listed = sinks.values.sorted { $0.name < $1.name }
            let decision = SinkRouting.route(listed, defaultSink: defaultSink, route: .wake)
            effects += decision.sinks.map { .play($0) }
            now = decision.sinks
        }
        effects.append(.report(.sinkLost(sink: sink, message: "sink '\(sink)' \(why); the alarm plays on \(now.isEmpty ? "no sink" : now.map { "'\($0)'" }.joined(separator: ", "))")))
        return effects
    }

    // MARK: - Levels

    /// Unmutes `sink` and raises it to the floor, keeping the person's own values to put back.
    private mutating func fixLevels(of sink: SinkDescription) -> [SinkEffect] {
        guard let floor = settings.floorPercent, playing.contains(sink.name) else { return [] }
        let (fix, unmute, raiseTo) = SinkLevelFix.plan(for: sink, original: originals[sink.name] ?? sink, floor: floor,
                                                       earlier: fixes[sink.name])
        guard unmute || raiseTo != nil else { return [] }
        if fix.changedSomething { fixes[sink.name] = fix } else { fixes.removeValue(forKey: sink.name) }
        var effects: [SinkEffect] = [.fixes(allFixes), .setSinkLevel(sink.name, unmute: unmute, volume: raiseTo)]
        if let message = SinkLevelFix.describe(sink, unmute: unmute, raiseTo: raiseTo) {
            effects.append(.report(.fixed(sink: sink.name, message: message)))
        }
        return effects
    }

    /// Unmutes the alarm's own stream on `sink` and sets it to its normal volume (100 %), when the
    /// server has it muted or lower: what module-stream-restore or WirePlumber restored for an
    /// alarm stream (`first`), or what a mixer changed while it rings. Nothing is put back: the
    /// alarm's stream is the alarm's.
    private func fixStream(on sink: String, level: StreamLevel, first: Bool) -> [SinkEffect] {
        guard settings.floorPercent != nil, playing.contains(sink), level.muted || level.volumePercent < 100 else { return [] }
        let low = level.volumePercent < 100
        let found = [level.muted ? "muted" : nil, low ? "at \(level.volumePercent) %" : nil].compactMap { $0 }
        let done = [level.muted ? "unmuted it" : nil, low ? "set it to 100 %" : nil].compactMap { $0 }
        let why = first ? " (the server restored what a mixer once set for alarm streams)" : " while it rang"
        return [.setStreamLevel(sink, unmute: level.muted, volume: low ? 100 : nil),
                .report(.streamFixed(sink: sink, message: "the alarm's own stream on sink '\(sink)' was \(found.joined(separator: " and "))\(why): \(done.joined(separator: " and "))"))]
    }

    private var allFixes: [SinkLevelFix] { fixes.values.sorted { $0.sink < $1.sink } }

    // MARK: - Proof

    /// A block of `sink`'s monitor carried the alarm at `level`: proof when it is at least the
    /// floor for the alarm's level, the fade-in where that block was written and the sink's own
    /// volume; otherwise said once for the sink, and no proof.
    private mutating func carried(_ sink: String, level: Double, writtenSeconds: Double?, at now: Instant) -> [SinkEffect] {
        guard var watch = heard else { return [] }
        if let floor = floor(for: sink, writtenSeconds: writtenSeconds), level < floor {
            guard tooQuiet.insert(sink).inserted else { return [] }
            return [.report(.unverified("sink '\(sink)' carries the alarm at \(Self.decibels(level)) dBFS, below the \(Self.decibels(floor)) dBFS an alarm must reach there (its own stream turned down, or a sound far quieter than an alarm): not heard"))]
        }
        let effects = watch.proof(sink: sink, level: level, at: now)
        heard = watch
        return perform(effects, at: now)
    }

    /// The proof's floor on `sink` for a block written `writtenSeconds` into the stream.
    public func floor(for sink: String, writtenSeconds: Double?) -> Double? {
        guard let level = settings.level, let writtenSeconds, let volume = sinks[sink]?.volumePercent else { return nil }
        return AlarmLoudness.proofFloor(volume: level.volume, fade: level.fade(atSeconds: writtenSeconds), sinkVolumePercent: volume)
    }

    private static func decibels(_ level: Double) -> String {
        level > 0 ? AlarmLoudness.tenths(20 * AlarmLoudness.logarithm(level) / AlarmLoudness.logarithm(10)) : "-inf"
    }

    /// What the watch over the monitors decided, as effects.
    private mutating func perform(_ watched: [HeardWatch<Instant>.Effect], at now: Instant) -> [SinkEffect] {
        let silent = "no sink's monitor carried the alarm for \(heard?.silence(at: now).components.seconds ?? 0) s"
        var effects: [SinkEffect] = []
        for effect in watched {
            switch effect {
            case .heard(let sink, let level, let after):
                effects.append(.report(.heard(sink: sink, level: level, after: after)))
            case .unheard(let sink):
                effects.append(.report(.unheard(sink: sink)))
                effects.append(.checkStream(sink))
                if let description = sinks[sink] { effects += fixLevels(of: description) }
            case .escalate(.fixLevels):
                effects.append(.report(.escalated(.fixLevels, message: "\(silent): fixing the alarm's streams and every sink's mute and volume again")))
                effects += playing.sorted().map { .checkStream($0) }
                effects.append(.rereadSinks)
            case .escalate(.addSinks):
                let others = sinks.values.filter { !playing.contains($0.name) && !$0.isUnplugged }.map(\.name).sorted()
                effects.append(.report(.escalated(.addSinks, message: others.isEmpty
                    ? "\(silent), and the server has no other sink"
                    : "\(silent): it plays on \(others.map { "'\($0)'" }.joined(separator: ", ")) too")))
                effects += others.map { .play($0) }
            case .escalate(.card):
                effects.append(.report(.escalated(.card, message: "\(silent): the sound card itself (ALSA \(AlarmChain<Instant>.hardware), past the sound server) plays it too")))
            case .escalate(.fallback):
                effects.append(.report(.escalated(.fallback, message: "\(silent): the fallback sounds beside the sound server")))
            case .recovered:
                effects.append(.report(.recovered))
            }
        }
        // A sink unheard when every sink is checked again is checked once.
        var seen: Set<SinkEffect> = []
        return effects.filter { seen.insert($0).inserted }
    }
}

/// What a sound-server output reports to its ``SinkWatch``.
public enum SinkEvent: Sendable, Hashable {
    /// The server's sinks and its default, as listed when the output opened: where to play.
    case opened(sinks: [SinkDescription], defaultSink: String?)
    /// The alarm's stream plays on `sink` now, at the level the server gave it (nil: not read),
    /// and whether its monitor is read.
    case playing(sink: String, stream: StreamLevel?, monitor: MonitorReading)
    /// The sinks as the server lists them after it said they changed (`changed`: the names it
    /// said, or every sink played on after ``SinkEffect/rereadSinks``).
    case sinksChanged(sinks: [SinkDescription], changed: Set<String>, defaultSink: String?)
    /// The alarm's stream on `sink` has this level now (a mixer changed it, or it was checked).
    case streamChanged(sink: String, level: StreamLevel)
    /// The stream on `sink` stopped taking the alarm.
    case streamFailed(sink: String)
    /// The first frames are written: the alarm is due now.
    case started
    /// A block of `sink`'s monitor carried what was written, at `level` RMS, written
    /// `writtenSeconds` into the stream.
    case carried(sink: String, level: Double, writtenSeconds: Double?)
    /// For `length` no monitor could carry the alarm: it wrote a long silence of its own, or its
    /// monitors began recording only that long after its first write (a nap taken over after its
    /// deadline opens its streams as it rings, not 2 s before). That time is not silence.
    case paused(Duration)
    /// The watch's deadline passed.
    case timeElapsed
}

/// What a ``SinkWatch`` asks of the output that plays.
public enum SinkEffect: Sendable, Hashable {
    /// Say this (an event of the nap).
    case report(SinkReport)
    /// Open a stream (and a recording of its monitor) on the sink, and report `.playing` (or
    /// `.streamFailed` when it cannot).
    case play(String)
    /// Close the sink's stream and its monitor.
    case stop(String)
    /// Unmute the sink, and set its volume (percent) when given.
    case setSinkLevel(String, unmute: Bool, volume: Int?)
    /// Unmute the alarm's stream on the sink, and set its volume (percent) when given.
    case setStreamLevel(String, unmute: Bool, volume: Int?)
    /// Read the level of the alarm's stream on the sink, and report `.streamChanged`.
    case checkStream(String)
    /// List the sinks again, and report `.sinksChanged` with every sink played on as changed.
    case rereadSinks
    /// What the alarm changed and must put back, all of it, each time it changes.
    case fixes([SinkLevelFix])
}

/// Whether a sink's monitor is read.
public enum MonitorReading: String, Sendable, Hashable {
    case reading
    /// The sink has none.
    case none
    /// It has one that cannot be recorded.
    case unreadable
}

/// The mute and volume of one of the alarm's streams, as the server has them.
public struct StreamLevel: Sendable, Hashable {
    public var muted: Bool
    /// The loudest channel's volume in percent of normal (100 = 0 dB).
    public var volumePercent: Int

    public init(muted: Bool, volumePercent: Int) {
        self.muted = muted
        self.volumePercent = volumePercent
    }
}

/// The level the alarm is played at, for the floor of the proof: `--volume` (linear) and the
/// fade-in, from `startingAt` into the alarm (where a reopened stream takes it up again).
public struct AlarmLevel: Sendable, Hashable {
    public var volume: Double
    public var fadeIn: Duration
    public var startingAt: Duration

    public init(volume: Double, fadeIn: Duration, startingAt: Duration = .zero) {
        self.volume = volume
        self.fadeIn = fadeIn
        self.startingAt = startingAt
    }

    /// The fade-in's factor `seconds` into this stream: the alarm's equal-power curve,
    /// sin(π/2 · min(t / fadeIn, 1)).
    public func fade(atSeconds seconds: Double) -> Double {
        let (whole, attoseconds) = fadeIn.components
        let length = Double(whole) + Double(attoseconds) / 1e18
        let (start, startAtto) = startingAt.components
        let elapsed = Double(start) + Double(startAtto) / 1e18 + seconds
        guard length > 0 else { return 1 }
        return Trigonometry.sine(Double.pi / 2 * min(max(elapsed / length, 0), 1))
    }
}

/// What the sound server's output tells while it plays (each becomes an event of the nap).
public enum SinkReport: Sendable, Hashable {
    /// The sinks it plays on and why.
    case routed(sinks: [String], reasons: [String], missing: [String])
    /// A sink was muted or too quiet and was fixed (`message` says what was found and done).
    case fixed(sink: String, message: String)
    /// The alarm's own stream on a sink was muted or below its normal volume (restored so by the
    /// server, or changed in a mixer while it rings) and was fixed.
    case streamFixed(sink: String, message: String)
    /// The person's own mute and volume are back (`message`), or could not be put back.
    case restored(sink: String, message: String)
    /// The person changed a sink since the alarm fixed it: it is left as it is (``SinkLevelFix/changedSince(_:)``).
    case leftAlone(sink: String, message: String)
    /// Its monitor carries the alarm: `level` RMS, `after` the alarm was due.
    case heard(sink: String, level: Double, after: Duration)
    /// It had carried the alarm and has not for 2 s.
    case unheard(sink: String)
    /// No sink proved the alarm for 2 s: the next step.
    case escalated(EscalationStep, message: String)
    /// Proof is back after the card or the fallback sounded beside the sinks.
    case recovered
    /// A sink it played on went away; `message` says where the alarm plays now.
    case sinkLost(sink: String, message: String)
    /// A sink appeared while it rings and the route takes it (`--route all`).
    case added(sink: String, message: String)
    /// Said once: the alarm plays but cannot be verified (`message` says why).
    case unverified(String)
}

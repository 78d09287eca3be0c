/// The lengths that drive a session. Values, not deadlines: deadlines are computed from these when
/// each phase begins.
public struct SessionTimers: Sendable, Hashable {
    /// How long after the hold ends until the nap begins.
    public var release: Duration
    /// How long the nap lasts.
    public var nap: Duration
    /// The failsafe: the alarm rings at `start + max` at the latest.
    public var max: Duration
    /// The default snooze length when a snooze names none.
    public var snooze: Duration
    /// How long the alarm rings before it stops by itself; `nil` rings until dismissed.
    public var ringLimit: Duration?

    public init(
        release: Duration,
        nap: Duration,
        max: Duration,
        snooze: Duration = .seconds(5 * 60),
        ringLimit: Duration? = nil
    ) {
        self.release = release
        self.nap = nap
        self.max = max
        self.snooze = snooze
        self.ringLimit = ringLimit
    }

    /// True when the max failsafe ends the nap before release + nap have run (SPEC §2: the session
    /// still runs, and says so once).
    public var maxEndsNapEarly: Bool { max < release + nap }

    /// Problems that make these timers unusable, each naming the timer; empty when usable.
    public var problems: [String] {
        var found = [(Field.release, release), (.nap, nap), (.max, max), (.snooze, snooze)].compactMap { Self.problem($0, $1) }
        if let ringLimit, let problem = Self.problem(.ringLimit, ringLimit) { found.append(problem) }
        return found
    }

    /// The timers, for ``problem(_:_:)``.
    public enum Field: Sendable, Hashable {
        case release, nap, max, snooze, ringLimit
    }

    /// What makes `value` unusable as the timer `field` (naming the timer), or nil when it is usable:
    /// the one check of a timer's length, for flags, settings and presets alike.
    public static func problem(_ field: Field, _ value: Duration) -> String? {
        switch field {
        case .release: value < .zero ? "release must not be negative" : nil
        case .nap: value < .zero ? "nap must not be negative" : nil
        case .max: value <= .zero ? "max must be longer than zero (it is the failsafe that rings the alarm)" : nil
        case .snooze: value <= .zero ? "snooze must be longer than zero" : nil
        case .ringLimit: value <= .zero ? "ring limit must be longer than zero" : nil
        }
    }
}

/// A named set of timers. The built-ins are always there; users save their own.
public struct Preset: Sendable, Hashable {
    public var name: String
    public var timers: SessionTimers
    public var summary: String

    public init(name: String, timers: SessionTimers, summary: String) {
        self.name = name
        self.timers = timers
        self.summary = summary
    }

    /// The default: release 30 s, nap 20 min, max 30 min.
    public static let basic = Preset(
        name: "basic",
        timers: SessionTimers(release: .seconds(30), nap: .seconds(20 * 60), max: .seconds(30 * 60)),
        summary: "the default nap: 30s release, 20m nap, 30m failsafe"
    )

    /// A short cycle for trying things out: release 2 s, nap 5 s, max 15 s.
    public static let quickTest = Preset(
        name: "quick-test",
        timers: SessionTimers(release: .seconds(2), nap: .seconds(5), max: .seconds(15)),
        summary: "a 7-second cycle for trying the alarm: 2s release, 5s nap, 15s failsafe"
    )

    /// The presets that ship with the program, in the order they are listed.
    public static let builtIn: [Preset] = [.basic, .quickTest]

    /// The built-in preset called `name`, if there is one.
    public static func builtIn(named name: String) -> Preset? {
        builtIn.first { $0.name == name }
    }
}

public import Foundation
public import SnoozeFuseCore
public import SnoozeFuseSystem

/// An instant as a live session saves it: wall-clock time (for people, and after a reboot, when
/// the boot-time clock started over) and CLOCK_BOOTTIME (exact across suspend, on this boot).
public struct SavedInstant: Codable, Sendable, Hashable {
    /// ISO 8601, to the millisecond.
    public var wall: String
    /// Seconds since 1970.
    public var wallSeconds: Double
    /// Seconds since boot (CLOCK_BOOTTIME), valid while `LiveSessionState.bootID` is this boot's.
    public var bootSeconds: Double

    public init(_ instant: BootInstant, now: BootInstant, wallNow: Date) {
        let wallTime = wallNow.timeIntervalSince1970 + now.duration(to: instant).secondsValue
        wall = WallClockText.iso8601(secondsSince1970: wallTime)
        wallSeconds = wallTime
        bootSeconds = instant.sinceBoot.secondsValue
    }

    /// The instant on this boot's clock: exact when saved on this boot, otherwise from the wall clock.
    public func instant(sameBoot: Bool, now: BootInstant, wallNow: Date) -> BootInstant {
        if sameBoot { return BootInstant(sinceBoot: .nanoseconds(Int64((bootSeconds * 1e9).rounded()))) }
        return now.advanced(by: .nanoseconds(Int64(((wallSeconds - wallNow.timeIntervalSince1970) * 1e9).rounded())))
    }
}

/// How the alarm of a nap is set up, as much as a guardian or `resume` needs to ring the same
/// alarm again (built-in outputs and sounds only: a plugin's sound becomes the built-in sound).
public struct SavedAlarmSetup: Codable, Sendable, Hashable {
    /// The sound file to play (a built-in's or the user's), or nil for the synthesized tone.
    public var soundPath: String?
    /// What the person chose (`--sound`), for messages.
    public var soundName: String
    public var device: String
    public var volume: Int
    public var fadeInSeconds: Double
    public var systemVolume: Int?
    public var ringLimitSeconds: Double?
    public var snoozeSeconds: Double
    /// The timers, for a resumed session's countdown layout.
    public var releaseSeconds: Double
    public var napSeconds: Double
    public var maxSeconds: Double
    public var presetName: String
    /// How the alarm is stopped for good (`--dismiss`); nil in live state written before it was kept.
    public var dismissal: DismissMode?
    /// `--route` (nil in live state written before it was kept: `wake`).
    public var route: String?
    /// `--fix-volume` (nil: true).
    public var fixesVolume: Bool?
    /// `--plain` or TERM=dumb: whoever takes the alarm over writes plain lines to the nap's
    /// terminal, never moving its cursor (nil: false).
    public var plain: Bool?

    public var timers: SessionTimers {
        SessionTimers(release: .milliseconds(Int64(releaseSeconds * 1000)), nap: .milliseconds(Int64(napSeconds * 1000)),
                      max: .milliseconds(Int64(maxSeconds * 1000)), snooze: .milliseconds(Int64(snoozeSeconds * 1000)),
                      ringLimit: ringLimitSeconds.map { .milliseconds(Int64($0 * 1000)) })
    }
}

/// The live state of a running nap (SPEC §9): written atomically at every change, so a guardian,
/// `status`, another terminal or `resume` after a reboot always read a whole one.
public struct LiveSessionState: Codable, Sendable, Hashable {
    /// The most a live state file may hold (one is about 2 KiB; its sink fixes add a few hundred
    /// bytes a sink): a larger file is damaged, never read into memory.
    public static let largestFile = 1 << 20

    /// Who holds the alarm.
    public enum Holder: String, Codable, Sendable, Hashable {
        /// The nap's own process.
        case nap
        /// The guardian took it over when the nap's process died.
        case guardian
        /// `snoozefuse resume` took it up after nobody held it.
        case resume
    }

    public struct SavedAlarm: Codable, Sendable, Hashable {
        public var due: SavedInstant
        public var reason: AlarmReason
    }

    public static let currentVersion = 1

    public var version = LiveSessionState.currentVersion
    /// The process that holds the alarm now.
    public var pid: Int32
    public var holder: Holder
    /// The guardian that watches the nap's process.
    public var guardianPid: Int32?
    /// `/proc/sys/kernel/random/boot_id` when it was written.
    public var bootID: String
    public var phase: Phase
    public var started: SavedInstant?
    /// What the alarm rings at if nobody does anything (see `Session.alarmToKeep`).
    public var alarm: SavedAlarm?
    /// When the current phase's timer runs out, and how long it was set for (for displays).
    public var phaseEnds: SavedInstant?
    public var phaseSeconds: Double?
    /// The failsafe, while it still applies.
    public var maxDeadline: SavedInstant?
    /// While ringing: when this ring began (whoever takes the alarm over continues it, its ring
    /// limit counted from here and its fade-in not played again).
    public var ringingSince: SavedInstant?
    public var snoozes: Int
    /// The terminal went away; the nap goes on without it.
    public var detached: Bool
    /// The nap's terminal (`/dev/pts/N`), where a guardian shows its alarm too.
    public var terminal: String?
    public var setup: SavedAlarmSetup
    public var updated: SavedInstant
    /// What the history will record of the nap, so far (absent in states of earlier releases).
    public var history: NapHistoryFacts?
    /// The mute and volume the alarm changed on the sound server's sinks, to put back: whoever
    /// holds the alarm next (a guardian, `resume`) puts them back when it stops.
    public var sinkFixes: [SinkLevelFix]?

    /// The JSON of the file. Written with Core's JSONValueEncoder, not JSONEncoder: a nap writes
    /// it at every change while it naps and rings, and JSONEncoder's pages were 0.8 MiB of a
    /// ringing nap's memory (issue 23). JSONDecoder reads it as it reads JSONEncoder's.
    public func encoded() -> [UInt8] {
        // Plain values, finite numbers: encoding cannot fail.
        Array(((try? JSONValueEncoder().encode(self)) ?? "").utf8)
    }

    /// The state in `data`, or nil when it is not a nap's live state (``read(_:)`` says why).
    public static func decode(_ data: Data) -> LiveSessionState? {
        try? read([UInt8](data))
    }

    /// The state in `bytes`, read by hand with Core's JSONFields: what JSONDecoder reads from the
    /// same bytes (tested on thousands of variations), or the member that is not a live state's.
    /// Not JSONDecoder: `status` reads the state every time a status bar asks, and JSONDecoder's
    /// first use was a fifth of its instructions; nor Codable through Core's JSONValueDecoder,
    /// whose generic containers were a fifth still (issue 23).
    /// A number beyond what a nap writes (``LiveStateRange``) is refused as well, naming it.
    public static func read(_ bytes: [UInt8]) throws(JSONFieldError) -> LiveSessionState {
        let fields = try JSONFields(parsing: bytes)
        let state = try LiveSessionState(fields)
        try LiveStateRange.check(document: .object(fields.members))
        return state
    }

    /// The state of `session` at `now`.
    public init(session: Session<BootInstant>, now: BootInstant, wallNow: Date, pid: Int32, holder: Holder,
                guardianPid: Int32?, bootID: String, terminal: String?, setup: SavedAlarmSetup, history: NapHistoryFacts? = nil) {
        func saved(_ instant: BootInstant?) -> SavedInstant? { instant.map { SavedInstant($0, now: now, wallNow: wallNow) } }
        self.pid = pid
        self.holder = holder
        self.guardianPid = guardianPid
        self.bootID = bootID
        phase = session.phase
        started = saved(session.startedAt)
        alarm = session.alarmToKeep(now: now).map { SavedAlarm(due: SavedInstant($0.due, now: now, wallNow: wallNow), reason: $0.reason) }
        let ends: BootInstant? = switch session.phase {
        case .releasing: session.releaseDeadline
        case .napping: session.expectedAlarm
        case .ringing: session.ringLimitDeadline
        case .snoozed: session.snoozeDeadline
        case .holding: session.maxDeadline
        case .ready, .finished, .cancelled: nil
        }
        phaseEnds = saved(ends)
        phaseSeconds = session.currentTimerLength?.secondsValue
        maxDeadline = saved(session.maxDeadline)
        ringingSince = session.phase == .ringing ? saved(session.ringStartedAt) : nil
        snoozes = max(session.ringCount - 1, 0)
        detached = session.detached
        self.terminal = terminal
        self.setup = setup
        updated = SavedInstant(now, now: now, wallNow: wallNow)
        self.history = history
    }
}

/// This boot's identity (`/proc/sys/kernel/random/boot_id`): boot-time instants saved under another
/// are meaningless.
public func currentBootID() -> String {
    guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return "unknown" }
    // The standard library's whitespace, not Foundation's trimming: its first use costs `status`
    // 0.5 M instructions (callgrind, issue 23).
    var id = Substring(text)
    while id.last?.isWhitespace == true { id.removeLast() }
    while id.first?.isWhitespace == true { id.removeFirst() }
    return String(id)
}

// MARK: - Read by hand (see LiveSessionState.read): every member a synthesized Decodable reads,
// required or optional as it takes it. A test checks that the state of the test with every member
// really has each one, so a member added to a type and not here is noticed.

extension SavedInstant {
    init(_ fields: JSONFields) throws(JSONFieldError) {
        wall = try fields.string("wall")
        wallSeconds = try fields.double("wallSeconds")
        bootSeconds = try fields.double("bootSeconds")
    }

    static func read(_ fields: JSONFields, _ key: String) throws(JSONFieldError) -> SavedInstant {
        try SavedInstant(try fields.object(key))
    }

    static func read(_ fields: JSONFields, ifPresent key: String) throws(JSONFieldError) -> SavedInstant? {
        guard let object = try fields.object(ifPresent: key) else { return nil }
        return try SavedInstant(object)
    }
}

extension SavedAlarmSetup {
    init(_ fields: JSONFields) throws(JSONFieldError) {
        soundPath = try fields.string(ifPresent: "soundPath")
        soundName = try fields.string("soundName")
        device = try fields.string("device")
        volume = try fields.int("volume")
        fadeInSeconds = try fields.double("fadeInSeconds")
        systemVolume = try fields.int(ifPresent: "systemVolume")
        ringLimitSeconds = try fields.double(ifPresent: "ringLimitSeconds")
        snoozeSeconds = try fields.double("snoozeSeconds")
        releaseSeconds = try fields.double("releaseSeconds")
        napSeconds = try fields.double("napSeconds")
        maxSeconds = try fields.double("maxSeconds")
        presetName = try fields.string("presetName")
        dismissal = try fields.choice(ifPresent: "dismissal", DismissMode.init(rawValue:))
        route = try fields.string(ifPresent: "route")
        fixesVolume = try fields.bool(ifPresent: "fixesVolume")
        plain = try fields.bool(ifPresent: "plain")
    }
}

extension LiveSessionState {
    init(_ fields: JSONFields) throws(JSONFieldError) {
        // In the order of the type's members, as a synthesized Decodable reads them.
        version = try fields.int("version")
        pid = try fields.int32("pid")
        holder = try fields.choice("holder", Holder.init(rawValue:))
        guardianPid = try fields.int32(ifPresent: "guardianPid")
        bootID = try fields.string("bootID")
        phase = try fields.choice("phase", Phase.init(rawValue:))
        started = try SavedInstant.read(fields, ifPresent: "started")
        alarm = try fields.object(ifPresent: "alarm").map { (alarm) throws(JSONFieldError) in
            SavedAlarm(due: try SavedInstant.read(alarm, "due"), reason: try alarm.choice("reason", AlarmReason.init(rawValue:)))
        }
        phaseEnds = try SavedInstant.read(fields, ifPresent: "phaseEnds")
        phaseSeconds = try fields.double(ifPresent: "phaseSeconds")
        maxDeadline = try SavedInstant.read(fields, ifPresent: "maxDeadline")
        ringingSince = try SavedInstant.read(fields, ifPresent: "ringingSince")
        snoozes = try fields.int("snoozes")
        detached = try fields.bool("detached")
        terminal = try fields.string(ifPresent: "terminal")
        setup = try SavedAlarmSetup(try fields.object("setup"))
        updated = try SavedInstant.read(fields, "updated")
        history = try fields.object(ifPresent: "history").map { (history) throws(JSONFieldError) in try NapHistoryFacts(history) }
        sinkFixes = try fields.objects(ifPresent: "sinkFixes").map { (fixes) throws(JSONFieldError) in
            var read: [SinkLevelFix] = []
            for fix in fixes {
                read.append(SinkLevelFix(sink: try fix.string("sink"), mutedBefore: try fix.bool(ifPresent: "mutedBefore"),
                                         volumeBefore: try fix.int(ifPresent: "volumeBefore"), volumeSet: try fix.int(ifPresent: "volumeSet")))
            }
            return read
        }
    }
}

extension NapHistoryFacts {
    /// The facts as a live state keeps them (its CodingKeys: `origin` is not among them).
    init(_ fields: JSONFields) throws(JSONFieldError) {
        napID = try fields.string("napID")
        holder = try fields.string("holder")
        holdMode = try fields.bool("holdMode")
        hold = try fields.string(ifPresent: "hold")
        idleAfter = try fields.double(ifPresent: "idleAfter")
        sound = try fields.string(ifPresent: "sound")
        preset = try fields.string(ifPresent: "preset")
        created = try fields.double("created")
        started = try fields.double(ifPresent: "started")
        fellAsleep = try fields.double(ifPresent: "fellAsleep")
        napping = try fields.double(ifPresent: "napping")
        firstRing = try fields.double(ifPresent: "firstRing")
        reason = try fields.string(ifPresent: "reason")
        latenessMs = try fields.double(ifPresent: "latenessMs")
        output = try fields.string(ifPresent: "output")
        rungBy = try fields.string(ifPresent: "rungBy")
        takenOverBy = try fields.string(ifPresent: "takenOverBy")
        snoozes = try fields.int("snoozes")
        outcome = try fields.string(ifPresent: "outcome")
        ended = try fields.double(ifPresent: "ended")
        lastRelease = try fields.double(ifPresent: "lastRelease")
    }
}

// MARK: - Ranges

extension LiveSessionState {
    /// Throws for the first number beyond what a nap writes (Core's ``LiveStateRange``, the table
    /// the JSON fuzz target checks too), naming it.
    public func checkRanges() throws(JSONFieldError) {
        try LiveStateRange.check(document: (try? JSONValue(parsing: encoded())) ?? .null)
    }
}

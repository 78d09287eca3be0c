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

    public var timers: SessionTimers {
        SessionTimers(release: .milliseconds(Int64(releaseSeconds * 1000)), nap: .milliseconds(Int64(napSeconds * 1000)),
                      max: .milliseconds(Int64(maxSeconds * 1000)), snooze: .milliseconds(Int64(snoozeSeconds * 1000)),
                      ringLimit: ringLimitSeconds.map { .milliseconds(Int64($0 * 1000)) })
    }
}

/// The live state of a running nap (SPEC §9): written atomically at every change, so a guardian,
/// `status`, another terminal or `resume` after a reboot always read a whole one.
public struct LiveSessionState: Codable, Sendable, Hashable {
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

    /// The state in `data`, or nil when it is not a nap's live state. Read with Core's
    /// JSONValueDecoder, not JSONDecoder: `status` reads it every time a status bar asks, and
    /// JSONDecoder's first use was a fifth of its instructions (issue 23).
    public static func decode(_ data: Data) -> LiveSessionState? {
        try? JSONValueDecoder().decode(LiveSessionState.self, from: [UInt8](data))
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

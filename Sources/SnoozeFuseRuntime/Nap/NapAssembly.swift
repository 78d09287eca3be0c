import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseSystem

/// Where a nap is started, read once by the program that starts it and passed in as a value: its
/// environment and what its standard descriptors are. Nothing of a nap's set-up reads them itself.
public struct NapSurroundings: Sendable, Hashable {
    public var environment: [String: String]
    /// In the foreground of its terminal (true), in its background (`&`: false), or on none (nil).
    public var foreground: Bool?
    /// Standard input is a terminal (a key can hold the nap).
    public var inputIsTerminal: Bool
    /// The terminal of its standard descriptors (`/dev/pts/3`), where a guardian shows its alarm too.
    public var terminalName: String?

    public init(environment: [String: String], foreground: Bool?, inputIsTerminal: Bool, terminalName: String?) {
        self.environment = environment
        self.foreground = foreground
        self.inputIsTerminal = inputIsTerminal
        self.terminalName = terminalName
    }

    /// This process's.
    public static func current() -> NapSurroundings {
        var terminal: String?
        for fd in [STDIN_FILENO, STDERR_FILENO, STDOUT_FILENO] where isatty(fd) == 1 {
            if let name = ttyname(fd) {
                terminal = String(cString: name)
                break
            }
        }
        return NapSurroundings(environment: ProcessInfo.processInfo.environment, foreground: ForegroundKeys.isForeground(),
                               inputIsTerminal: isatty(STDIN_FILENO) == 1, terminalName: terminal)
    }
}

/// How one nap is held, decided before anything of it starts: what ``LiveNap``'s one set-up builds
/// the nap's ports (``NapPorts``) from. One assembler per way a nap is held: ``fresh(_:sound:surroundings:created:)``,
/// ``guardian(_:ringAt:reason:now:wallNow:sameBoot:files:)`` and ``resume(_:ringAt:reason:now:wallNow:sameBoot:surroundings:files:)``:
/// plain values from plain values, so each hand-over is table-tested.
struct NapAssembly: Sendable {
    var configuration: NapConfiguration
    /// What the alarm plays (before the set-up holds it open and checks it is loud enough).
    var sound: AlarmSound
    var holder: LiveSessionState.Holder
    /// Its plugins run (a fresh nap's); a nap taken over rings the built-in way.
    var usesPlugins: Bool
    /// Keys come from this process's terminal.
    var readsKeys: Bool
    /// The terminal the bell is written to, when it is not this process's own (a taken-over nap's).
    var bellTerminal: String?
    /// The terminal the live state names.
    var savedTerminal: String?
    /// Where the session starts: fresh (nil), or the alarm taken up again.
    var initialSession: Session<BootInstant>?
    /// What an earlier holder changed on the sinks and did not put back.
    var sinkFixes: [SinkLevelFix]
    var history: NapHistoryFacts

    /// The nap's own process: it runs the user's hooks and has a guardian; a taken-over nap has neither.
    var isFresh: Bool { holder == .nap }

    /// What the file system says of the sounds a taken-over nap may play: whether the saved
    /// sound can still be read, and the default built-in sound's path.
    struct SoundFiles: Sendable {
        var readable: @Sendable (String) -> Bool
        var builtIn: String?

        static let onDisk = SoundFiles(readable: { (try? AlarmSoundChoice.check(.file(path: $0))) != nil },
                                       builtIn: BuiltInSounds.locate()?.path(named: BuiltInSounds.defaultName))
    }

    /// A new nap: its hold as its surroundings allow (in the background of its terminal no key can
    /// hold it), its plugins, keys from its terminal when it has one.
    static func fresh(_ given: NapConfiguration, sound: AlarmSound, surroundings: NapSurroundings, created: Double) -> NapAssembly {
        var configuration = given
        if surroundings.foreground == false, configuration.hold == .key { configuration.hold = .none }
        let history = NapHistoryFacts(holder: LiveSessionState.Holder.nap.rawValue, holdMode: configuration.holdMode,
                                      hold: configuration.hold.rawValue,
                                      idleAfter: configuration.hold == .desktop ? configuration.idleAfter.secondsValue : nil,
                                      sound: configuration.source.map { "source \($0)" } ?? configuration.sound ?? BuiltInSounds.defaultName,
                                      preset: configuration.presetName, created: created)
        return NapAssembly(configuration: configuration, sound: sound, holder: .nap, usesPlugins: true, readsKeys: true,
                           bellTerminal: nil, savedTerminal: surroundings.terminalName, initialSession: nil, sinkFixes: [],
                           history: history)
    }

    /// The guardian taking over the nap whose process died: no terminal of its own (the bell goes
    /// to the nap's), no keys, no plugins.
    static func guardian(_ live: LiveSessionState, ringAt: BootInstant, reason: AlarmReason, now: BootInstant, wallNow: Date,
                         sameBoot: Bool, files: SoundFiles) -> NapAssembly {
        takenOver(live, by: .guardian, ringAt: ringAt, reason: reason, now: now, wallNow: wallNow, sameBoot: sameBoot,
                  readsKeys: false, files: files)
    }

    /// `resume` taking up a nap nobody held: keys from its terminal (none when it has none: started
    /// at login), its bell on the nap's old terminal if that is still there, no plugins.
    static func resume(_ live: LiveSessionState, ringAt: BootInstant, reason: AlarmReason, now: BootInstant, wallNow: Date,
                       sameBoot: Bool, surroundings: NapSurroundings, files: SoundFiles) -> NapAssembly {
        var assembly = takenOver(live, by: .resume, ringAt: ringAt, reason: reason, now: now, wallNow: wallNow, sameBoot: sameBoot,
                                 readsKeys: true, files: files)
        // A nap that had no terminal is shown, from now on, on resume's own.
        assembly.savedTerminal = live.terminal ?? surroundings.terminalName
        // Plain as the nap was, or as resume's own terminal asks (TERM=dumb).
        if surroundings.environment["TERM"] == "dumb" { assembly.configuration.movesCursor = false }
        return assembly
    }

    /// What a guardian and `resume` share: the same alarm from the saved set-up, rung for `reason`
    /// at `ringAt` (at once when it has passed); one that was ringing goes on (its ring limit from
    /// its first ring, no second fade-in); a plugin's sound or a file that is gone becomes the
    /// built-in sound.
    private static func takenOver(_ live: LiveSessionState, by holder: LiveSessionState.Holder, ringAt: BootInstant, reason: AlarmReason,
                                  now: BootInstant, wallNow: Date, sameBoot: Bool, readsKeys: Bool, files: SoundFiles) -> NapAssembly {
        let setup = live.setup
        let ringingSince = live.phase == .ringing ? live.ringingSince?.instant(sameBoot: sameBoot, now: now, wallNow: wallNow) : nil
        let fadeIn: Duration = live.phase == .ringing ? .zero : .milliseconds(Int64(setup.fadeInSeconds * 1000))
        let configuration = NapConfiguration(
            timers: setup.timers, presetName: setup.presetName, hold: .none, sound: setup.soundPath,
            volume: setup.volume, fadeIn: fadeIn, device: setup.device,
            systemVolume: setup.systemVolume, route: setup.route.flatMap(AlarmRoute.init(parsing:)) ?? .wake,
            fixesVolume: setup.fixesVolume ?? true, dismissal: setup.dismissal ?? .word, movesCursor: setup.plain != true)
        var sound: AlarmSound = .builtInTone
        if let path = setup.soundPath, files.readable(path) {
            sound = .file(path: path)
        } else if let builtIn = files.builtIn {
            sound = .file(path: builtIn)
        }
        var facts = live.historyFacts
        facts.takeOver(by: holder.rawValue)
        return NapAssembly(configuration: configuration, sound: sound, holder: holder, usesPlugins: false, readsKeys: readsKeys,
                           bellTerminal: live.terminal, savedTerminal: live.terminal,
                           initialSession: Session<BootInstant>(timers: setup.timers, resumingAlarmAt: ringAt, reason: reason,
                                                                at: now, ringingSince: ringingSince),
                           sinkFixes: live.sinkFixes ?? [], history: facts)
    }
}

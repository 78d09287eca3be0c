import Foundation
import SnoozeFuseCore
import SnoozeFuseSoundLibrary

/// Every setting of a nap, one per `nap` flag (`--dry-run` and `--json` ask for an action and are
/// not settings). One key names the flag (`--ring-limit`), its environment variable
/// (`SNOOZEFUSE_RING_LIMIT`), the setting (`snoozefuse config set ring-limit 5m`) and a preset's
/// value, and one parser (``parse(_:)``) reads it from all of them: a value is accepted or refused,
/// with the same message, wherever it comes from.
public enum NapSettingKey: String, CaseIterable, Sendable, Hashable, Comparable {
    case preset
    case release, nap, max
    case ringLimit = "ring-limit"
    case snooze, sound, volume
    case fadeIn = "fade-in"
    case device
    case systemVolume = "system-volume"
    case route
    case fixVolume = "fix-volume"
    case source, emitter, bpm
    case sleepSound = "sleep-sound"
    case sleepVolume = "sleep-volume"
    case sleepDevice = "sleep-device"
    case dismiss
    case hold
    case idleAfter = "idle-after"
    case noHold = "no-hold"
    case quiet, verbose, events

    /// The setting called `name` (a key, or its flag with the dashes: `--nap`), if there is one.
    public init?(named name: String) {
        self.init(rawValue: name.hasPrefix("--") ? String(name.dropFirst(2)) : name)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// `--ring-limit`.
    public var flag: String { "--" + rawValue }

    /// `SNOOZEFUSE_RING_LIMIT`. A list (`SNOOZEFUSE_EMITTER`) holds one value a line.
    public var environmentVariable: String {
        "SNOOZEFUSE_" + rawValue.uppercased().split(separator: "-").joined(separator: "_")
    }

    /// Whether the setting holds several values (`--emitter` is repeated).
    public var isList: Bool { self == .emitter }

    /// Whether a preset may hold it: the timers and the alarm's choices; not the preset itself, and
    /// not how a nap starts or shows itself (`no-hold`, `quiet`, `verbose`, `events`).
    public var isPresetValue: Bool { ![.preset, .hold, .noHold, .quiet, .verbose, .events].contains(self) }

    /// The settings a preset may hold, in order.
    public static var presetKeys: [NapSettingKey] { allCases.filter(\.isPresetValue) }

    /// What the flag's value is, for help texts (`duration`, `percent` …); nil for a switch.
    public var valueName: String? {
        switch self {
        case .preset: "name"
        case .release, .nap, .max, .ringLimit, .snooze, .fadeIn, .idleAfter: "duration"
        case .sound: "name|path"
        case .volume, .systemVolume, .sleepVolume: "percent"
        case .device, .sleepDevice: "pcm"
        case .route: "default|wake|all|sink[,sink]"
        case .fixVolume: "true|false"
        case .source, .emitter, .sleepSound: "id[:key=value,...]"
        case .bpm: "n"
        case .events: "format"
        case .dismiss: "how"
        case .hold: "key|desktop|none"
        case .noHold, .quiet, .verbose: nil
        }
    }

    /// What the setting does: the flag's help, and `config list`'s description.
    public var help: String {
        switch self {
        case .preset: "The preset to start from: \(Preset.builtIn.map(\.name).joined(separator: ", ")) or one you saved (`snoozefuse presets list`); as a setting, the default preset."
        case .release: "How long after you let go until the nap starts."
        case .nap: "How long the nap lasts."
        case .max: "Failsafe: the alarm rings at most this long after the start."
        case .ringLimit: "Stop ringing by itself after this long (default: ring until stopped)."
        case .snooze: "How long a snooze lasts (s while ringing, or `snoozefuse snooze`)."
        case .sound: "The alarm sound: a built-in's name (\(SoundLibrary.reservedNames.joined(separator: ", ")); default: \(BuiltInSounds.defaultName)), an imported sound's name, or a sound file to loop (WAV, AIFF, CAF, FLAC, Ogg, MP3; a FIFO, folder or device is refused, exit 66)."
        case .volume: "Alarm volume, 1–100 (linear amplitude)."
        case .fadeIn: "Fade the alarm in over this long (equal-power curve)."
        case .device: "ALSA PCM to play on; if it fails, `default`, then the terminal bell."
        case .systemVolume: "The alarm's volume floor on the sound server's sinks (default \(SinkLevelFix.defaultFloorPercent)), 1–100: a sink below it is raised while the alarm sounds; on a plain ALSA device, the mixer (Master, PCM or Speaker) is set to it. Restored after."
        case .route: "Where the alarm plays on a sound server: wake (the default sink, and the speakers too when it is a headset, headphones or Bluetooth), default (the default sink only), all, or sink names."
        case .fixVolume: "Unmute and raise the sinks the alarm plays on while it sounds, and undo a mute made while it rings (false: leave them as they are); restored after."
        case .source: "Play the alarm from a sound-source plugin (`snoozefuse plugins list`); the built-in tone takes over if it fails or crashes."
        case .emitter: "Send the heartbeat (while you hold) and the alarm pattern (while it rings) to a pulse-emitter plugin (repeatable)."
        case .bpm: "Heartbeat for emitters while you hold, in beats per minute (40–120)."
        case .sleepSound: "Play a sound-source plugin while you drift off and nap, e.g. noise or noise:color=brown; it fades out and falls silent 3 s before the alarm. If it fails you nap in silence."
        case .sleepVolume: "Sleep sound volume, 0–100, applied on top of the plugin's own level (noise: volume=0.3)."
        case .sleepDevice: "ALSA PCM for the sleep sound (default: the alarm's --device)."
        case .hold: "What holds the nap before the release: key (a key held down in this terminal; the default), desktop (you using the machine: any key or pointer input in the desktop session; the release starts after --idle-after without input; no terminal needed), or none (the release timer starts at once, as --no-hold)."
        case .idleAfter: "With --hold desktop: how long without any input until the release starts (1s–10m)."
        case .noHold: "Start the release timer at once instead of waiting for a hold (the same as --hold none; for scripts)."
        case .dismiss: "How a ringing alarm is stopped for good: word (type the word shown), hold (hold a key for 3 s) or key (one Enter, space or d)."
        case .quiet: "Show no status area or progress messages; warnings, the alarm and the word that stops it still appear."
        case .verbose: "Show each device error whole on the terminal (the status area shortens them to one line; --events always has them whole)."
        case .events: "Write machine-readable events to standard output: jsonl (one JSON object per line)."
        }
    }

    /// The value when no flag, variable, preset or setting gives one; nil for "none" (no ring
    /// limit, no plugin …). The timers' come from the `basic` preset, the default preset's default.
    public var builtInDefault: NapSettingValue? {
        switch self {
        case .preset: .text(Preset.basic.name)
        case .release: .duration(Preset.basic.timers.release)
        case .nap: .duration(Preset.basic.timers.nap)
        case .max: .duration(Preset.basic.timers.max)
        case .snooze: .duration(Preset.basic.timers.snooze)
        case .volume: .number(80)
        case .fadeIn: .duration(.seconds(10))
        case .device: .text("default")
        case .route: .text(AlarmRoute.wake.description)
        case .fixVolume: .flag(true)
        case .bpm: .number(60)
        case .sleepVolume: .number(60)
        case .dismiss: .text(DismissMode.word.rawValue)
        case .hold: .text(HoldSource.key.rawValue)
        case .idleAfter: .duration(.seconds(10))
        case .noHold, .quiet, .verbose: .flag(false)
        case .ringLimit, .sound, .systemVolume, .source, .sleepSound, .sleepDevice, .emitter, .events: nil
        }
    }

    /// What having no value means, for people.
    public var noneDescription: String {
        switch self {
        case .ringLimit: "none (rings until stopped)"
        case .sound: "none (the built-in \(BuiltInSounds.defaultName))"
        case .systemVolume: "none (the alarm's sinks raised to at least \(SinkLevelFix.defaultFloorPercent) % on a sound server; an ALSA card's mixer left as it is)"
        case .sleepDevice: "none (the alarm's device)"
        default: "none"
        }
    }

    /// Reads `values` as this setting (one value, or any number for a list): the one check of a
    /// value, for flags, the environment, settings and presets alike.
    public func parse(_ values: [String]) throws(NapSettingError) -> NapSettingValue {
        if isList {
            for value in values where !PluginCatalog.isSpec(value) {
                throw NapSettingError(self, "\"\(value)\" is not a plugin: expected ID or ID:key=value,...")
            }
            return .list(values)
        }
        guard values.count == 1, let text = values.first else {
            throw NapSettingError(self, "\(flag) takes one value, not \(values.count)")
        }
        return try parse(text)
    }

    /// Reads one value (see ``parse(_:)``).
    public func parse(_ text: String) throws(NapSettingError) -> NapSettingValue {
        switch self {
        case .idleAfter:
            let duration: Duration
            do { duration = try DurationParser.parse(text) } catch { throw NapSettingError(self, "\(flag): \(error.description)") }
            guard duration >= .seconds(1), duration <= .seconds(600) else {
                throw NapSettingError(self, "--idle-after must be 1s to 10m, not \(duration.compactDescription): shorter would release between two keystrokes, longer is a nap of its own (use --release for that).")
            }
            return .duration(duration)
        case .hold:
            guard HoldSource(rawValue: text) != nil else {
                throw NapSettingError(self, "--hold: \"\(text)\" is not a hold; use key (a key held in this terminal), desktop (your use of the machine) or none.")
            }
            return .text(text)
        case .release, .nap, .max, .ringLimit, .snooze, .fadeIn:
            let duration: Duration
            do { duration = try DurationParser.parse(text) } catch { throw NapSettingError(self, "\(flag): \(error.description)") }
            let field: SessionTimers.Field? = switch self {
            case .release: .release
            case .nap: .nap
            case .max: .max
            case .ringLimit: .ringLimit
            case .snooze: .snooze
            default: nil
            }
            if let field, let problem = SessionTimers.problem(field, duration) { throw NapSettingError(self, problem) }
            return .duration(duration)
        case .volume:
            let volume = try number(text)
            guard (1 ... 100).contains(volume) else {
                throw NapSettingError(self, volume == 0
                    ? "--volume 0 would make the alarm silent: an alarm must be heard. Use 1–100 (1 is the quietest)."
                    : "--volume must be 1–100, not \(volume).")
            }
            return .number(volume)
        case .systemVolume:
            let percent = try number(text)
            guard (1 ... 100).contains(percent) else {
                throw NapSettingError(self, percent == 0
                    ? "--system-volume 0 would make the alarm silent: an alarm must be heard. Use 1–100 (the sinks are raised to at least this while it sounds)."
                    : "--system-volume must be 1–100, not \(percent).")
            }
            return .number(percent)
        case .route:
            guard AlarmRoute(parsing: text) != nil else {
                throw NapSettingError(self, "--route: \"\(text)\" is not a route; use default, wake, all, or sink names separated by commas (`pactl list short sinks` lists them).")
            }
            return .text(text)
        case .sleepVolume:
            let percent = try number(text)
            guard (0 ... 100).contains(percent) else { throw NapSettingError(self, "\(flag) must be 0–100, not \(percent).") }
            return .number(percent)
        case .bpm:
            let bpm = try number(text)
            guard (40 ... 120).contains(bpm) else { throw NapSettingError(self, "--bpm \(bpm) is out of range: use 40 to 120 beats per minute.") }
            return .number(bpm)
        case .device, .sleepDevice:
            guard !text.isEmpty else { throw NapSettingError(self, "\(flag) needs a PCM name (`snoozefuse devices` lists them).") }
            return .text(text)
        case .sound:
            guard !text.isEmpty else { throw NapSettingError(self, "--sound needs a sound's name or a file's path.") }
            return .text(text)
        case .preset:
            guard !text.isEmpty else { throw NapSettingError(self, "--preset needs a preset's name (`snoozefuse presets list` shows them).") }
            return .text(text)
        case .source, .sleepSound, .emitter:
            guard PluginCatalog.isSpec(text) else { throw NapSettingError(self, "\"\(text)\" is not a plugin: expected ID or ID:key=value,...") }
            return isList ? .list([text]) : .text(text)
        case .dismiss:
            guard DismissMode(rawValue: text) != nil else {
                throw NapSettingError(self, "--dismiss: \"\(text)\" is not a way to stop the alarm; use \(DismissMode.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return .text(text)
        case .noHold, .quiet, .verbose, .fixVolume:
            switch text.lowercased() {
            case "true", "yes", "on", "1": return .flag(true)
            case "false", "no", "off", "0": return .flag(false)
            default: throw NapSettingError(self, "\(flag) is true or false (also yes/no, on/off, 1/0), not \"\(text)\".")
            }
        case .events:
            guard text == "jsonl" else { throw NapSettingError(self, "--events: \"\(text)\" is not an event format; the one there is: jsonl.") }
            return .text(text)
        }
    }

    private func number(_ text: String) throws(NapSettingError) -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw NapSettingError(self, "\(flag) takes a whole number, not \"\(text)\".")
        }
        return value
    }
}

/// A setting's value, read by ``NapSettingKey/parse(_:)``.
public enum NapSettingValue: Sendable, Hashable {
    case duration(Duration)
    case number(Int)
    case text(String)
    case flag(Bool)
    case list([String])

    /// The value as it is stored and shown: `30s`, `80`, `true`, one text per item of a list.
    public var texts: [String] {
        switch self {
        case .duration(let duration): [duration.compactDescription]
        case .number(let number): ["\(number)"]
        case .text(let text): [text]
        case .flag(let flag): [flag ? "true" : "false"]
        case .list(let items): items
        }
    }

    /// The value for people: a list's items separated by `; ` (plugin settings hold commas).
    public var description: String { texts.joined(separator: "; ") }

    public var duration: Duration? { if case .duration(let value) = self { value } else { nil } }
    public var number: Int? { if case .number(let value) = self { value } else { nil } }
    public var text: String? { if case .text(let value) = self { value } else { nil } }
    public var flag: Bool? { if case .flag(let value) = self { value } else { nil } }
    public var list: [String] { if case .list(let items) = self { items } else { texts } }
}

/// A value a setting refuses, and why (the message names the flag where that helps).
public struct NapSettingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var key: NapSettingKey
    public var message: String

    public init(_ key: NapSettingKey, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { message }
}

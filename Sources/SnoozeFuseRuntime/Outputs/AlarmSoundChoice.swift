import Foundation
public import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseSoundLibrary

/// Why a nap or a preview cannot start, with the lines that say so (each naming the file, device
/// or plugin, and what to do) and the kind of problem (the CLI's exit status).
public struct NapSetupError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A bad flag or value (exit 64).
        case usage
        /// A sound that cannot be decoded (exit 65).
        case badData
        /// A file, sound or plugin that is not there (exit 66).
        case missingInput
        /// A configuration a plugin refuses, an unusable library (exit 78).
        case badConfiguration
        /// Something of the program itself is missing (exit 70).
        case internalError
        /// Another nap is running (exit 75).
        case alreadyRunning
    }

    public var kind: Kind
    public var lines: [String]

    public init(_ kind: Kind, _ lines: [String]) {
        self.kind = kind
        self.lines = lines
    }

    public var description: String { lines.joined(separator: "\n") }
}

/// The alarm sound a `--sound` argument names: a file path (it contains a `/` or ends in a sound
/// file extension), a built-in sound's name, or an imported sound's name. Without an argument, the
/// default built-in (`beep`); if the built-in sounds are missing altogether, the synthesized tone,
/// with a notice. An unknown name lists the names there are (exit 66). The built-in folder is looked
/// for only when the argument is not a path.
public enum AlarmSoundChoice {
    public static func resolve(_ argument: String?, builtIns locate: @autoclosure () -> BuiltInSounds? = BuiltInSounds.locate(),
                               notice: (String) -> Void) throws(NapSetupError) -> AlarmSound {
        if let argument, BuiltInSounds.isPath(argument) {
            return .file(path: argument)
        }
        let builtIns = locate()
        let name = argument ?? BuiltInSounds.defaultName
        if let builtIns, let path = builtIns.path(named: name) {
            return .file(path: path)
        }
        if argument != nil, let path = try importedSoundPath(named: name) {
            return .file(path: path)
        }
        guard let argument else {
            let missing = builtIns.map { "there is no \(name).\(BuiltInSounds.fileExtension) in \($0.folder.path)" }
                ?? "no built-in sounds folder (looked in \(BuiltInSounds.candidateFolders(executable: BuiltInSounds.runningExecutable).map(\.path).joined(separator: ", ")))"
            notice("\(missing); using the synthesized alarm tone.")
            return .builtInTone
        }
        let known = builtIns?.names ?? []
        let list = known.isEmpty ? "no built-in sounds are installed" : "built-in sounds: \(known.joined(separator: ", "))"
        throw NapSetupError(.missingInput, ["no sound named \"\(argument)\" (\(list); `snoozefuse sounds list` shows your imported ones); for a file in this folder, write ./\(argument)."])
    }

    /// Checks, before anything starts, that `sound` opens and decodes (exit 66 when missing, 65 when
    /// it is not sound that can be decoded).
    public static func check(_ sound: AlarmSound) throws(NapSetupError) {
        do {
            try sound.validate()
        } catch {
            throw NapSetupError(error.isMissingInput ? .missingInput : .badData, ["\(error)"])
        }
    }

    /// How much of a sound is listened to before a nap for whether it can be heard.
    public static let audibilityWindow = Duration.seconds(60)

    /// The sound the alarm plays and how it is raised or lowered to the alarm's loudness
    /// (``AlarmLoudness``, measured over its first minute): `sound`, unless that minute peaks below
    /// −50 dBFS at `volume` once brought to the alarm's loudness (a silent file, or one too quiet
    /// even raised 40 dB); then the built-in default sound (the synthesized tone when the
    /// built-ins are missing), with a warning that says why. A sound whose loudness cannot be
    /// measured plays as it is, with a warning.
    public static func audible(_ sound: AlarmSound, volume: Int,
                               builtIns locate: @autoclosure () -> BuiltInSounds? = BuiltInSounds.locate())
        -> (sound: AlarmSound, warning: String?, loudness: SoundLoudness?) {
        guard let measured = try? sound.measure(within: SoundLoudness.window) else { return (sound, nil, nil) }
        let raised = measured.loudness.map { Float(AlarmLoudness.factor($0.alarmGain.decibels)) } ?? 1
        let level = measured.peak * raised * Float(volume) / 100
        guard level < AlarmRenderer.silenceThreshold else {
            let unmeasured = measured.loudnessFailure.map { "the loudness of the alarm sound \(sound) cannot be measured (\($0)): it plays as it is, not at the alarm's loudness" }
            return (sound, unmeasured, measured.loudness)
        }
        let replacement: AlarmSound = locate()?.path(named: BuiltInSounds.defaultName).map { .file(path: $0) } ?? .builtInTone
        let peak = measured.peak
        let heard = peak == 0 ? "is silent" : "peaks at \(decibels(peak)) dBFS" + (raised > 1 ? ", \(decibels(peak * raised)) dBFS raised as far as it goes" : "")
            + (volume < 100 && peak > 0 ? " (\(decibels(level)) dBFS at --volume \(volume))" : "")
        let window = audibilityWindow.components.seconds
        return (replacement, "the alarm sound \(sound) \(heard) in its first \(window) s: too quiet to wake anyone (below -50 dBFS); the alarm plays the built-in sound \(replacement == .builtInTone ? "tone" : BuiltInSounds.defaultName) instead", nil)
    }

    private static func decibels(_ amplitude: Float) -> String {
        let value = 20 * log10(Double(amplitude))
        return String(Int(value.rounded()))
    }

    /// The file of an imported sound called `name`, for `--sound NAME` (nil when there is none).
    /// Never waits on another process; an index that cannot be read is reported with its cause (exit
    /// 78), since the sound may be there.
    static func importedSoundPath(named name: String) throws(NapSetupError) -> String? {
        do {
            return try SoundLibrary.importedSoundPath(named: name)
        } catch {
            throw NapSetupError(error.kind == .storage ? .badConfiguration : .missingInput, [error.message])
        }
    }
}

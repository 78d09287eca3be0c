import ArgumentParser
import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseRuntime

/// The alarm sound flags `nap` and `sounds play` share.
struct AlarmAudioOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The alarm sound: a built-in's name (beep, chime, rising, digital, gentle; default: beep), an imported sound's name, or a sound file to loop (WAV, AIFF, CAF, FLAC, Ogg, MP3; a FIFO, folder or device is refused, exit 66).", valueName: "name|path"))
    var sound: String?

    @Option(help: ArgumentHelp("Alarm volume, 0–100 (linear amplitude).", valueName: "percent"))
    var volume: Int = 80

    @Option(name: .customLong("fade-in"), help: ArgumentHelp("Fade the alarm in over this long (equal-power curve).", valueName: "duration"), transform: parseDurationOption)
    var fadeIn: Duration = .seconds(10)

    @Option(help: ArgumentHelp("ALSA PCM to play on; if it fails, `default`, then the terminal bell.", valueName: "pcm"))
    var device: String = "default"

    @Option(name: .customLong("system-volume"), help: ArgumentHelp("Set the system volume (ALSA mixer Master, PCM or Speaker) to this while the alarm sounds; restored after.", valueName: "percent"))
    var systemVolume: Int?

    func validate() throws {
        guard (0 ... 100).contains(volume) else {
            throw ValidationError("--volume must be 0–100, not \(volume).")
        }
        if let systemVolume, !(0 ... 100).contains(systemVolume) {
            throw ValidationError("--system-volume must be 0–100, not \(systemVolume).")
        }
        if device.isEmpty {
            throw ValidationError("--device needs a PCM name (`snoozefuse devices` lists them).")
        }
    }

    /// The playback settings, after checking the sound file; a bad file is reported on standard
    /// error and exits 66 (missing) or 65 (bad data).
    func playbackSettings(duration: Duration? = nil) throws -> AlarmPlaybackSettings {
        let sound = try chooseAlarmSound(sound)
        try checkSound(sound)
        return AlarmPlaybackSettings(sound: sound, gain: AlarmGain(percent: volume, fadeIn: fadeIn), duration: duration)
    }
}

/// Checks that `sound` opens and decodes; on failure says why (path and reason) and exits 66 or 65.
func checkSound(_ sound: AlarmSound) throws {
    do {
        try sound.validate()
    } catch {
        writeLine("snoozefuse: \(error)", to: STDERR_FILENO)
        throw error.isMissingInput ? ExitStatus.missingInput : ExitStatus.badData
    }
}

/// An output change as an `output` record (`t` from `origin`, the session's start).
func outputRecord(_ change: AlarmOutputChange, origin: ContinuousClock.Instant) -> SessionRecord {
    record(.output, origin: origin, output: change.output, message: change.message)
}

/// A record stamped now (`t` from `origin`).
func record(_ kind: SessionRecord.Kind, origin: ContinuousClock.Instant, output: String?, message: String? = nil) -> SessionRecord {
    let t = origin.duration(to: .now).secondsValue
    return SessionRecord(
        event: kind, t: (t * 1000).rounded() / 1000,
        wall: WallClockText.iso8601(secondsSince1970: Date().timeIntervalSince1970),
        output: output, message: message)
}

struct Sounds: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage and preview alarm sounds.",
        subcommands: [List.self, Import.self, Validate.self, Remove.self, Rename.self, Play.self, Export.self]
    )

    struct Play: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a sound as the alarm would (same device chain, volume and fade).",
            discussion: """
            Exits 66 when the file is missing or not a regular file (a FIFO, a folder or a device is \
            refused at once), 65 when it is not sound libsndfile can decode, 78 when a name is not \
            found and the library's index cannot be read.
            Examples:
              snoozefuse sounds play rooster.wav --duration 5s
              snoozefuse sounds play chime.caf --device file:FILE=preview.wav,FORMAT=wav
            """
        )

        @Argument(help: ArgumentHelp("A built-in sound's name or a sound file (omit for the synthesized tone).", valueName: "name|path"))
        var path: String?

        @Option(help: ArgumentHelp("How long to play (default: one pass of the file, at most 30s; 3s for the built-in tone).", valueName: "duration"), transform: parseDurationOption)
        var duration: Duration?

        @Option(help: ArgumentHelp("Volume, 0–100.", valueName: "percent"))
        var volume: Int = 80

        @Option(name: .customLong("fade-in"), help: ArgumentHelp("Fade in over this long.", valueName: "duration"), transform: parseDurationOption)
        var fadeIn: Duration = .zero

        @Option(help: ArgumentHelp("ALSA PCM to play on; if it fails, `default`, then the terminal bell.", valueName: "pcm"))
        var device: String = "default"

        @Option(help: ArgumentHelp("Write output changes as JSON lines to standard output: jsonl.", valueName: "format"))
        var events: EventFormat?

        func validate() throws {
            guard (0 ... 100).contains(volume) else {
                throw ValidationError("--volume must be 0–100, not \(volume).")
            }
        }

        func run() async throws {
            let sound: AlarmSound = try path.map { try chooseAlarmSound($0) } ?? .builtInTone
            try checkSound(sound)
            var length = Duration.seconds(3)
            if case .file(let path) = sound, let info = try? SoundFile(readingAtPath: path).info {
                length = min(info.duration, .seconds(30))
            }
            let playFor = duration ?? length
            let settings = AlarmPlaybackSettings(sound: sound, gain: AlarmGain(percent: volume, fadeIn: fadeIn))
            let bell = TerminalBellAlarm(isTerminal: isatty(STDERR_FILENO) == 1, usesColour: false, hint: "(preview)")
            // As in a nap: the player's tasks on a thread of their own, its sleeps on the boot clock.
            let executor = SerialThreadExecutor(name: "snoozefuse-play")
            let clock = BootTimeClock()
            let output = AudioAlarmOutput(device: device, settings: settings, fallback: bell,
                                          scheduling: AlarmScheduling(clock: clock, executor: executor))
            let origin = ContinuousClock.now
            let jsonLines = events == .jsonl
            // Records are made only when they are printed.
            let changes = Task(executorPreference: executor) {
                for await change in output.outputChanges {
                    if jsonLines { writeLine(outputRecord(change, origin: origin).jsonLine(), to: STDOUT_FILENO) }
                    writeLine("snoozefuse: \(change.message)", to: STDERR_FILENO)
                }
            }
            let report = await output.start(reason: .nap)
            for fallback in report.fallbacks {
                if jsonLines { writeLine(record(.output, origin: origin, output: report.output, message: fallback).jsonLine(), to: STDOUT_FILENO) }
                writeLine("snoozefuse: \(fallback)", to: STDERR_FILENO)
            }
            if jsonLines {
                var started = record(.alarm, origin: origin, output: report.output)
                started.latenessMs = report.lateness.map { ($0.secondsValue * 1_000_000).rounded() / 1000 }
                writeLine(started.jsonLine(), to: STDOUT_FILENO)
            }
            writeLine("snoozefuse: playing \(sound) on \(report.output) for \(playFor.compactDescription)", to: STDERR_FILENO)
            try? await clock.sleep(for: ContinuousClock.now.duration(to: origin.advanced(by: playFor)))
            await output.stop()
            await output.finish()
            await changes.value
        }
    }
}

import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

struct Sounds: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds",
        abstract: "Manage and preview alarm sounds.",
        subcommands: [List.self, Import.self, Validate.self, Remove.self, Rename.self, Play.self, Export.self]
    )

    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play",
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

        @Argument(help: ArgumentHelp("A built-in sound's name or a sound file (omit for the synthesized tone).", valueName: "name|path"),
                  completion: .custom { _, _, prefix in CompletionNames.sounds(prefix: prefix) })
        var path: String?

        @Option(help: ArgumentHelp("How long to play (default: one pass of the file, at most 30s; 3s for the built-in tone).", valueName: "duration"), transform: parseDurationOption)
        var duration: Duration?

        @Option(parsing: .unconditional, help: ArgumentHelp("Volume, 0–100.", valueName: "percent"))
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

    }
}

extension Sounds.Play: LoopCommand {
    func run(on loop: EventLoop) async throws {
        let preview: SoundPreview
        do throws(NapSetupError) {
            preview = try SoundPreview(sound: path, volume: volume, fadeIn: fadeIn, device: device, duration: duration,
                                       loop: loop) { writeLine("snoozefuse: \($0)", to: STDERR_FILENO) }
        } catch {
            throw ExitStatus.reporting(error)
        }
        let jsonLines = events == .jsonl
        async let played: Void = preview.run()
        for await record in preview.records {
            if jsonLines { writeLine(record.jsonLine(), to: STDOUT_FILENO) }
            switch record.event {
            case .output: writeLine("snoozefuse: \(record.message ?? "")", to: STDERR_FILENO)
            case .alarm:
                writeLine("snoozefuse: playing \(preview.soundDescription) on \(record.output ?? "?") for \(preview.length.compactDescription)", to: STDERR_FILENO)
            default: break
            }
        }
        await played
    }
}

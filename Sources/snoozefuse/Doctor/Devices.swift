import ArgumentParser
import Foundation
import SnoozeFuseRuntime

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List ALSA playback devices and whether each opens.",
        discussion: """
        Each PCM that can play is opened for playback and closed again at once. Pass the name to \
        --device. A PCM that does not answer within 1s (its sound server stopped or hung) is \
        listed as failing with ETIMEDOUT. Exits 69 when the PCMs cannot be listed.
        Example: snoozefuse devices --json | jq '.[] | select(.opens)'
        """
    )

    @Flag(help: "Write a JSON array to standard output.")
    var json = false

    func run() throws {
        let entries: [AudioDevice]
        do {
            entries = try DeviceListing.list()
        } catch {
            writeLine("snoozefuse: \(error)", to: STDERR_FILENO)
            throw ExitStatus.unavailable
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(entries)
            writeLine(String(decoding: data, as: UTF8.self), to: STDOUT_FILENO)
            return
        }
        for entry in entries {
            let state = switch entry.opens {
            case true?: "opens"
            case false?: "fails: \(entry.error ?? "")"
            case nil: "not probed (\(entry.direction))"
            }
            let description = (entry.description ?? "").replacingOccurrences(of: "\n", with: " — ")
            writeLine("\(entry.name)\t\(state)\t\(description)", to: STDOUT_FILENO)
        }
    }
}

import ArgumentParser
import Foundation
import SnoozeFuseAudio

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
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

    struct Entry: Encodable {
        var name: String
        var description: String?
        var direction: String
        var opens: Bool?
        var error: String?
    }

    func run() throws {
        // Some plugins' libraries (libjack) print to fd 2 by themselves while probing: keep it quiet.
        let devices: [ALSAPCMDevice]
        do {
            devices = try withQuietStandardError { () throws(ALSAError) in try ALSADeviceList.pcmDevices(probe: true) }
        } catch {
            writeLine("snoozefuse: \(error)", to: STDERR_FILENO)
            throw ExitStatus.unavailable
        }
        let entries = devices.map { device -> Entry in
            var entry = Entry(name: device.name, description: device.description, direction: device.direction.rawValue)
            switch device.probe {
            case .notProbed: break
            case .opens: entry.opens = true
            case .fails(let error):
                entry.opens = false
                entry.error = "\(error.code)"
                if error.code == .timedOut, let detail = error.detail {
                    entry.error? += " (\(detail))"
                } else if error.kind == .noSuchDevice || error.kind == .noSoundServer {
                    entry.error? += " (\(error.kind))"
                }
            }
            return entry
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

/// Runs `body` with file descriptor 2 pointed at /dev/null, restoring it after.
func withQuietStandardError<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    fflush(nil)
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY)
    if saved >= 0, null >= 0 { dup2(null, STDERR_FILENO) }
    if null >= 0 { close(null) }
    defer {
        fflush(nil)
        if saved >= 0 {
            dup2(saved, STDERR_FILENO)
            close(saved)
        }
    }
    return try body()
}

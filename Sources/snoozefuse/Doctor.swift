import ArgumentParser
import Foundation
import SnoozeFuseRuntime

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check everything that decides whether an alarm will be heard.",
        discussion: """
        Opens each audio output (1s each) and reads the system volume, takes and releases a \
        keep-awake inhibitor on the system bus, tries a wake-from-suspend timer \
        (CAP_WAKE_ALARM) and looks for the real-time clock, checks the plugin folders and the \
        store. Each line gives a verdict (ok, warning, problem), what was found and the fix. \
        Warnings leave the alarm audible; problems do not. Exits 0 when an alarm would be \
        heard, 69 when it would not.
        Example: snoozefuse doctor --device pulse
        """
    )

    @Option(help: "The output the nap would use first (as nap --device).")
    var device = "default"

    @Flag(help: "Write one JSON object (checks, audible) to standard output.")
    var json = false

    func run() throws {
        let report = NapDoctor.examine(device: device)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            writeLine(String(decoding: try encoder.encode(report), as: UTF8.self), to: STDOUT_FILENO)
        } else {
            let width = report.checks.map(\.check.count).max() ?? 0
            for check in report.checks {
                let name = check.check.padding(toLength: width, withPad: " ", startingAt: 0)
                writeLine("\(check.verdict.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(name)  \(check.detail)", to: STDOUT_FILENO)
                if let fix = check.fix { writeLine("        \(String(repeating: " ", count: width))  fix: \(fix)", to: STDOUT_FILENO) }
            }
            writeLine(report.audible ? "An alarm would be heard." : "An alarm would NOT be heard: fix the problems above.", to: STDOUT_FILENO)
        }
        if !report.audible { throw ExitStatus.unavailable }
    }
}

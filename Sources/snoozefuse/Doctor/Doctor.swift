import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check everything that decides whether an alarm will be heard.",
        discussion: """
        Asks the sound server (PulseAudio or PipeWire) for its sinks and reports each: mute, \
        volume, form factor and bus, and whether the nap's routing (--route) plays the alarm \
        there; with --listen it plays a short test tone on those sinks (their mute and volume \
        left as they are) and reports whether each sink's monitor gave it back, and how loud. \
        Opens each ALSA output (1s each) and, without a sound server, reads the system volume; \
        takes and releases a keep-awake inhibitor on the system bus, tries a wake-from-suspend \
        timer (CAP_WAKE_ALARM) and looks for the real-time clock, checks the plugin folders and \
        the store. Each line gives a verdict (ok, warning, problem), what was found and the fix. \
        Warnings leave the alarm audible; problems do not. Exits 0 when an alarm would be \
        heard, 69 when it would not. The device, route, fix-volume and system-volume (the floor \
        the sinks are raised to) come from the options, then SNOOZEFUSE_* variables, --preset and \
        `config set`, as for a nap.
        Examples: snoozefuse doctor --listen
                  snoozefuse doctor --route default --no-fix-volume
                  snoozefuse doctor --device pulse
        """
    )

    @Option(help: "The preset the nap would start from (as nap --preset); its device, route, fix-volume and system-volume count.")
    var preset: String?

    @Option(help: "The output the nap would use first (as nap --device); the sound server's sinks are examined only for default.")
    var device: String?

    @Option(help: "Where the nap would play on the sound server (as nap --route): default, wake, all or SINK[,SINK...].")
    var route: String?

    @Flag(name: .customLong("no-fix-volume"), help: "As nap --no-fix-volume: a muted or quiet sink counts as silent.")
    var noFixVolume = false

    @Flag(help: "Play a short test tone on the routed sinks and read it back from their monitors (at most 3 s).")
    var listen = false

    @Flag(help: "Write one JSON object (checks, audible, sinks) to standard output.")
    var json = false

    /// The options as nap flags: with the environment, the preset and the configuration they
    /// decide the device, route, fix-volume and floor the way they decide a nap's.
    var flags: [NapSettingKey: [String]] {
        var flags: [NapSettingKey: [String]] = [:]
        if let preset { flags[.preset] = [preset] }
        if let device { flags[.device] = [device] }
        if let route { flags[.route] = [route] }
        if noFixVolume { flags[.fixVolume] = ["false"] }
        return flags
    }

    func validate() throws {
        try checkSettingFlags(flags)
    }

    func run() throws {
        let nap = try resolveNapSettings(flags: flags).configuration(showsCountdown: false, usesColour: false)
        let report = NapDoctor.examine(device: nap.device, route: nap.route, fixesVolume: nap.fixesVolume,
                                       floorPercent: nap.systemVolume ?? SinkLevelFix.defaultFloorPercent, listen: listen)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            writeLine(String(decoding: try encoder.encode(report), as: UTF8.self), to: STDOUT_FILENO)
        } else {
            let width = report.checks.map(\.check.count).max() ?? 0
            for check in report.checks {
                let name = padded(check.check, to: width)
                writeLine("\(padded(check.verdict.rawValue, to: 7)) \(name)  \(check.detail)", to: STDOUT_FILENO)
                // An ok check needs no fix: what it adds is a tip.
                if let fix = check.fix {
                    writeLine("        \(String(repeating: " ", count: width))  \(check.verdict == .ok ? "tip" : "fix"): \(fix)", to: STDOUT_FILENO)
                }
            }
            writeLine(report.audible ? "An alarm would be heard." : "An alarm would NOT be heard: fix the problems above.", to: STDOUT_FILENO)
        }
        if !report.audible { throw ExitStatus.unavailable }
    }
}

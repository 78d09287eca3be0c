import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

struct Nap: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take a nap and wake to an alarm.",
        discussion: """
        The session runs release → nap → alarm. The release timer gives you time to drift off; \
        the nap timer is the nap itself; the max timer is a failsafe that rings the alarm at the \
        latest max after the start, whatever else happens. With --no-hold the release timer \
        starts at once.

        Durations: \(DurationParser.acceptedForms).
        Presets: \(Preset.builtIn.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")). \
        Flags override the preset.

        Keys on the terminal. Before the nap: hold any key while you drift off (not with \
        --no-hold). While napping or snoozed: + and - move the alarm by a minute (never closer \
        than 10 s); q then y cancels. While ringing: s snoozes (--snooze, default 5m); stopping \
        for good takes a waking mind (--dismiss): word (the default) shows a short word to type \
        and confirm with Enter, and a wrong word keeps ringing; hold wants a key held down for \
        3 s; key stops at one Enter, space or d (scripts; trust yourself). `snoozefuse stop` \
        from another terminal asks the same. Ctrl-C cancels at any time (exit 130).

        Examples:
          snoozefuse nap --no-hold
          snoozefuse nap --no-hold --nap 25m --max 40m --ring-limit 5m
          snoozefuse nap --preset quick-test --no-hold --events jsonl | jq .
          snoozefuse nap --no-hold --sound rooster.wav --volume 60 --fade-in 30s
          snoozefuse nap --sleep-sound noise:color=brown --sleep-volume 40

        The alarm plays on --device (an ALSA PCM; `snoozefuse devices` lists them), else on \
        `default`, else on the terminal bell: it never fails silently. Without --sound it plays the \
        built-in sound beep; --sound NAME picks another built-in (beep, chime, rising, digital, \
        gentle) and --sound PATH a file. A sound file is checked before the nap begins.
        """
    )

    @Option(help: ArgumentHelp("How long after you let go until the nap starts.", valueName: "duration"), transform: parseDurationOption)
    var release: Duration?

    @Option(help: ArgumentHelp("How long the nap lasts.", valueName: "duration"), transform: parseDurationOption)
    var nap: Duration?

    @Option(help: ArgumentHelp("Failsafe: the alarm rings at most this long after the start.", valueName: "duration"), transform: parseDurationOption)
    var max: Duration?

    @Option(help: ArgumentHelp("Timer preset: \(Preset.builtIn.map(\.name).joined(separator: ", ")).", valueName: "name"))
    var preset: String = Preset.basic.name

    @Option(name: .customLong("ring-limit"), help: ArgumentHelp("Stop ringing by itself after this long (default: ring until stopped).", valueName: "duration"), transform: parseDurationOption)
    var ringLimit: Duration?

    @Option(help: ArgumentHelp("How long a snooze lasts (s while ringing, or `snoozefuse snooze`).", valueName: "duration"), transform: parseDurationOption)
    var snooze: Duration?

    @Option(help: ArgumentHelp("How a ringing alarm is stopped for good: word (type the word shown), hold (hold a key for 3 s) or key (one Enter, space or d).", valueName: "how"))
    var dismiss: DismissChoice = .word

    @Flag(name: .customLong("no-hold"), help: "Start the release timer at once instead of waiting for a held key (for scripts; needed when standard input is not a terminal).")
    var noHold = false

    @Option(help: ArgumentHelp("Write machine-readable events to standard output: jsonl (one JSON object per line).", valueName: "format"))
    var events: EventFormat?

    @Flag(help: "Show no status area or progress messages; warnings, the alarm and the word that stops it still appear.")
    var quiet = false

    @Flag(help: "Show each device error whole on the terminal (the status area shortens them to one line; --events always has them whole).")
    var verbose = false

    @OptionGroup var audio: AlarmAudioOptions

    @OptionGroup var plugins: PluginNapOptions

    func validate() throws {
        guard let chosen = Preset.builtIn(named: preset) else {
            throw ValidationError("unknown preset \"\(preset)\" for --preset. Built-in presets: \(Preset.builtIn.map(\.name).joined(separator: ", ")).")
        }
        let problems = timers(from: chosen).problems
        if !problems.isEmpty {
            throw ValidationError(problems.joined(separator: "; ") + ".")
        }
        try audio.validate()
        guard noHold || isatty(STDIN_FILENO) == 1 else {
            throw ValidationError("hold mode reads a held key from a terminal, and standard input is not one; add --no-hold to start the release timer at once.")
        }
    }

    func timers(from preset: Preset) -> SessionTimers {
        var timers = preset.timers
        if let release { timers.release = release }
        if let nap { timers.nap = nap }
        if let max { timers.max = max }
        if let ringLimit { timers.ringLimit = ringLimit }
        if let snooze { timers.snooze = snooze }
        return timers
    }

    func configuration(showsCountdown: Bool, usesColour: Bool) -> NapConfiguration {
        let chosen = Preset.builtIn(named: preset) ?? .basic
        return NapConfiguration(
            timers: timers(from: chosen), presetName: chosen.name, holdMode: !noHold,
            sound: audio.sound, volume: audio.volume, fadeIn: audio.fadeIn, device: audio.device,
            systemVolume: audio.systemVolume, source: plugins.source, emitters: plugins.emitters, bpm: plugins.bpm,
            sleepSound: plugins.sleepSound, sleepVolume: plugins.sleepVolume, sleepDevice: plugins.sleepDevice,
            dismissal: dismiss.mode, showsCountdown: showsCountdown, usesColour: usesColour)
    }
}

extension Nap: LoopCommand {
    func run(on loop: EventLoop) async throws {
        let terminal = TerminalStyle.detect()
        let configuration = configuration(showsCountdown: !quiet && terminal.isTerminal, usesColour: terminal.usesColour)
        // A bad sound file, an unknown plugin or a configuration a plugin refuses is reported now
        // (exit 65/66/64/78), not when the alarm should ring.
        let nap: LiveNap
        do throws(NapSetupError) {
            nap = try LiveNap(configuration, loop: loop) { writeLine("snoozefuse: \($0)", to: STDERR_FILENO) }
        } catch {
            throw ExitStatus.reporting(error)
        }
        let console = Console(jsonLines: events == .jsonl, quiet: quiet, verbose: verbose, terminal: terminal,
                              timers: configuration.timers, presetName: configuration.presetName,
                              holdMode: configuration.holdMode, dismissal: configuration.dismissal,
                              keysOnTerminal: isatty(STDIN_FILENO) == 1, showsArea: configuration.showsCountdown)
        console.announce(holdMode: configuration.holdMode)
        async let result = nap.run()
        for await record in nap.records { console.render(record) }
        let ended = await result
        console.finish(outcome: ended.outcome)
        throw ExitStatus.forOutcome(ended.outcome, interrupted: ended.interrupted)
    }
}

enum EventFormat: String, ExpressibleByArgument, CaseIterable {
    case jsonl
}

/// `--dismiss` (``DismissMode``).
enum DismissChoice: String, ExpressibleByArgument, CaseIterable {
    case word, hold, key

    var mode: DismissMode { DismissMode(rawValue: rawValue) ?? .word }
}

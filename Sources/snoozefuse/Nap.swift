import ArgumentParser
import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseRuntime
import Synchronization

struct Nap: AsyncParsableCommand {
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

        While the alarm rings on a terminal: Enter, space or d stops it, s snoozes, q cancels. \
        Ctrl-C cancels at any time (exit 130).

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

    @Flag(name: .customLong("no-hold"), help: "Start the release timer at once instead of waiting for a held key (for scripts; needed when standard input is not a terminal).")
    var noHold = false

    @Option(help: ArgumentHelp("Write machine-readable events to standard output: jsonl (one JSON object per line).", valueName: "format"))
    var events: EventFormat?

    @Flag(help: "Show no countdown or progress messages; warnings and the alarm still appear.")
    var quiet = false

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
        return timers
    }

    func run() async throws {
        let chosen = Preset.builtIn(named: preset) ?? .basic
        let timers = timers(from: chosen)
        // A bad sound file is reported now (exit 65/66), not when the alarm should ring.
        var settings = try audio.playbackSettings()
        let napPlugins = try plugins.start(settings: &settings)
        let terminal = TerminalStyle.detect()
        let keys = TerminalKeyReader(fileDescriptor: STDIN_FILENO)
        let hint = keys == nil ? "(Ctrl-C to stop)" : "(Enter to stop, s to snooze, q to cancel)"
        let observer = ConsoleObserver(
            jsonLines: events == .jsonl, quiet: quiet, terminal: terminal, timers: timers, presetName: chosen.name
        )
        let bell = TerminalBellAlarm.onControllingTerminal(usesColour: terminal.usesColour, hint: hint)
        // Everything the nap starts runs on one parked thread of its own (see SerialThreadExecutor),
        // and sleeps on one clock (one timer thread): the session's deadlines and the alarm's own.
        let executor = SerialThreadExecutor(name: "snoozefuse-nap")
        let clock = BootTimeClock()
        let scheduling = AlarmScheduling(clock: clock, executor: executor)
        let alarm = AudioAlarmOutput(device: audio.device, settings: settings, fallback: bell, scheduling: scheduling)
        // The mixer's notes are warnings: an event, and a line even with --quiet.
        let (volumeNotes, volumeNote) = AsyncStream.makeStream(of: String.self)
        let systemVolume = SystemVolumeDuringAlarm(percent: audio.systemVolume, base: alarm, scheduling: scheduling) {
            volumeNote.yield($0)
        }
        let changes = Task(executorPreference: executor) {
            for await change in alarm.outputChanges {
                await observer.record(outputRecord(change, origin: observer.sessionOrigin))
            }
        }
        let pluginNotes = Task(executorPreference: executor) {
            for await note in napPlugins.notices {
                await observer.record(record(.warning, origin: observer.sessionOrigin, output: nil, message: note))
            }
        }
        let volumeWarnings = Task(executorPreference: executor) {
            for await note in volumeNotes {
                await observer.record(record(.warning, origin: observer.sessionOrigin, output: nil, message: note))
            }
        }
        let alarmWithPulses = napPlugins.alarmOutput(wrapping: systemVolume)
        var driver = SessionDriver(
            clock: clock, timers: timers, alarm: alarmWithPulses,
            observer: napPlugins.heartbeatObserver(wrapping: observer, bpm: plugins.bpm, executor: executor),
            showsCountdown: !quiet && terminal.isTerminal, taskExecutor: executor
        )
        driver.sleepSound = napPlugins.sleepSound(device: plugins.sleepDevice ?? audio.device, percent: plugins.sleepVolume, scheduling: scheduling)

        let (inputs, feed) = AsyncStream.makeStream(of: SessionEvent.self)
        let interrupted = Atomic<Bool>(false)
        let signals = SignalWatcher { number in
            if number == SIGINT { interrupted.store(true, ordering: .relaxed) }
            feed.yield(.cancel)
        }
        // Hold mode: any key held in ready/holding/releasing is the hold (see HoldTracking).
        let holdTracking = noHold ? nil : TerminalKeyReader.HoldTracking(isHoldPhase: { [observer] in
            [.ready, .holding, .releasing].contains(observer.currentPhase)
        })
        keys?.start(holdTracking: holdTracking) { feed.yield($0) }
        observer.announce(holdMode: !noHold)

        let outcome = await driver.run(startingWith: noHold ? .start : nil, inputs: inputs)

        keys?.stop()
        await alarmWithPulses.stop()
        await alarm.finish()
        await changes.value
        napPlugins.finish()
        await pluginNotes.value
        volumeNote.finish()
        await volumeWarnings.value
        observer.finish(outcome: outcome)
        withExtendedLifetime(signals) {}
        throw ExitStatus.forOutcome(outcome, interrupted: interrupted.load(ordering: .relaxed))
    }
}

enum EventFormat: String, ExpressibleByArgument, CaseIterable {
    case jsonl
}

import ArgumentParser
import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFusePluginHost
import SnoozeFuseRuntime

/// `nap --source ID[:key=value,...]` and repeatable `--emitter ID[:key=value,...]`.
struct PluginNapOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Play the alarm from a sound-source plugin (`snoozefuse plugins list`); the built-in tone takes over if it fails or crashes.", valueName: "id[:key=value,...]"))
    var source: String?

    @Option(name: .customLong("emitter"), help: ArgumentHelp("Send the heartbeat (while you hold) and the alarm pattern (while it rings) to a pulse-emitter plugin (repeatable).", valueName: "id[:key=value,...]"))
    var emitters: [String] = []

    @Option(help: ArgumentHelp("Heartbeat for emitters while you hold, in beats per minute (40–120).", valueName: "n"))
    var bpm: Int = 60

    @Option(name: .customLong("sleep-sound"), help: ArgumentHelp("Play a sound-source plugin while you drift off and nap, e.g. noise or noise:color=brown; it fades out and falls silent 3 s before the alarm. If it fails you nap in silence.", valueName: "id[:key=value,...]"))
    var sleepSound: String?

    @Option(name: .customLong("sleep-volume"), help: ArgumentHelp("Sleep sound volume, 0–100, applied on top of the plugin's own level (noise: volume=0.3).", valueName: "percent"))
    var sleepVolume: Int = 60

    @Option(name: .customLong("sleep-device"), help: ArgumentHelp("ALSA PCM for the sleep sound (default: the alarm's --device).", valueName: "pcm"))
    var sleepDevice: String?

    func validate() throws {
        guard (40...120).contains(bpm) else {
            throw ValidationError("--bpm \(bpm) is out of range: use 40 to 120 beats per minute.")
        }
        guard (0 ... 100).contains(sleepVolume) else {
            throw ValidationError("--sleep-volume must be 0–100, not \(sleepVolume).")
        }
        if sleepDevice?.isEmpty == true {
            throw ValidationError("--sleep-device needs a PCM name (`snoozefuse devices` lists them).")
        }
        for text in (source.map { [$0] } ?? []) + (sleepSound.map { [$0] } ?? []) + emitters where PluginSpec(parsing: text) == nil {
            throw ValidationError("\"\(text)\" is not a plugin: expected ID or ID:key=value,...")
        }
    }

    /// Starts each plugin instance in a supervised child process. Unknown ids or plugins of the
    /// wrong kind are reported before the nap begins (exit 66, 64), a configuration a plugin refuses
    /// exits 78 (see `checkConfigurations`).
    func start(settings: inout AlarmPlaybackSettings) throws -> NapPlugins {
        let plugins = NapPlugins()
        guard source != nil || sleepSound != nil || !emitters.isEmpty else { return plugins }
        guard let executable = PluginSearchPath.currentExecutable() else { throw ExitStatus.internalError }
        let registry = scanPlugins(logger: pluginLogger(level: .error))
        // A configuration a plugin refuses ends the command now (exit 78), not when its process starts.
        try checkConfigurations(executable: executable, registry: registry)
        func find(_ text: String, kind: PluginKinds, named: String) throws -> (LoadedPlugin, PluginSpec) {
            let spec = PluginSpec(parsing: text)!
            guard let plugin = registry.plugin(id: spec.id) else {
                writeLine("snoozefuse: \(PluginError(path: spec.id, reason: .unknownPlugin(spec.id)).reasonText)", to: STDERR_FILENO)
                throw ExitStatus.missingInput
            }
            guard plugin.info.kinds.contains(kind) else {
                writeLine("snoozefuse: \(PluginError(path: plugin.info.path, reason: .wrongKind(id: plugin.info.id, wanted: named)))", to: STDERR_FILENO)
                throw ExitStatus.usage
            }
            return (plugin, spec)
        }
        let notices = plugins.noticeFeed
        let onExit: @Sendable (PluginInfo, String) -> Void = { info, how in
            notices.yield("plugin \(info.id) stopped: \(how) (\(info.path))")
        }
        /// A source plugin's stream from a child process; `role` names it in the notices, `instead`
        /// says what plays when it fails.
        func sourceStream(_ text: String, role: String, instead: String, underrunFill: SourceFailureFallback) throws -> PluginAudioStream? {
            let (plugin, spec) = try find(text, kind: .soundSource, named: "sound source")
            do {
                let child = try PluginChildProcess(
                    executable: executable,
                    arguments: ["plugins", "serve", "--kind", "source", "--path", plugin.info.path, "--config", spec.config],
                    info: plugin.info, role: .readsFromChild) { info, how in
                        notices.yield("\(role) plugin \(info.id) stopped (\(how)); \(instead) (\(info.path))")
                    }
                return PluginAudioStream(child: child, sampleRate: PluginServer.sourceRate,
                                         channels: PluginServer.sourceChannels, underrunFill: underrunFill)
            } catch {
                notices.yield("\(role): \(error); \(instead)")
                return nil
            }
        }
        if let source, let stream = try sourceStream(source, role: "sound-source", instead: "the alarm plays the built-in tone instead",
                                                     underrunFill: .builtInTone) {
            plugins.stream = stream
            settings.sound = .custom(stream.customSound)
        }
        if let sleepSound {
            plugins.sleepStream = try sourceStream(sleepSound, role: "sleep-sound", instead: "napping in silence", underrunFill: .silence)
        }
        for text in emitters {
            let (plugin, spec) = try find(text, kind: .pulseEmitter, named: "pulse emitter")
            do {
                let child = try PluginChildProcess(
                    executable: executable,
                    arguments: ["plugins", "serve", "--kind", "emitter", "--path", plugin.info.path, "--config", spec.config],
                    info: plugin.info, role: .writesToChild, pipeCapacity: 4096, onExit: onExit)
                plugins.emitters.append(PluginProcessEmitter(child: child))
            } catch {
                notices.yield("\(error)")
            }
        }
        return plugins
    }
}

/// The plugin instances of one nap, each in its own child process, and what they report.
final class NapPlugins: Sendable {
    // Set once in `PluginNapOptions.start` before the object is shared, then only read.
    nonisolated(unsafe) var stream: PluginAudioStream?
    nonisolated(unsafe) var sleepStream: PluginAudioStream?
    nonisolated(unsafe) var emitters: [PluginProcessEmitter] = []
    /// One line per plugin event (a child that ended), for the session's records.
    let notices: AsyncStream<String>
    let noticeFeed: AsyncStream<String>.Continuation

    init() {
        (notices, noticeFeed) = AsyncStream.makeStream(of: String.self)
    }

    /// `base`, plus the alarm pattern on every emitter while it sounds.
    func alarmOutput(wrapping base: any AlarmOutput) -> any AlarmOutput {
        emitters.isEmpty ? base : PulsingAlarmOutput(base: base, emitters: emitters)
    }

    func finish() {
        noticeFeed.finish()
    }

    /// The sleep sound on `device` at `percent`, when `--sleep-sound` started one; its problems
    /// become the session's warnings.
    func sleepSound(device: String, percent: Int, scheduling: AlarmScheduling) -> AudioSleepSound? {
        guard let sleepStream else { return nil }
        let settings = AlarmPlaybackSettings(sound: .custom(sleepStream.customSound),
                                             gain: AlarmGain(percent: percent, fadeIn: .seconds(10)))
        return AudioSleepSound(device: device, settings: settings, scheduling: scheduling) { [noticeFeed] in noticeFeed.yield($0) }
    }

    /// `observer`, plus the heartbeat of SPEC §2 on every emitter while the session is `holding`.
    func heartbeatObserver(wrapping observer: any SessionObserver, bpm: Int, executor: any TaskExecutor) -> any SessionObserver {
        emitters.isEmpty ? observer : HeartbeatObserver(base: observer, emitters: emitters, bpm: bpm, executor: executor)
    }
}

/// Passes records on, and while the session is `holding` beats the emitters: a pulse every 60/BPM s
/// and a lighter one (0.7) at 30 % of the interval. A restart within 0.2 s of the last start is
/// ignored (a hold that flickers does not stutter the beat). The beat sleeps on the boot-time
/// clock and runs on the nap's executor, so it leaves no periodic wake-up behind once it stops.
actor HeartbeatObserver: SessionObserver {
    let base: any SessionObserver
    let emitters: [PluginProcessEmitter]
    let bpm: Int
    let executor: any TaskExecutor
    private let clock = BootTimeClock()
    private var beat: Task<Void, Never>?
    private var lastStart: BootTimeClock.Instant?

    init(base: any SessionObserver, emitters: [PluginProcessEmitter], bpm: Int, executor: any TaskExecutor) {
        self.base = base
        self.emitters = emitters
        self.bpm = bpm
        self.executor = executor
    }

    func record(_ record: SessionRecord) async {
        if record.event == .phase, let phase = record.phase {
            if phase == .holding { startBeat() } else { stopBeat() }
        }
        await base.record(record)
    }

    func countdown(_ tick: CountdownTick) async {
        await base.countdown(tick)
    }

    private func startBeat() {
        let now = clock.now
        if let lastStart, beat != nil, lastStart.duration(to: now) < .milliseconds(200) { return }
        lastStart = now
        beat?.cancel()
        let (interval, pulses) = PulsePattern.heartbeat(bpm: bpm)
        let emitters = emitters, clock = clock
        beat = Task(executorPreference: executor) {
            var cycle = now
            while !Task.isCancelled {
                for pulse in pulses {
                    guard (try? await clock.sleep(until: cycle.advanced(by: pulse.offset))) != nil else { return }
                    for emitter in emitters { emitter.emit(intensity: pulse.intensity, duration: pulse.duration) }
                }
                cycle = cycle.advanced(by: interval)
            }
        }
    }

    private func stopBeat() {
        beat?.cancel()
        beat = nil
    }
}

/// An alarm output that also pulses emitters with the alarm pattern of SPEC §2 while it sounds:
/// one pulse at once, then every second a pair 0.5 s apart. The sound starts first and never waits
/// for an emitter (each pulse is handed to a child process without blocking).
actor PulsingAlarmOutput: AlarmOutput {
    let base: any AlarmOutput
    let emitters: [PluginProcessEmitter]
    private let clock = BootTimeClock()
    private var pattern: Task<Void, Never>?

    init(base: any AlarmOutput, emitters: [PluginProcessEmitter]) {
        self.base = base
        self.emitters = emitters
    }

    func arm(reason: AlarmReason, after delay: Duration) async {
        await base.arm(reason: reason, after: delay)
    }

    func start(reason: AlarmReason) async -> AlarmStartReport {
        let report = await base.start(reason: reason)
        pattern?.cancel()
        let emitters = emitters, clock = clock
        pattern = Task {
            let start = ContinuousClock.now
            var cycleStart = Duration.zero
            while !Task.isCancelled {
                // Ten seconds of the pattern at a time (offsets keep counting from the start).
                for pulse in PulsePattern.alarm(until: cycleStart + .seconds(10)) where pulse.offset >= cycleStart {
                    guard (try? await clock.sleep(for: ContinuousClock.now.duration(to: start.advanced(by: pulse.offset)))) != nil else { return }
                    for emitter in emitters { emitter.emit(intensity: pulse.intensity, duration: pulse.duration) }
                }
                cycleStart += .seconds(10)
            }
        }
        return report
    }

    func stop() async {
        pattern?.cancel()
        pattern = nil
        for emitter in emitters { emitter.cancel() }
        await base.stop()
    }
}

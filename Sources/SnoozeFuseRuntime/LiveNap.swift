import Glibc
import SnoozeFuseAudio
import SnoozeFusePluginHost
import SnoozeFuseCore
public import SnoozeFuseSystem

/// The event loop a command runs on: one thread that is both the executor of its tasks and the
/// keeper of its timers (see `SnoozeFuseSystem.EventLoop`).
public typealias EventLoop = SnoozeFuseSystem.EventLoop
/// The clock of an ``EventLoop`` (CLOCK_BOOTTIME).
public typealias BootClock = SnoozeFuseSystem.BootClock

/// A nap on this machine: its sound checked, its plugins started in their own processes, its alarm
/// on the never-silent chain (the requested device, `default`, the terminal bell), the system
/// volume, the sleep sound, keys from the terminal, Ctrl-C and SIGTERM as cancels and a hang-up as the terminal going away, all on the
/// command's event loop and its boot-time clock.
public final class LiveNap: Sendable {
    public let session: NapSession<BootClock>
    private let plugins: NapPluginInstances
    private let signals: SignalWatcher

    /// Everything the nap records, in order (see ``NapSession/records``).
    public var records: AsyncStream<SessionRecord> { session.records }

    /// Prepares the nap. Problems found now end it before it begins (``NapSetupError``); `message`
    /// gets what is worth saying at once (a missing built-in folder, plugins the scan refused).
    public init(_ configuration: NapConfiguration, loop: EventLoop,
                message: @escaping @Sendable (String) -> Void) throws(NapSetupError) {
        let chosen = try AlarmSoundChoice.resolve(configuration.sound, notice: message)
        try AlarmSoundChoice.check(chosen)
        let (notes, noteFeed) = AsyncStream.makeStream(of: SessionNote.self, bufferingPolicy: .unbounded)
        // An alarm must be heard: a sound too quiet to wake anyone is replaced now, with a warning.
        let (sound, quiet) = AlarmSoundChoice.audible(chosen, volume: configuration.volume)
        if let quiet { noteFeed.yield(.warning(quiet)) }
        var settings = AlarmPlaybackSettings(sound: sound, gain: AlarmGain(percent: configuration.volume, fadeIn: configuration.fadeIn))
        let plugins = try NapPluginInstances.start(configuration, logger: lineLogger(.error, message)) {
            noteFeed.yield(.warning($0))
        }
        if let stream = plugins.stream { settings.sound = .custom(stream.customSound) }
        let keys = TerminalKeyReader(fileDescriptor: STDIN_FILENO)
        let hint = keys == nil ? "(Ctrl-C to stop)" : "(Enter to stop, s to snooze, q to cancel)"
        let bell = TerminalBellAlarm.onControllingTerminal(usesColour: configuration.usesColour, hint: hint, loop: loop)
        let alarm = AudioAlarmOutput(device: configuration.device, settings: settings, fallback: bell, loop: loop)
        // The mixer's notes are warnings: an event, and a line even with --quiet.
        let volume = SystemVolumeDuringAlarm(percent: configuration.systemVolume, base: alarm, loop: loop) {
            noteFeed.yield(.warning($0))
        }
        let changes = Task(executorPreference: loop) {
            for await change in alarm.outputChanges { noteFeed.yield(.output(change)) }
        }
        let sleepSound = plugins.sleepStream.map { stream in
            AudioSleepSound(device: configuration.sleepDevice ?? configuration.device,
                            settings: AlarmPlaybackSettings(sound: .custom(stream.customSound),
                                                            gain: AlarmGain(percent: configuration.sleepVolume, fadeIn: .seconds(10))),
                            loop: loop) { noteFeed.yield(.warning($0)) }
        }
        let ports = NapPorts(
            clock: loop.clock, executor: loop, alarm: volume, sleepSound: sleepSound,
            pulses: plugins.emitters.map(EmitterSink.init), keys: keys, notes: notes,
            shutdown: {
                await alarm.finish()
                await changes.value
                noteFeed.finish()
            })
        let session = NapSession(configuration: configuration, ports: ports)
        self.session = session
        self.plugins = plugins
        // Ctrl-C and SIGTERM are deliberate cancels; a hang-up (a closed terminal, a dropped SSH
        // connection) is not: the nap goes on and rings on its audio outputs.
        signals = SignalWatcher { [weak session] number in
            session?.send(number == SIGHUP ? .detach : .cancel(interrupted: number == SIGINT))
        }
    }

    /// Runs the nap until it has ended and its outputs are down.
    public func run() async -> NapResult {
        await session.run()
    }

    /// Hands a command to the nap.
    public func send(_ command: NapCommand) {
        session.send(command)
    }
}

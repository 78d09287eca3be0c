import Foundation
import Glibc
import SnoozeFuseAudio
public import SnoozeFuseCore
import SnoozeFusePluginHost
import SnoozeFuseStore
public import SnoozeFuseSystem

/// The event loop a command runs on: one thread that is both the executor of its tasks and the
/// keeper of its timers (see `SnoozeFuseSystem.EventLoop`).
public typealias EventLoop = SnoozeFuseSystem.EventLoop
/// The clock of an ``EventLoop`` (CLOCK_BOOTTIME).
public typealias BootClock = SnoozeFuseSystem.BootClock

/// A nap on this machine: its sound checked, its plugins started in their own processes, its alarm
/// on the never-silent chain (the requested device, `default`, the terminal bell), the system
/// volume, the sleep sound, keys from the terminal, Ctrl-C and SIGTERM as cancels and a hang-up as
/// the terminal going away, all on the command's event loop and its boot-time clock.
///
/// And a nap that nothing silences (SPEC §9): it holds the nap lock (a second nap is refused),
/// keeps its live state on disk at every change, serves other terminals on its control socket, and
/// has a guardian that rings its alarm if its process dies. The same machinery takes a nap over
/// from its live state: the guardian's, and `resume`'s after a reboot.
public final class LiveNap: Sendable {
    public let session: NapSession<BootClock>
    private let plugins: NapPluginInstances?
    private let signals: SignalWatcher
    private let keeper: LiveSessionKeeper
    /// A fresh nap's guardian, replaced when it dies (a guardian or `resume` has none).
    private let guardianship: Guardianship?
    private let control: ControlServer?
    private let lock: NapLock
    private let wakefulness: NapWakefulness
    private let hooks: NapHooks?
    private let holder: LiveSessionState.Holder
    private let history: NapHistoryLog
    private let message: @Sendable (String) -> Void
    private let desktopHold: DesktopHold?
    /// Says something in the nap's own records (a warning from beside the nap).
    private let note: @Sendable (SessionNote) -> Void
    /// What holds this nap before its release: the configuration's, or `key` (`none` off a
    /// terminal) when a desktop hold was asked for and no source of the idle time answers here.
    public let hold: HoldSource

    /// Everything the nap records, in order (see ``NapSession/records``).
    public var records: AsyncStream<SessionRecord> { session.records }

    /// Prepares a new nap. Problems found now end it before it begins (``NapSetupError``): another
    /// nap runs (exit 75), a bad sound, an unknown plugin… `message` gets what is worth saying at
    /// once (a missing built-in folder, plugins the scan refused, an interrupted nap replaced, a
    /// history that cannot be written).
    public convenience init(_ configuration: NapConfiguration, surroundings: NapSurroundings = .current(), loop: EventLoop,
                            message: @escaping @Sendable (String) -> Void) throws(NapSetupError) {
        try Self.loadAlarmLibraries()
        var configuration = configuration
        // Started in the background of its terminal (`&`): nothing may stop it for the terminal,
        // and no key of it can hold the nap (NapAssembly.fresh).
        if surroundings.foreground == false { ForegroundKeys.neverStopForTheTerminal() }
        let desktopHold = Self.desktopHold(for: &configuration, surroundings: surroundings, message: message)
        let paths = try Self.storePaths(surroundings.environment)
        let lock = try Self.takeLock(paths)
        let (found, damage) = LiveSessionKeeper.setAsideIfDamaged(paths, recordedBy: LiveSessionState.Holder.nap.rawValue)
        if let damage { message("warning: \(damage)") }
        if let waiting = NapHistoryLog(paths: paths).flushPending() { message("warning: \(waiting)") }
        if let interrupted = found {
            message("\(Self.describeInterrupted(interrupted)); this nap replaces it (`snoozefuse resume` rings an interrupted nap)")
            for line in LeftoverSinkFixes.putBack(interrupted.sinkFixes ?? []) { message(line) }
            // Found and discarded under the nap lock: recorded once, here.
            if let warning = NapHistoryLog(paths: paths).record(interrupted, outcome: "interrupted", endedAt: interrupted.updated.wallSeconds,
                                                                recordedBy: LiveSessionState.Holder.nap.rawValue) {
                message("warning: \(warning)")
            }
        }
        let chosen = try AlarmSoundChoice.resolve(configuration.sound, notice: message)
        try AlarmSoundChoice.check(chosen)
        if let route = RouteCheck.warning(for: configuration.route) { message("warning: \(route)") }
        let assembly = NapAssembly.fresh(configuration, sound: chosen, surroundings: surroundings, created: Date().timeIntervalSince1970)
        // A key held in this terminal: its true release where a keyboard device can be read.
        let keyRelease: Result<EvdevKeyRelease, KeyReleaseUnavailable>? = assembly.configuration.hold == .key && surroundings.inputIsTerminal
            ? EvdevKeyRelease.open() : nil
        try self.init(assembly, paths: paths, lock: lock, loop: loop, message: message, desktopHold: desktopHold, keyRelease: keyRelease)
        if guardianship?.start() != true {
            message("warning: no guardian could be started: if this process dies, nothing rings its alarm")
        }
    }

    /// What a new nap with `configuration` would refuse before it begins, checked without napping
    /// (`nap --dry-run`): its sound, and each plugin named, found, of its kind, with a
    /// configuration it accepts (each judged in a short-lived child, as the nap does).
    public static func check(_ configuration: NapConfiguration, message: @escaping @Sendable (String) -> Void) throws(NapSetupError) {
        try loadAlarmLibraries()
        try AlarmSoundChoice.check(try AlarmSoundChoice.resolve(configuration.sound, notice: message))
        _ = try NapPluginInstances.check(configuration, logger: lineLogger(.error, message), notice: message)
        if let route = RouteCheck.warning(for: configuration.route) { message("warning: \(route)") }
    }

    /// What taking a nap over from its live state comes to.
    public enum TakeOverResult: Sendable {
        /// Its alarm is set again (it rings at its deadline, or at once when that has passed).
        case ringing(LiveNap)
        /// Nothing to ring: it had not started, or it had ended.
        case nothing
        /// Its alarm passed more than the allowed lateness ago: not rung.
        case missed(due: String, late: Duration)
    }

    /// Takes over the nap whose live state is `live`: the guardian (no lateness limit, no terminal)
    /// or `resume` (late by at most `maxLate`; keys when on a terminal).
    public static func takeOver(_ live: LiveSessionState, as holder: LiveSessionState.Holder, maxLate: Duration?,
                                surroundings: NapSurroundings = .current(), loop: EventLoop,
                                message: @escaping @Sendable (String) -> Void) throws(NapSetupError) -> TakeOverResult {
        let paths = try storePaths(surroundings.environment)
        let lock = try takeLock(paths)
        return try takeOver(live, as: holder, lock: lock, maxLate: maxLate, surroundings: surroundings, loop: loop, message: message)
    }

    static func takeOver(_ live: LiveSessionState, as holder: LiveSessionState.Holder, lock: NapLock, maxLate: Duration?,
                         surroundings: NapSurroundings = .current(), loop: EventLoop,
                         message: @escaping @Sendable (String) -> Void) throws(NapSetupError) -> TakeOverResult {
        try loadAlarmLibraries()
        let paths = try storePaths(surroundings.environment)
        let now = BootInstant.now, wallNow = Date()
        let sameBoot = live.bootID == currentBootID()
        let due = live.alarm.map { $0.due.instant(sameBoot: sameBoot, now: now, wallNow: wallNow) }
        let history = NapHistoryLog(paths: paths)
        let lastSaved = live.updated.instant(sameBoot: sameBoot, now: now, wallNow: wallNow)
        switch TakeOver.plan(phase: live.phase, alarm: due, reason: live.alarm?.reason ?? .nap, now: now, maxLate: maxLate, lastSaved: lastSaved) {
        case .nothing:
            // It never started (or had ended): nothing to ring, but it is recorded as it stopped.
            if let warning = history.record(live, outcome: "interrupted", endedAt: live.updated.wallSeconds, recordedBy: holder.rawValue) {
                message("warning: \(warning)")
            }
            for line in LeftoverSinkFixes.putBack(live.sinkFixes ?? []) { message(line) }
            LiveSessionKeeper.removeFiles(paths)
            return .nothing
        case .missed(_, let late):
            let due = live.alarm?.due.wall ?? "?"
            var record = SessionRecord(.missed, elapsed: .zero, wall: wallNow,
                                       message: "the alarm of the nap started \(live.started?.wall ?? "?") was due at \(due) and was missed by \(late.compactDescription)")
            record.phase = live.phase
            GuardianLog(paths: paths).append(record)
            if let warning = history.record(live, outcome: "missed", endedAt: live.alarm?.due.wallSeconds ?? wallNow.timeIntervalSince1970,
                                            recordedBy: holder.rawValue) {
                message("warning: \(warning)")
            }
            for line in LeftoverSinkFixes.putBack(live.sinkFixes ?? []) { message(line) }
            LiveSessionKeeper.removeFiles(paths)
            return .missed(due: due, late: late)
        case .ring(let at, let reason, _):
            let files = NapAssembly.SoundFiles.onDisk
            let assembly = holder == .guardian
                ? NapAssembly.guardian(live, ringAt: at, reason: reason, now: now, wallNow: wallNow, sameBoot: sameBoot, files: files)
                : NapAssembly.resume(live, ringAt: at, reason: reason, now: now, wallNow: wallNow, sameBoot: sameBoot,
                                     surroundings: surroundings, files: files)
            return .ringing(try LiveNap(assembly, paths: paths, lock: lock, loop: loop, message: message))
        }
    }

    /// The one set-up of every nap, from its assembly (``NapAssembly``: how it is held).
    private init(_ assembly: NapAssembly, paths: StorePaths, lock: NapLock, loop: EventLoop,
                 message: @escaping @Sendable (String) -> Void, desktopHold: DesktopHold? = nil,
                 keyRelease: Result<EvdevKeyRelease, KeyReleaseUnavailable>? = nil) throws(NapSetupError) {
        let configuration = assembly.configuration, chosen = assembly.sound, holder = assembly.holder
        let terminal = assembly.readsKeys, ttyForBell = assembly.bellTerminal, facts = assembly.history
        let (notes, noteFeed) = AsyncStream.makeStream(of: SessionNote.self, bufferingPolicy: .unbounded)
        if assembly.isFresh {
            let said: String = switch (configuration.hold, keyRelease) {
            case (.desktop, _): desktopHold.map { "the desktop holds the nap: its idle time comes from \($0.reader.name)" } ?? ""
            case (.key, .success(let reader)?): reader.description
            case (.key, .failure(let unavailable)?):
                "the key's release is taken 0.75 s after its autorepeat stops: \(unavailable.reason)"
            default: ""
            }
            noteFeed.yield(.hold(what: configuration.hold, message: said))
        }
        let keyReader = try? keyRelease?.get()
        let link = SessionLink()
        // This process (a nap, a guardian, resume) adopts what its hooks and plugin children detach,
        // so it can end it with them (AdoptedProcesses, ChildProcessGroup).
        if let refused = AdoptedProcesses.adoptOrphans() {
            noteFeed.yield(.warning("what a hook or plugin detaches (a double fork, setsid) may outlive it: this process cannot adopt it (PR_SET_CHILD_SUBREAPER: \(String(cString: strerror(refused))))"))
        }
        // An alarm must be heard: a sound too quiet to wake anyone is replaced now, with a warning.
        let (audible, quiet, loudness) = AlarmSoundChoice.audible(chosen, volume: configuration.volume)
        if let quiet { noteFeed.yield(.warning(quiet)) }
        // Held open from now on: deleting or renaming the file during the nap changes nothing. If it
        // cannot be read when the alarm starts, the built-in sound (held too) plays on the same device.
        let sound: AlarmSound
        do {
            sound = try audible.held()
        } catch {
            throw NapSetupError(error.isMissingInput ? .missingInput : .badData, ["\(error)"])
        }
        // Every sound at the alarm's loudness (AlarmLoudness), then --volume.
        var gain = AlarmGain(percent: configuration.volume, fadeIn: configuration.fadeIn)
        gain.loudness = loudness.map { AlarmLoudness.factor($0.alarmGain.decibels) } ?? 1
        var settings = AlarmPlaybackSettings(sound: sound, gain: gain)
        settings.fallbackSound = BuiltInSounds.locate()?.path(named: BuiltInSounds.defaultName)
            .flatMap { try? AlarmSound.file(path: $0).held() } ?? .builtInTone
        let pluginLog = PluginErrorLog(path: paths.state.appendingPathComponent("plugins.log").path)
        let plugins = assembly.usesPlugins ? try NapPluginInstances.start(configuration, errorLog: pluginLog, logger: lineLogger(.error, message)) {
            noteFeed.yield(.warning($0))
        } : nil
        if let stream = plugins?.stream {
            settings.sound = .custom(stream.customSound)
            // The plugin's frames as it renders them: the loudness measured is --sound's.
            settings.gain.loudness = 1
        }
        let keys = terminal ? ForegroundKeys(fileDescriptor: STDIN_FILENO) { noteFeed.yield(.terminal($0)) } : nil
        let hint = keys == nil ? "(`snoozefuse stop` to stop)" : Self.keyHint(configuration.dismissal)
        let bell = Self.bell(tty: ttyForBell, terminal: terminal, usesColour: configuration.usesColour, hint: hint,
                             display: configuration.showsCountdown, plain: !configuration.movesCursor, loop: loop)
        // alsa-lib reads its configuration of the alarm's device now, on a thread of its own (a
        // hook can block): what its hooks load and run (Debian's asks PulseAudio
        // whether it runs, through libpulse) is then part of the set-up, whose pages go back once
        // the person is asleep, not of the alarm's first open.
        let alarmDevice = configuration.device
        let alsaConfigured = BoundedCall.start(named: "snoozefuse-alsa-conf") { ALSAConfiguration.prepare(device: alarmDevice) }
        // On a sound server: the alarm's own streams on the routed sinks, their mute and volume
        // fixed (the person's own kept, and put back by whoever holds the alarm last), proof from
        // their monitors.
        let ledger = SinkFixLedger(assembly.sinkFixes)
        let (sinkReports, sinkFeed) = AsyncStream.makeStream(of: SinkPlanNews.self, bufferingPolicy: .unbounded)
        let clock = loop.clock
        var plan = SinkPlan(route: configuration.route,
                            floorPercent: configuration.fixesVolume ? configuration.systemVolume ?? SinkLevelFix.defaultFloorPercent : nil,
                            ledger: ledger, watcher: { SinkWatchDriver(plan: $0, now: { clock.now }) },
                            ledgerChanged: { sinkFeed.yield(.ledger($0)) }) { sinkFeed.yield(.report($0)) }
        // What reaches a sink's monitor below the alarm's loudness (less 20 dB) proves nothing.
        plan.level = AlarmLevel(volume: Double(configuration.volume) / 100, fadeIn: configuration.fadeIn)
        let alarm = AudioAlarmOutput(device: configuration.device, settings: settings, fallback: bell, loop: loop, server: plan)
        // The mixer's notes are warnings: an event, and a line even with --quiet. On the sound
        // server's output the sinks' floor does this instead.
        let volume = SystemVolumeDuringAlarm(percent: configuration.systemVolume, base: alarm, loop: loop) {
            noteFeed.yield(.warning($0))
        }
        let changes = Task(executorPreference: loop) {
            for await change in alarm.outputChanges { noteFeed.yield(.output(change)) }
        }
        let keeperSlot = KeeperSlot()
        let sinkNotes = Task(executorPreference: loop) {
            // One stream for both, so the live state and the events keep the order they happened in.
            for await news in sinkReports {
                guard case .report(let report) = news else {
                    if case .ledger(let fixes) = news { keeperSlot.keeper?.saveSinkFixes(fixes) }
                    continue
                }
                switch report {
                case .escalated(.card, _):
                    await alarm.soundCardBeside(true)
                case .escalated(.fallback, _):
                    await alarm.soundFallbackBeside(true)
                case .recovered:
                    await alarm.soundCardBeside(false)
                    await alarm.soundFallbackBeside(false)
                default:
                    break
                }
                noteFeed.yield(.sink(report))
            }
        }
        let sleepSound = plugins?.sleepStream.map { stream in
            AudioSleepSound(device: configuration.sleepDevice ?? configuration.device,
                            settings: AlarmPlaybackSettings(sound: .custom(stream.customSound),
                                                            gain: AlarmGain(percent: configuration.sleepVolume, fadeIn: .seconds(10))),
                            loop: loop) { noteFeed.yield(.warning($0)) }
        }
        let soundPath = sound.filePath
        let setup = SavedAlarmSetup(
            soundPath: soundPath, soundName: configuration.sound ?? BuiltInSounds.defaultName, device: configuration.device,
            volume: configuration.volume, fadeInSeconds: configuration.fadeIn.secondsValue,
            systemVolume: configuration.systemVolume, ringLimitSeconds: configuration.timers.ringLimit?.secondsValue,
            snoozeSeconds: configuration.timers.snooze.secondsValue, releaseSeconds: configuration.timers.release.secondsValue,
            napSeconds: configuration.timers.nap.secondsValue, maxSeconds: configuration.timers.max.secondsValue,
            presetName: configuration.presetName, dismissal: configuration.dismissal,
            route: configuration.route.description, fixesVolume: configuration.fixesVolume, plain: !configuration.movesCursor)
        let keeper = LiveSessionKeeper(paths: paths, setup: setup, holder: holder, terminal: assembly.savedTerminal) {
            noteFeed.yield(.warning($0))
        }
        keeper.saveSinkFixes(ledger.all)
        keeperSlot.keeper = keeper
        // The set-up's memory goes back once it is over: when the person is asleep.
        let settled = SetUpSettled(after: alsaConfigured)
        var ports = NapPorts(
            clock: loop.clock, executor: loop, alarm: SettledBeforeArming(base: volume, settled: settled), sleepSound: sleepSound,
            pulses: (plugins?.emitters ?? []).map(EmitterSink.init), keys: keys, notes: notes,
            shutdown: {
                await alarm.finish()
                sinkFeed.finish()
                await sinkNotes.value
                // Every plugin child ends with the nap, whichever way it ends.
                await plugins?.finish()
                await changes.value
                noteFeed.finish()
            })
        ports.initialSession = assembly.initialSession
        ports.alarmAt = configuration.wakeAt.map { loop.clock.now.advanced(by: .seconds($0.timeIntervalSinceNow)) }
        // Said in the `alarm` event: which source plays (a plugin that fails mid-alarm is replaced
        // by the built-in tone, which an `output` event says).
        let playing: String = if sound == .builtInTone {
            "the built-in tone"
        } else if !assembly.isFresh {
            // Taken over: the file that plays (the saved one, or the built-in sound when it is gone).
            "sound \(sound.filePath ?? BuiltInSounds.defaultName)"
        } else if audible == chosen {
            "sound \(configuration.sound ?? BuiltInSounds.defaultName)"
        } else {
            "sound \(BuiltInSounds.defaultName) (the one chosen is too quiet)"
        }
        ports.alarmSound = plugins?.stream.map { "plugin \($0.child.info.id)" } ?? playing
        // Keeps the machine awake from now until the nap ends, wakes it for the alarm, and shows
        // the alarm on the desktop.
        // Its actions snooze and stop as another terminal's `snoozefuse snooze` and `stop` do.
        let wakefulness = NapWakefulness(clock: loop.clock, snooze: configuration.timers.snooze, dismissal: configuration.dismissal,
                                         act: { action in
                                             switch action {
                                             case .snooze: link.session?.send(.snooze(nil))
                                             case .stop: _ = link.session?.dismiss(answer: nil)
                                             }
                                         }, note: { noteFeed.yield($0) })
        let guardianLink = GuardianLink()
        ports.onChange = { session, now in
            // The guardian first: one line on a pipe, never waiting, while saving the state waits
            // for the disk (fsync), which on a busy machine can take seconds: a guardian told late
            // that the alarm rings takes the nap for a stuck one and ends it.
            guardianLink.tell(session, now: now)
            keeper.save(session, now: now)
            wakefulness.changed(session)
            // Asleep, with the alarm far enough ahead for a give-back on a busy machine to be over
            // before arming: what the set-up touched goes back.
            if session.phase == .napping, let due = session.expectedAlarm, now.duration(to: due) >= SetUpSettled.leadNeeded {
                settled.asleep()
            }
        }
        // The user's hooks run beside the nap, never in its way; a guardian or `resume` that takes
        // a nap over runs none (its moments already passed, or never came, in the nap's process).
        let hooks = assembly.isFresh ? NapHooks(paths: paths) { noteFeed.yield(.warning($0)) } : nil
        ports.onRecord = { record in
            wakefulness.follow(record)
            hooks?.follow(record)
            keyReader?.follow(record, send: { link.session?.send($0) }, note: { noteFeed.yield($0) })
        }
        let session = NapSession(configuration: configuration, ports: ports, history: facts)
        link.session = session
        keeper.trackHistory { [weak session] in session?.history }
        self.session = session
        self.plugins = plugins
        self.keeper = keeper
        guardianship = assembly.isFresh ? Guardianship(paths: paths, link: guardianLink, keeper: keeper) { what, message in
            noteFeed.yield(.guardian(what: what, message: message))
        } : nil
        self.lock = lock
        self.wakefulness = wakefulness
        self.hooks = hooks
        self.holder = holder
        self.message = message
        self.desktopHold = desktopHold
        note = { noteFeed.yield($0) }
        hold = configuration.hold
        history = NapHistoryLog(paths: paths)
        // Other terminals of this user reach the nap here; without the socket the nap still runs.
        do {
            control = try ControlServer(socket: paths.controlSocket()) { [weak session] request in
                guard let session else { return ControlReply(ok: false, message: "the nap has ended", state: nil) }
                return ControlAnswer.reply(to: request, session: session, state: { keeper.current })
            }
        } catch {
            noteFeed.yield(.warning("\(error.lines.joined(separator: " ")); `snoozefuse stop` and the like cannot reach this nap"))
            control = nil
        }
        // Ctrl-C and SIGTERM are deliberate cancels; a hang-up (a closed terminal, a dropped SSH
        // connection) is not: the nap goes on and rings on its audio outputs.
        signals = SignalWatcher { [weak session] number in
            session?.send(number == SIGHUP ? .detach : .cancel(interrupted: number == SIGINT))
        }
    }

    /// Runs the nap until it has ended and its outputs are down; its live state is gone then, and
    /// the nap is in the history (or `message` says why it could not be written).
    public func run() async -> NapResult {
        desktopHold?.start(phase: { [weak session] in session?.phase ?? .finished },
                           send: { [weak session] in session?.send($0) },
                           note: note)
        let result = await session.run()
        guardianship?.stop()
        desktopHold?.stop()
        control?.close()
        keeper.remove()
        if let facts = session.history,
           let warning = history.record(facts.entry(outcome: result.outcome.rawValue, recordedBy: holder.rawValue)) {
            message("warning: \(warning)")
        }
        await wakefulness.finish()
        // The `end` hook has its 10 s before the program exits.
        await hooks?.finish()
        return result
    }

    /// Hands a command to the nap.
    public func send(_ command: NapCommand) {
        session.send(command)
    }

    // MARK: - Pieces

    /// An interrupted nap as its state tells it: when it started (its first start, not the
    /// moment a guardian or `resume` took it over), when its alarm was due, and whether it rang
    /// and who rang it.
    static func describeInterrupted(_ live: LiveSessionState) -> String {
        let facts = live.historyFacts
        let start = WallClockText.iso8601(secondsSince1970: facts.started ?? facts.created)
        let due = live.alarm?.due.wall ?? "?"
        let rang = facts.firstRing.map { "it rang at \(WallClockText.iso8601(secondsSince1970: $0))" + (facts.rungBy.map { " (rung by its \($0))" } ?? "") }
            ?? (live.phase == .ringing ? "it was ringing" : "it was never rung")
        return "an interrupted nap (started \(start), its alarm due \(due)): \(rang)"
    }

    /// `--hold desktop`: the first source of the desktop's idle time that answers here; without
    /// one, the nap is held by a key on its terminal (or by nothing off a terminal), and says so.
    private static func desktopHold(for configuration: inout NapConfiguration, surroundings: NapSurroundings,
                                    message: @Sendable (String) -> Void) -> DesktopHold? {
        guard configuration.hold == .desktop else { return nil }
        let found = IdleTimeSources(environment: surroundings.environment).first()
        if let reader = found.reader {
            return DesktopHold(reader: reader, idleAfter: configuration.idleAfter)
        }
        let fallback: HoldSource = surroundings.inputIsTerminal ? .key : .none
        configuration.hold = fallback
        message("warning: --hold desktop: nothing here tells how long the desktop has been idle (\(found.failures.map { $0.description }.joined(separator: "; "))); "
            + (fallback == .key ? "hold a key in this terminal instead" : "the release timer starts at once instead")
            + " (`snoozefuse doctor` says what each source answered)")
        return nil
    }

    /// The libraries the alarm plays through link on first use (CLazyLink): loaded before anything
    /// else of a nap or a takeover calls them (its sound is checked first), so that one that cannot
    /// be loaded ends the nap before it begins, or is written in the guardian's log, never the end of
    /// the program at its first call.
    private static func loadAlarmLibraries() throws(NapSetupError) {
        do {
            try AudioLibraries.loadForAlarm()
        } catch {
            throw NapSetupError(.internalError, ["cannot play an alarm: \(error)"])
        }
    }

    private static func storePaths(_ environment: [String: String]) throws(NapSetupError) -> StorePaths {
        do {
            return try StorePaths(environment: environment)
        } catch {
            throw NapSetupError(.badConfiguration, [error.description])
        }
    }

    /// The nap lock, or exit 75 naming the nap that holds it.
    private static func takeLock(_ paths: StorePaths) throws(NapSetupError) -> NapLock {
        let lock: NapLock?
        do {
            lock = try NapLock.acquire(paths.napLock)
        } catch {
            throw NapSetupError(.badConfiguration, ["\(error); no nap can be kept safe without its state folder"])
        }
        guard let lock else {
            let running = LiveSessionKeeper.read(paths)
            // The alarm on the local clock, as `status` says it.
            let now = Date().timeIntervalSince1970
            let who = running.map { "pid \($0.pid), \($0.holder == .nap ? "" : "held by its \($0.holder.rawValue), ")\($0.phase.rawValue)\($0.alarm.map { ", alarm at \(NapStatus.localTime($0.due.wallSeconds, now: now))" } ?? "")" } ?? "starting"
            throw NapSetupError(.alreadyRunning, ["another nap is running (\(who)): `snoozefuse status` shows it, `snoozefuse stop` ends it"])
        }
        return lock
    }

    /// What the bell's line says about keys.
    private static func keyHint(_ dismissal: DismissMode) -> String {
        switch dismissal {
        case .word: "(type the word shown, then Enter, to stop; s snoozes)"
        case .hold: "(hold a key for 3 s to stop; s snoozes)"
        case .key: "(Enter to stop, s to snooze)"
        }
    }

    /// The bell: on the nap's own terminal (or the one a taken-over nap had), else standard error.
    private static func bell(tty: String?, terminal: Bool, usesColour: Bool, hint: String, display: Bool, plain: Bool,
                             loop: EventLoop) -> TerminalBellAlarm {
        if let tty {
            let fd = open(tty, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
            if fd >= 0 {
                // Kept open for the life of the process: the alarm may ring at any time.
                return TerminalBellAlarm(fileDescriptor: fd, isTerminal: isatty(fd) == 1, usesColour: false, hint: hint, plain: plain, loop: loop)
            }
        }
        if terminal {
            // With the status area on screen the bell only beeps: the area shows the alarm.
            return TerminalBellAlarm.onControllingTerminal(usesColour: usesColour, hint: hint, drawsLine: !display, plain: plain, loop: loop)
        }
        return TerminalBellAlarm(fileDescriptor: STDERR_FILENO, isTerminal: isatty(STDERR_FILENO) == 1, usesColour: false, hint: hint, plain: plain, loop: loop)
    }

}

/// The nap's live-state keeper, for the sink reports' task, which starts before the keeper exists
/// (set once, read on the nap's loop).
/// The nap's session, for what is made before it and sends it commands (weak: the session owns them).
private final class SessionLink: Sendable {
    private struct Weak { weak var session: NapSession<BootClock>? }
    private let slot = Locked(Weak())
    var session: NapSession<BootClock>? {
        get { slot.withLock { $0.session } }
        set { slot.withLock { $0.session = newValue } }
    }
}

/// Gives back, once, the memory a nap's set-up touched and its waiting and ringing do not need
/// (``SetUpMemory``: issue 23, a ringing nap held its set-up's code): when the person falls asleep
/// with the alarm at least ``leadNeeded`` ahead, on a thread of its own (it reads smaps, a few
/// milliseconds, which must not hold up the nap's loop and the records it stamps: run just before
/// arming, on the loop or on a thread that arming waited for, it left alarm records of tests
/// 0.3-0.5 s late under the whole test suite). Not once the alarm is armed: what arming mapped in
/// is what the alarm runs.
private final class SetUpSettled: Sendable {
    /// Arming comes 2 s before the alarm and waits for a give-back under way: 3 s more for it.
    static let leadNeeded = Duration.seconds(5)
    /// How long a give-back waits for alsa-lib's hooks of the set-up to be over (within the lead).
    static let hooksLimit = Duration.seconds(2)

    private struct State {
        var armed = false
        var call: BoundedCall<Void>?
    }
    private let state = Locked(State())
    /// alsa-lib's reading of its configuration, started in the set-up (its hooks load and unload
    /// libraries).
    private let hooks: BoundedCall<Bool>

    init(after hooks: BoundedCall<Bool>) {
        self.hooks = hooks
    }

    /// The person is asleep: gives back, once, unless the alarm was armed first. Returns at once.
    /// The give-back waits for alsa-lib's hooks, and is skipped when they are still running after
    /// ``hooksLimit`` (a hook that blocks): a library mapped or unmapped while
    /// `/proc/self/smaps` is read and acted on could lose the pages its loader wrote.
    func asleep() {
        state.withLock { state in
            if !state.armed, state.call == nil {
                let hooks = hooks
                state.call = BoundedCall.start(named: "snoozefuse-settle") {
                    guard hooks.wait(atMost: Self.hooksLimit) != nil else { return }
                    SetUpMemory.giveBack()
                }
            }
        }
    }

    /// The alarm is about to be armed: returns once a give-back under way is done.
    func arming() async {
        let call = state.withLock { state in
            state.armed = true
            return state.call
        }
        await call?.value()
    }
}

/// The nap's alarm output, which tells ``SetUpSettled`` when it is armed.
private struct SettledBeforeArming: AlarmOutput {
    let base: any AlarmOutput
    let settled: SetUpSettled

    func arm(reason: AlarmReason, after delay: Duration) async {
        await settled.arming()
        await base.arm(reason: reason, after: delay)
    }

    func start(reason: AlarmReason) async -> AlarmStartReport {
        await base.start(reason: reason)
    }

    func stop() async {
        await base.stop()
    }
}

private final class KeeperSlot: Sendable {
    private let slot = Locked<LiveSessionKeeper?>(nil)
    var keeper: LiveSessionKeeper? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// What the sound server's output tells a nap: an event, or what to put back (for the live state).
private enum SinkPlanNews: Sendable {
    case report(SinkReport)
    case ledger([SinkLevelFix])
}

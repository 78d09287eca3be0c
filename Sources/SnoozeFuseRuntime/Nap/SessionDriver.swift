public import Foundation
public import SnoozeFuseCore
import SnoozeFuseAudio

/// Runs a ``Session`` against a clock: feeds it events, sleeps until the next thing that can
/// change it, and performs its effects.
///
/// Time is injected (`ContinuousClock` in real runs, which keeps counting through suspend; a manual
/// clock in tests). The driver never counts down by ticks: it sleeps until the session's next
/// deadline, or, when a countdown is shown, until the displayed whole second changes, whichever
/// comes first. With the countdown off, a nap wakes the process only at its deadlines.
public struct SessionDriver<C: Clock>: Sendable where C.Duration == Duration {
    public var clock: C
    public var timers: SessionTimers
    public var alarm: any AlarmOutput
    public var observer: any SessionObserver
    /// Wake once per displayed second to update a countdown.
    public var showsCountdown: Bool
    /// The wall-clock time for records; injectable so tests can fix it.
    public var wallClock: @Sendable () -> Date
    /// Where the driver's own tasks (the timer, the input forwarder) run; `nil` for the default
    /// global executor. A nap passes its ``EventLoop`` so it never wakes the process between
    /// deadlines.
    public var taskExecutor: (any TaskExecutor)?
    /// How long before the alarm is due the output is armed (device opened, first buffer ready),
    /// so the first frame can go out on time.
    public var armLead: Duration = .seconds(2)
    /// What plays while releasing and napping (see ``SleepSoundOutput``); `nil` for silence.
    public var sleepSound: (any SleepSoundOutput)?
    /// How long before the alarm is armed the sleep sound has faded out and closed its device.
    public var sleepSoundGap: Duration = .seconds(1)
    /// Where the heartbeat goes while the person holds (SPEC §2: a pulse every 60/BPM s, then a
    /// lighter one at 30 % of the interval); each beat is also a `heartbeat` record. Empty: no beat.
    public var pulseSinks: [any PulseSink] = []
    /// Heartbeats per minute (40–120).
    public var heartbeatBPM = 60
    /// What the alarm plays, for the `alarm` event (``NapPorts/alarmSound``).
    public var alarmSound: String?
    /// Where the session starts: a fresh one (nil), or one taken up again where it stood.
    public var initialSession: Session<C.Instant>?
    /// A fresh session's alarm at a time of day (`--until`), as an instant of `clock`.
    public var alarmAt: C.Instant?
    /// Called with the session once at the start and after every event that changed it, once its
    /// effects were performed (so never before the alarm it starts): where a nap saves its live
    /// state.
    public var onChange: (@Sendable (Session<C.Instant>, C.Instant) async -> Void)?

    public init(
        clock: C,
        timers: SessionTimers,
        alarm: any AlarmOutput,
        observer: any SessionObserver,
        showsCountdown: Bool = false,
        taskExecutor: (any TaskExecutor)? = nil,
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.taskExecutor = taskExecutor
        self.clock = clock
        self.timers = timers
        self.alarm = alarm
        self.observer = observer
        self.showsCountdown = showsCountdown
        self.wallClock = wallClock
    }

    /// Runs a session that begins with `first` (`.start` for `--no-hold`, `.holdBegan` otherwise,
    /// or `nil` to wait in `ready` for the first event from `inputs`, or for the time named with
    /// `--until`) until it ends, and returns
    /// how it ended. Cancelling the calling task cancels the session.
    public func run(startingWith first: SessionEvent?, inputs: AsyncStream<SessionEvent>) async -> SessionOutcome {
        await run(startingWith: first, inputs: inputs, notes: AsyncStream { $0.finish() })
    }

    /// As ``run(startingWith:inputs:)``, and each of `notes` (what the alarm's outputs, the mixer
    /// and the plugins report) becomes a record stamped on the session's clock, in order with the
    /// session's own records. Once the session has ended, `whenEnded` winds the outputs down (it
    /// must end `notes`); what they report meanwhile still becomes records, and `run` returns when
    /// both are done.
    public func run(startingWith first: SessionEvent?, inputs: AsyncStream<SessionEvent>,
                    notes: AsyncStream<SessionNote>,
                    whenEnded: @escaping @Sendable () async -> Void = {}) async -> SessionOutcome {
        let (wakeups, feed) = AsyncStream.makeStream(of: Wakeup.self, bufferingPolicy: .unbounded)
        let forwarder = Task(executorPreference: taskExecutor) {
            for await event in inputs { feed.yield(.event(event)) }
        }
        let noteForwarder = Task(executorPreference: taskExecutor) {
            for await note in notes { feed.yield(.note(note)) }
            feed.yield(.notesEnded)
        }
        var run = RunState(session: initialSession ?? Session<C.Instant>(timers: timers, alarmAt: alarmAt))
        // A session taken up where it stood (a guardian, `resume`) makes no phase record to start
        // from: its `t` counts from now, so that no record of it goes back in time (its warnings
        // were at 0 from their own moment, its alarm from the due instant, seconds before).
        if initialSession != nil { run.origin = clock.now }
        var reported = run.session
        await onChange?(run.session, clock.now)
        var timer: Task<Void, Never>?
        defer {
            timer?.cancel()
            forwarder.cancel()
            noteForwarder.cancel()
            feed.finish()
        }

        if let first {
            feed.yield(.event(first))
        } else if run.session.nextDeadline != nil {
            // Waiting for its first event with a deadline already (a time named, `--until`): a
            // look at the time arms it.
            feed.yield(.event(.timeElapsed))
        }
        for await wakeup in wakeups {
            let event: SessionEvent
            switch wakeup {
            case .event(let next): event = next
            case .note(let note):
                let now = clock.now
                await observer.record(noteRecord(note, at: now, origin: run.origin ?? now))
                continue
            case .notesEnded:
                run.notesEnded = true
                continue
            }
            let now = clock.now
            let effects = run.session.handle(event, at: now)
            await perform(effects, in: &run)
            if run.session != reported {
                reported = run.session
                await onChange?(run.session, clock.now)
            }
            if run.session.phase.isTerminal { break }
            await updateHeartbeat(&run, now: clock.now)
            await updateSleepSound(&run, now: clock.now)
            await updateArming(&run, now: clock.now)
            if showsCountdown, let tick = countdownTick(run.session, now: clock.now), !tick.countsTheSame(as: run.lastTick) {
                run.lastTick = tick
                let now = clock.now
                var stamped = record(.countdown, at: now, origin: run.origin ?? now)
                stamped.phase = tick.phase
                stamped.countdown = tick
                await observer.countdown(tick, stamped: stamped)
            }
            timer?.cancel()
            timer = nil
            if let wake = nextWake(run.session, now: clock.now, armed: run.armedFor, beat: nextBeat(run)) {
                timer = Task(executorPreference: taskExecutor) { [clock] in
                    // Cancellation means a newer wake-up replaced this one.
                    guard (try? await clock.sleep(until: wake, tolerance: nil)) != nil else { return }
                    feed.yield(.event(.timeElapsed))
                }
            }
        }
        await silenceSleepSound(&run)
        if run.armedFor != nil, run.session.alarmDue == nil {
            // Ended before the alarm it was armed for: make sure it never starts by itself.
            await alarm.stop()
        }
        if run.session.outcome == nil {
            // The caller's task was cancelled before the session ended: cancel it properly so the
            // alarm stops and the records say so.
            let effects = run.session.handle(.cancel, at: clock.now)
            await perform(effects, in: &run)
            await onChange?(run.session, clock.now)
        }
        // What the outputs report while they wind down still becomes records.
        let closing = Task(executorPreference: taskExecutor) { await whenEnded() }
        if !run.notesEnded {
            for await wakeup in wakeups {
                if case .note(let note) = wakeup {
                    let now = clock.now
                    await observer.record(noteRecord(note, at: now, origin: run.origin ?? now))
                } else if case .notesEnded = wakeup {
                    break
                }
            }
        }
        await closing.value
        return run.session.outcome ?? .cancelled
    }

    // MARK: - Internals

    private enum Wakeup: Sendable {
        case event(SessionEvent)
        case note(SessionNote)
        /// `notes` has ended.
        case notesEnded
    }

    private func noteRecord(_ note: SessionNote, at instant: C.Instant, origin: C.Instant) -> SessionRecord {
        switch note {
        case .output(let change):
            var noteRecord = record(.output, at: instant, origin: origin, message: change.message)
            noteRecord.output = change.output
            return noteRecord
        case .warning(let message):
            return record(.warning, at: instant, origin: origin, message: message)
        case .wakeAlarm(let armed):
            var wake = record(.wakeAlarm, at: instant, origin: origin, message: armed.message)
            wake.until = seconds(origin.duration(to: instant.advanced(by: armed.firesIn)))
            wake.boottime = armed.bootSeconds
            return wake
        case .sink(let report):
            return sinkRecord(report, at: instant, origin: origin)
        case .hold(let what, let message):
            var hold = record(.hold, at: instant, origin: origin, message: message)
            hold.what = what.rawValue
            return hold
        case .terminal(let news):
            var terminal = record(.terminal, at: instant, origin: origin, message: news.message)
            switch news {
            case .background: terminal.what = "background"
            case .foreground: terminal.what = "foreground"
            case .suspendRefused: terminal.what = "suspend_refused"
            }
            return terminal
        case .guardian(let what, let message):
            var guardian = record(.guardian, at: instant, origin: origin, message: message)
            guardian.what = what
            return guardian
        }
    }

    private func sinkRecord(_ report: SinkReport, at instant: C.Instant, origin: C.Instant) -> SessionRecord {
        func line(_ what: String, _ sink: String?, _ message: String) -> SessionRecord {
            var line = record(.sink, at: instant, origin: origin, message: message)
            line.what = what
            line.sink = sink
            return line
        }
        switch report {
        case .routed(let sinks, let reasons, let missing):
            let lacking = missing.isEmpty ? "" : "; the server has no sink named \(missing.joined(separator: ", "))"
            return line("routed", sinks.joined(separator: ","), "the alarm plays on \(reasons.joined(separator: "; "))\(lacking)")
        case .fixed(let sink, let message): return line("fixed", sink, message)
        case .streamFixed(let sink, let message): return line("stream_fixed", sink, message)
        case .restored(let sink, let message): return line("restored", sink, message)
        case .leftAlone(let sink, let message): return line("left_alone", sink, message)
        case .unheard(let sink): return line("unheard", sink, "sink '\(sink)' carried the alarm and has not for 2 s: its mute and volume are checked again")
        case .escalated(let step, let message): return line("escalated_\(step.rawValue)", nil, message)
        case .recovered: return line("recovered", nil, "a sink's monitor carries the alarm again: what sounded beside the sound server stops")
        case .sinkLost(let sink, let message): return line("lost", sink, message)
        case .added(let sink, let message): return line("added", sink, message)
        case .unverified(let message): return line("unverified", nil, message)
        case .heard(let sink, let level, let after):
            let decibels = level > 0 ? (20 * log10(level) * 10).rounded() / 10 : -120
            var heard = record(.heard, at: instant, origin: origin,
                               message: "sink '\(sink)' carries the alarm (\(decibels) dBFS in its monitor, \((seconds(after) * 10).rounded() / 10) s after it was due)")
            heard.sink = sink
            heard.levelDbfs = decibels
            heard.after = seconds(after)
            return heard
        }
    }

    private struct RunState {
        var session: Session<C.Instant>
        var origin: C.Instant?
        var lastTick: CountdownTick?
        /// The alarm instant the output is armed for, and when it was armed.
        var armedFor: C.Instant?
        var armedAt: C.Instant?
        /// When the playing sleep sound ends (silent, device closed).
        var sleepSoundEnds: C.Instant?
        var notesEnded = false
        /// The heartbeat while holding: the start of the current cycle and the next pulse in it.
        var beat: (cycle: C.Instant, next: Int)?
        /// When the last heartbeat started (a restart within 0.2 s of it continues it instead).
        var beatStarted: C.Instant?
    }

    /// Beats while holding: starts a cycle when holding begins (or continues the last one when it
    /// started under 0.2 s ago), sends each pulse that is due, and stops when holding ends.
    private func updateHeartbeat(_ run: inout RunState, now: C.Instant) async {
        // Beats go to the emitters, and to a display as `heartbeat` records.
        guard !pulseSinks.isEmpty || showsCountdown else { return }
        guard run.session.phase == .holding else {
            run.beat = nil
            return
        }
        let (interval, pulses) = PulsePattern.heartbeat(bpm: heartbeatBPM)
        if run.beat == nil {
            if let started = run.beatStarted, started.duration(to: now) < .milliseconds(200) {
                run.beat = (started, 0)
            } else {
                run.beat = (now, 0)
                run.beatStarted = now
            }
        }
        while var beat = run.beat, beat.cycle.advanced(by: pulses[beat.next].offset) <= now {
            let pulse = pulses[beat.next]
            for sink in pulseSinks { sink.emit(intensity: pulse.intensity, duration: pulse.duration) }
            var beatRecord = record(.heartbeat, at: now, origin: run.origin ?? now)
            beatRecord.phase = .holding
            beatRecord.intensity = pulse.intensity
            await observer.record(beatRecord)
            beat.next += 1
            if beat.next == pulses.count {
                beat = (beat.cycle.advanced(by: interval), 0)
            }
            run.beat = beat
        }
    }

    /// When the next heartbeat pulse is due, while beating.
    private func nextBeat(_ run: RunState) -> C.Instant? {
        guard let beat = run.beat else { return nil }
        return beat.cycle.advanced(by: PulsePattern.heartbeat(bpm: heartbeatBPM).pulses[beat.next].offset)
    }

    /// Plays the sleep sound while releasing and napping, ending `armLead + sleepSoundGap` before
    /// the alarm the session predicts (`Session.undisturbedAlarm`), which does not move when the
    /// nap starts, so one stream runs from the release to its fade-out. Any other phase stops it,
    /// and so does the moment the end has come, just before arming: the alarm always finds the
    /// device closed.
    private func updateSleepSound(_ run: inout RunState, now: C.Instant) async {
        guard let sleepSound else { return }
        let end = run.session.undisturbedAlarm.map { $0.advanced(by: .zero - armLead - sleepSoundGap) }
        guard let end, end > now else {
            await silenceSleepSound(&run)
            return
        }
        guard end != run.sleepSoundEnds else { return }
        run.sleepSoundEnds = end
        await sleepSound.play(for: now.duration(to: end))
    }

    private func silenceSleepSound(_ run: inout RunState) async {
        guard let sleepSound, run.sleepSoundEnds != nil else { return }
        run.sleepSoundEnds = nil
        await sleepSound.stop()
    }

    /// Arms the output `armLead` before the expected alarm, and disarms it when that alarm is no
    /// longer expected (the session moved on, or the alarm moved).
    private func updateArming(_ run: inout RunState, now: C.Instant) async {
        let expected = run.session.expectedAlarm
        if let armed = run.armedFor, armed != expected {
            run.armedFor = nil
            // Started alarms are stopped through the session's own effects; this only disarms.
            if run.session.phase.isBeforeAlarm { await alarm.stop() }
        }
        guard let expected, run.armedFor == nil, now >= expected.advanced(by: .zero - armLead) else { return }
        // The time named (`--until`) is the nap's alarm in every phase, as the session rings it.
        let reason: AlarmReason = run.session.phase == .napping && run.session.napDeadline == expected || run.session.alarmAt == expected ? .nap : .max
        run.armedFor = expected
        run.armedAt = now
        await alarm.arm(reason: reason, after: now.duration(to: expected))
    }

    /// Performs effects in two passes: first what makes sound (or silence), so a slow reader of the
    /// records can never delay the alarm; then the records, in order, with an alarm's record after
    /// the `ringing` phase record it belongs to.
    private func perform(_ effects: [SessionEffect<C.Instant>], in run: inout RunState) async {
        var alarmRecords: [SessionRecord] = []
        var pending: [SessionEffect<C.Instant>] = []
        for effect in effects {
            switch effect {
            case .alarmStarted(let reason, let due):
                // Woken late (after a suspend), the alarm may be due before the sleep sound ended.
                await silenceSleepSound(&run)
                let starting = clock.now
                let report = await alarm.start(reason: reason)
                let written = clock.now
                let origin = run.origin ?? due
                for fallback in report.fallbacks {
                    alarmRecords.append(record(.output, at: written, origin: origin, message: fallback))
                }
                var alarmRecord = record(.alarm, at: written, origin: origin)
                alarmRecord.reason = reason
                alarmRecord.output = report.output
                alarmRecord.sound = alarmSound
                // The output measures from the deadline it was given: the due instant, or the moment
                // it was armed or started when that was later (a nap taken over by its guardian or
                // `resume` after its alarm was due). The lateness is from the due instant.
                let given = run.armedFor == due ? run.armedAt ?? starting : starting
                let behind = max(due.duration(to: given), .zero)
                alarmRecord.latenessMs = milliseconds(report.lateness.map { $0 + behind } ?? due.duration(to: written))
                alarmRecord.audioThread = report.audioThread
                alarmRecords.append(alarmRecord)
            case .alarmSilenced:
                await alarm.stop()
                pending.append(effect)
            default:
                pending.append(effect)
            }
        }
        for effect in pending {
            switch effect {
            case .phaseChanged(_, let to, let at):
                if run.origin == nil { run.origin = at }
                var phaseRecord = record(.phase, at: at, origin: run.origin ?? at)
                phaseRecord.phase = to
                if let until = phaseDeadline(run.session, phase: to), let origin = run.origin, to == run.session.phase {
                    phaseRecord.until = seconds(origin.duration(to: until))
                    phaseRecord.untilWall = wallClock().addingTimeInterval(clock.now.duration(to: until).secondsValue)
                }
                await observer.record(phaseRecord)
                if to == .ringing {
                    for alarmRecord in alarmRecords { await observer.record(alarmRecord) }
                    alarmRecords = []
                }
            case .maxEndsNapEarly(let max, let releasePlusNap):
                let message = "max \(max.compactDescription) is shorter than release + nap (\(releasePlusNap.compactDescription)): the alarm will ring at \(max.compactDescription) at the latest, ending the nap early"
                await observer.record(record(.warning, at: clock.now, origin: run.origin ?? clock.now, message: message))
            case .alarmSilenced:
                await observer.record(record(.alarmStopped, at: clock.now, origin: run.origin ?? clock.now))
            case .ended(let outcome, let at):
                var endRecord = record(.end, at: at, origin: run.origin ?? at)
                endRecord.phase = run.session.phase
                endRecord.outcome = outcome
                await observer.record(endRecord)
            case .adjusted(let change, let to):
                let now = clock.now
                let origin = run.origin ?? now
                var adjusted = record(.adjusted, at: now, origin: origin,
                                      message: "the \(run.session.phase == .snoozed ? "snooze" : "alarm") moved by \(change.signedDescription)")
                adjusted.phase = run.session.phase
                adjusted.until = seconds(origin.duration(to: to))
                await observer.record(adjusted)
            case .detached(let limit):
                let now = clock.now
                var detached = record(.detached, at: now, origin: run.origin ?? now,
                                      message: "the terminal went away: the nap goes on, and its alarm rings on its audio outputs until `snoozefuse stop` or for \(limit.compactDescription)")
                detached.phase = run.session.phase
                await observer.record(detached)
            case .alarmStarted:
                break
            }
        }
        for alarmRecord in alarmRecords { await observer.record(alarmRecord) }
    }

    private func record(_ kind: SessionRecord.Kind, at instant: C.Instant, origin: C.Instant, message: String? = nil) -> SessionRecord {
        SessionRecord(kind, elapsed: origin.duration(to: instant), wall: wallClock(), message: message)
    }

    /// The deadline of the timer that runs in `phase`.
    private func phaseDeadline(_ session: Session<C.Instant>, phase: Phase) -> C.Instant? {
        switch phase {
        case .releasing: session.releaseDeadline
        case .napping: session.nextDeadline
        case .ringing: session.ringLimitDeadline
        case .snoozed: session.snoozeDeadline
        case .holding: session.maxDeadline
        case .ready, .finished, .cancelled: nil
        }
    }

    private func countdownTick(_ session: Session<C.Instant>, now: C.Instant) -> CountdownTick? {
        guard !session.phase.isTerminal, session.phase != .ready else { return nil }
        let layout = RemainingTimeLayout(configured: session.currentTimerLength ?? .zero)
        // Holding shows no countdown: nothing runs down while the key is held but the failsafe.
        let deadline = session.phase == .holding ? nil : phaseDeadline(session, phase: session.phase)
        let remaining = deadline.map { now.duration(to: $0) }
        // Wall-clock times of the coming alarm and the failsafe, to the whole second: the same
        // instants give the same ticks.
        let wallNow = wallClock()
        func wall(_ instant: C.Instant?) -> Date? {
            instant.map { Date(timeIntervalSince1970: (wallNow.timeIntervalSince1970 + now.duration(to: $0).secondsValue).rounded()) }
        }
        let alarm: C.Instant? = switch session.phase {
        case .holding: [now.advanced(by: timers.release + timers.nap), session.maxDeadline].compactMap { $0 }.min()
        case .releasing: session.undisturbedAlarm
        case .napping: session.expectedAlarm
        case .snoozed: session.snoozeDeadline
        default: nil
        }
        // Compare whole seconds only, so equal ticks are recognised.
        return CountdownTick(phase: session.phase, remaining: remaining.map { .seconds(max(0, $0.components.seconds)) }, layout: layout,
                             total: session.phase == .holding ? nil : session.currentTimerLength, wakeAt: wall(alarm),
                             latestAt: session.phase.isBeforeAlarm ? wall(session.maxDeadline) : nil)
    }

    /// The next instant the driver must wake: the session's next deadline, or sooner the instant
    /// the displayed whole second changes.
    private func nextWake(_ session: Session<C.Instant>, now: C.Instant, armed: C.Instant?, beat: C.Instant?) -> C.Instant? {
        var wake = session.nextDeadline
        if let beat { wake = wake.map { Swift.min($0, beat) } ?? beat }
        if let expected = session.expectedAlarm, armed != expected {
            let armAt = expected.advanced(by: .zero - armLead)
            if armAt > now { wake = wake.map { Swift.min($0, armAt) } ?? armAt }
        }
        if showsCountdown, session.phase != .holding, let deadline = phaseDeadline(session, phase: session.phase) {
            let remaining = now.duration(to: deadline)
            if remaining > .zero {
                // The display shows floor(remaining) = F; it next changes just after remaining
                // reaches F, when it drops to F - 1.
                let shown = remaining.components.seconds
                let boundary = deadline.advanced(by: .seconds(-shown) + .nanoseconds(1))
                if boundary > now { wake = wake.map { Swift.min($0, boundary) } ?? boundary }
            }
        }
        return wake
    }

    private func seconds(_ duration: Duration) -> Double {
        (duration.secondsValue * 1000).rounded() / 1000
    }

    private func milliseconds(_ duration: Duration) -> Double {
        SessionRecord.milliseconds(duration)
    }
}

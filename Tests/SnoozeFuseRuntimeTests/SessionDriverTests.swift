import SnoozeFuseSystem
import Foundation
import Testing
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseTestSupport

// These doubles stay in this target: they conform to SnoozeFuseRuntime protocols, which SnoozeFuseTestSupport must not import.

/// Collects what the driver reports, in order.
final class RecordingObserver: SessionObserver {
    let records = Locked<[SessionRecord]>([])
    let ticks = Locked<[CountdownTick]>([])

    func record(_ record: SessionRecord) async { records.withLock { $0.append(record) } }
    func countdown(_ tick: CountdownTick) async { ticks.withLock { $0.append(tick) } }

    var phases: [(Phase, Double)] {
        records.withLock { $0.filter { $0.event == .phase }.map { ($0.phase!, $0.t) } }
    }
    var kinds: [SessionRecord.Kind] { records.withLock { $0.map(\.event) } }
    var lastPhase: Phase? { records.withLock { $0.last { $0.event == .phase }?.phase } }
    var ended: Bool { records.withLock { $0.contains { $0.event == .end } } }
}

/// An alarm output that remembers when it was started and stopped, in clock time.
final class RecordingAlarm: AlarmOutput {
    let clock: ManualClock
    let events = Locked<[(String, ManualClock.Instant)]>([])

    init(clock: ManualClock) { self.clock = clock }

    func arm(reason: AlarmReason, after delay: Duration) async {
        events.withLock { $0.append(("arm \(reason.rawValue) in \(delay.components.seconds)s", clock.now)) }
    }

    func start(reason: AlarmReason) async -> AlarmStartReport {
        events.withLock { $0.append(("start \(reason.rawValue)", clock.now)) }
        return AlarmStartReport(output: "test output")
    }

    func stop() async { events.withLock { $0.append(("stop", clock.now)) } }
}

/// An alarm output that, as the audio chain does, measures its lateness from the deadline it was
/// given (armed for, or started at when that was later): a fixed 2 ms past it.
final class MeasuringAlarm: AlarmOutput {
    func arm(reason: AlarmReason, after delay: Duration) async {}
    func start(reason: AlarmReason) async -> AlarmStartReport { AlarmStartReport(output: "test output", lateness: .milliseconds(2)) }
    func stop() async {}
}

/// A sleep sound that writes its calls into the alarm's log, so their order with arming shows.
final class RecordingSleepSound: SleepSoundOutput {
    let log: RecordingAlarm

    init(log: RecordingAlarm) { self.log = log }

    func play(for duration: Duration) async {
        log.events.withLock { $0.append(("sleep \(duration.components.seconds)s", log.clock.now)) }
    }

    func stop() async { log.events.withLock { $0.append(("sleep stop", log.clock.now)) } }
}

@Suite("Session driver on a manual clock")
struct SessionDriverTests {
    let clock = ManualClock()
    let observer = RecordingObserver()

    func makeDriver(_ timers: SessionTimers, countdown: Bool = false, alarm: RecordingAlarm? = nil,
                    sleepSound: Bool = false) -> (SessionDriver<ManualClock>, RecordingAlarm) {
        let alarm = alarm ?? RecordingAlarm(clock: clock)
        var driver = SessionDriver(
            clock: clock, timers: timers, alarm: alarm, observer: observer, showsCountdown: countdown,
            wallClock: { Date(timeIntervalSince1970: 0) }
        )
        if sleepSound { driver.sleepSound = RecordingSleepSound(log: alarm) }
        return (driver, alarm)
    }

    @Test func quickTestRunsReleaseNapRingAndRingLimitOnTime() async {
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(3)
        let (driver, alarm) = makeDriver(timers)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }

        // The driver sleeps until each deadline in turn, with no ticks in between, and wakes once
        // more to arm the output two seconds before the alarm.
        #expect(await clock.step() == .init(offset: .seconds(2)))
        #expect(await clock.step() == .init(offset: .seconds(5)))
        #expect(await clock.step() == .init(offset: .seconds(7)))
        #expect(await clock.step() == .init(offset: .seconds(10)))

        #expect(await run.value == .ringLimitReached)
        #expect(observer.phases.map(\.0) == [.releasing, .napping, .ringing, .finished])
        #expect(observer.phases.map(\.1) == [0, 2, 7, 10])
        #expect(observer.kinds == [.phase, .phase, .phase, .alarm, .alarmStopped, .phase, .end])
        let alarmRecord = observer.records.withLock { $0.first { $0.event == .alarm } }
        #expect(alarmRecord?.latenessMs == 0)
        #expect(alarmRecord?.reason == .nap)
        #expect(alarmRecord?.output == "test output")
        #expect(alarm.events.withLock { $0.map(\.0) } == ["arm nap in 2s", "start nap", "stop"])
        #expect(alarm.events.withLock { $0.map(\.1) } == [.init(offset: .seconds(5)), .init(offset: .seconds(7)), .init(offset: .seconds(10))])
        #expect(clock.sleeperCount == 0, "no sleeper is left behind")
    }

    /// A nap in hold mode whose key is never held, with a time named (`--until`): the driver arms
    /// the output before it and rings it then, for the nap, with no event from anywhere.
    @Test func aTimeNamedRingsWithNoHoldAtAll() async {
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(3)
        var (driver, alarm) = makeDriver(timers)
        driver.alarmAt = .init(offset: .seconds(60))
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: nil, inputs: inputs) }
        #expect(await clock.step() == .init(offset: .seconds(58)), "armed two seconds before")
        #expect(await clock.step() == .init(offset: .seconds(60)))
        #expect(await clock.step() == .init(offset: .seconds(63)))
        #expect(await run.value == .ringLimitReached)
        #expect(observer.phases.map(\.0) == [.ringing, .finished])
        #expect(observer.records.withLock { $0.first { $0.event == .alarm }?.reason } == .nap)
        #expect(alarm.events.withLock { $0.map(\.0) } == ["arm nap in 2s", "start nap", "stop"])
        #expect(clock.sleeperCount == 0, "no sleeper is left behind")
    }

    /// A nap taken over after its alarm was due (its guardian, `resume`): the lateness is from the
    /// original deadline, not from the moment the output was armed (a resume 5.19 s late said
    /// 8.19 ms). On time, it is the output's own measure.
    @Test(arguments: [(5.19, 5192.0), (0, 2.0)])
    func aTakenOverNapsLatenessCountsFromItsOriginalDeadline(_ late: Double, _ expected: Double) async {
        let due = ManualClock.Instant(offset: .seconds(10))
        await clock.advance(to: due.advanced(by: .milliseconds(Int64(late * 1000))))
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(1)
        var driver = SessionDriver(clock: clock, timers: timers, alarm: MeasuringAlarm(), observer: observer, showsCountdown: false,
                                   wallClock: { Date(timeIntervalSince1970: 0) })
        driver.initialSession = Session(timers: timers, resumingAlarmAt: late > 0 ? due : clock.now.advanced(by: .seconds(5)),
                                        reason: .nap, at: clock.now)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .timeElapsed, inputs: inputs) }
        while await clock.step(orUntil: { observer.ended }) != nil {}
        _ = await run.value
        let alarmRecord = observer.records.withLock { $0.first { $0.event == .alarm } }
        #expect(abs((alarmRecord?.latenessMs ?? -1) - expected) < 0.001, "\(String(describing: alarmRecord))")
        // Its records count from when it was taken up, and never go back (the alarm's was counted
        // from the due instant, the others from their own moments: 5.19, then 0).
        let times = observer.records.withLock { $0.map(\.t) }
        #expect(times == times.sorted(), "\(observer.records.withLock { $0.map { "\($0.event.rawValue) \($0.t)" } })")
        #expect(alarmRecord?.t == 0 || late == 0, "taken up late, it rings at once: t=0, \(String(describing: alarmRecord))")
    }

    @Test func theSleepSoundPlaysFromTheReleaseAndIsClosedBeforeTheAlarmIsArmed() async {
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(3)
        let (driver, alarm) = makeDriver(timers, sleepSound: true)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        while await clock.step(orUntil: { observer.ended }) != nil {}
        #expect(await run.value == .ringLimitReached)
        // One stream from the release through the nap (not restarted when the nap starts), ending
        // 2 s (arming) + 1 s before the alarm at 7 s; stopped for sure before arming.
        #expect(alarm.events.withLock { $0.map(\.0) } == ["sleep 4s", "sleep stop", "arm nap in 2s", "start nap", "stop"])
        #expect(alarm.events.withLock { $0.map(\.1) } == [0, 5, 5, 7, 10].map { ManualClock.Instant(offset: .seconds($0)) })
    }

    @Test func aNewHoldStopsTheSleepSoundAndTheNextReleaseStartsItAgain() async {
        let timers = SessionTimers(release: .seconds(2), nap: .seconds(5), max: .seconds(60), ringLimit: .seconds(1))
        let (driver, alarm) = makeDriver(timers, sleepSound: true)
        let (inputs, feed) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .holdBegan, inputs: inputs) }
        await waitUntil { observer.lastPhase == .holding }
        #expect(alarm.events.withLock { $0.isEmpty }, "no sleep sound while the key is held")
        await clock.advance(to: .init(offset: .seconds(1)))
        feed.yield(.holdEnded)
        await waitUntil { alarm.events.withLock { $0.count == 1 } }
        await clock.advance(to: .init(offset: .seconds(2)))
        feed.yield(.holdBegan)
        await waitUntil { alarm.events.withLock { $0.count == 2 } }
        await clock.advance(to: .init(offset: .seconds(3)))
        feed.yield(.holdEnded)
        while await clock.step(orUntil: { observer.ended }) != nil {}
        #expect(await run.value == .ringLimitReached)
        // Released at 1 s: alarm at 8 s, sound until 5 s. Held again at 2 s: stopped. Released at
        // 3 s: alarm at 10 s, sound until 7 s, stopped again when arming at 8 s.
        #expect(alarm.events.withLock { $0.map(\.0) } == ["sleep 4s", "sleep stop", "sleep 4s", "sleep stop", "arm nap in 2s", "start nap", "stop"])
        #expect(alarm.events.withLock { $0.map(\.1) } == [1, 2, 3, 8, 8, 10, 11].map { ManualClock.Instant(offset: .seconds($0)) })
    }

    @Test func cancellingWhileNappingStopsTheSleepSound() async {
        let (driver, alarm) = makeDriver(Preset.quickTest.timers, sleepSound: true)
        let (inputs, feed) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        #expect(await clock.step() == .init(offset: .seconds(2)))
        await waitUntil { observer.lastPhase == .napping }
        feed.yield(.cancel)
        #expect(await run.value == .cancelled)
        #expect(alarm.events.withLock { $0.map(\.0) } == ["sleep 4s", "sleep stop"])
    }

    @Test func inputsDismissAndSnoozeTheAlarm() async {
        var timers = Preset.quickTest.timers
        timers.snooze = .seconds(60)
        let (driver, alarm) = makeDriver(timers)
        let (inputs, feed) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }

        while observer.lastPhase != .ringing { await clock.step(orUntil: { observer.lastPhase == .ringing }) }
        feed.yield(.snooze(nil))
        await waitUntil { observer.lastPhase == .snoozed }
        #expect(await clock.step() == .init(offset: .seconds(67)))
        await waitUntil { observer.lastPhase == .ringing }
        feed.yield(.dismiss)
        #expect(await run.value == .dismissed)
        #expect(alarm.events.withLock { $0.map(\.0) } == ["arm nap in 2s", "start nap", "stop", "start nap", "stop"])
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingTheCallingTaskCancelsTheSessionAndStopsTheAlarm() async {
        let (driver, alarm) = makeDriver(Preset.quickTest.timers)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        while observer.lastPhase != .ringing { await clock.step(orUntil: { observer.lastPhase == .ringing }) }
        run.cancel()
        #expect(await run.value == .cancelled)
        #expect(observer.kinds.suffix(3) == [.alarmStopped, .phase, .end])
        #expect(alarm.events.withLock { $0.map(\.0) } == ["arm nap in 2s", "start nap", "stop"])
    }

    @Test func anArmedOutputIsDisarmedWhenTheSessionIsCancelledBeforeTheAlarm() async {
        let (driver, alarm) = makeDriver(Preset.quickTest.timers)
        let (inputs, feed) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        await clock.step()
        #expect(await clock.step() == .init(offset: .seconds(5)))
        await waitUntil { alarm.events.withLock { $0.count == 1 } }
        feed.yield(.cancel)
        #expect(await run.value == .cancelled)
        #expect(alarm.events.withLock { $0.map(\.0) } == ["arm nap in 2s", "stop"])
        #expect(!observer.kinds.contains(.alarm))
    }

    /// A `heard` record's message says what its field says, to the tenth of a second ("0s after
    /// it was due" beside `after` 0.7 before).
    @Test func aHeardRecordsMessageAgreesWithItsFields() async {
        let timers = SessionTimers(release: .seconds(30), nap: .seconds(600), max: .seconds(900), ringLimit: .seconds(1))
        let (driver, _) = makeDriver(timers)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let (notes, noteFeed) = AsyncStream.makeStream(of: SessionNote.self)
        noteFeed.yield(.sink(.heard(sink: "speakers", level: 0.3, after: .milliseconds(740))))
        let run = Task { await driver.run(startingWith: .start, inputs: inputs, notes: notes) }
        while await clock.step(orUntil: { observer.records.withLock { $0.contains { $0.event == .heard } } }) != nil {}
        let heard = observer.records.withLock { $0.first { $0.event == .heard } }
        #expect(heard?.after == 0.74 && heard?.levelDbfs == -10.5, "\(String(describing: heard))")
        #expect(heard?.message == "sink 'speakers' carries the alarm (-10.5 dBFS in its monitor, 0.7 s after it was due)", "\(String(describing: heard))")
        run.cancel()
        noteFeed.finish()
        while await clock.step(orUntil: { observer.ended }) != nil {}
        _ = await run.value
    }

    @Test func theMaxWarningIsRecordedOnceAtTheStart() async {
        let timers = SessionTimers(release: .seconds(30), nap: .seconds(600), max: .seconds(60), ringLimit: .seconds(1))
        let (driver, _) = makeDriver(timers)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        while await clock.step(orUntil: { observer.ended }) != nil {}
        #expect(await run.value == .ringLimitReached)
        let warnings = observer.records.withLock { $0.filter { $0.event == .warning } }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message == "max 1m is shorter than release + nap (10m30s): the alarm will ring at 1m at the latest, ending the nap early")
        let alarmRecord = observer.records.withLock { $0.first { $0.event == .alarm } }
        #expect(alarmRecord?.reason == .max)
        #expect(alarmRecord?.t == 60)
    }

    @Test func aCountdownWakesOncePerDisplayedSecondAndNeverFlickers() async {
        let timers = SessionTimers(release: .seconds(3), nap: .seconds(65), max: .seconds(600), ringLimit: .seconds(1))
        let (driver, _) = makeDriver(timers, countdown: true)
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        var wakeUps = 0
        while await clock.step(orUntil: { observer.ended }) != nil { wakeUps += 1 }
        #expect(await run.value == .ringLimitReached)
        // 3 s release + 65 s nap + 1 s ring: one wake-up per displayed second, plus the immediate
        // step from a whole second to the one below at each phase start, plus arming.
        #expect(wakeUps <= 3 + 65 + 1 + 3 + 1)
        let napping = observer.ticks.withLock { $0.filter { $0.phase == .napping } }
        #expect(napping.first?.remainingText == "1m05s")
        #expect(napping.allSatisfy { $0.layout == .minutesSeconds }, "the layout is fixed by the configured 65 s")
        #expect(napping.map(\.remainingText).contains("0m59s"))
        #expect(napping.last?.remainingText == "0m00s")
        let values = napping.compactMap { $0.remaining?.components.seconds }
        #expect(values == Array((0...65).reversed()), "every second shown once, in order")
    }

    @Test func withoutACountdownTheDriverWakesOnlyAtDeadlines() async {
        let (driver, _) = makeDriver(SessionTimers(release: .seconds(30), nap: .seconds(1200), max: .seconds(1800), ringLimit: .seconds(60)))
        let (inputs, _) = AsyncStream.makeStream(of: SessionEvent.self)
        let run = Task { await driver.run(startingWith: .start, inputs: inputs) }
        var wakeUps: [Duration] = []
        while let next = await clock.step(orUntil: { observer.ended }) { wakeUps.append(next.offset) }
        #expect(await run.value == .ringLimitReached)
        #expect(wakeUps == [.seconds(30), .seconds(1228), .seconds(1230), .seconds(1290)], "the deadlines and one wake to arm the output")
    }
}

@Suite("Event records")
struct SessionRecordTests {
    @Test func aRecordIsOneLineOfJSONWithOnlyTheFieldsThatApply() throws {
        let record = SessionRecord(event: .alarm, t: 7.009, wall: "2026-01-01T00:00:07.009Z", reason: .nap, latenessMs: 0.42, output: "terminal bell")
        let line = record.jsonLine()
        #expect(!line.contains("\n"))
        #expect(line == #"{"event":"alarm","lateness_ms":0.42,"output":"terminal bell","reason":"nap","t":7.009,"wall":"2026-01-01T00:00:07.009Z"}"#)
        let phase = SessionRecord(event: .phase, phase: .napping, t: 2, wall: "w", until: 7)
        #expect(phase.jsonLine() == #"{"event":"phase","phase":"napping","t":2,"until":7,"wall":"w"}"#)
    }
}

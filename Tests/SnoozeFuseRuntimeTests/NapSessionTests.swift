import SnoozeFuseSystem
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// Pulses handed to a sink, with the clock time they were handed over.
/// (Stays in this target: `PulseSink` is SnoozeFuseRuntime's, which SnoozeFuseTestSupport does not import.)
final class RecordingPulses: PulseSink {
    let clock: ManualClock
    let pulses = Locked<[(intensity: Double, at: ManualClock.Instant)]>([])
    let cancels = Locked(0)

    init(clock: ManualClock) { self.clock = clock }

    func emit(intensity: Double, duration: Duration) {
        pulses.withLock { $0.append((intensity, clock.now)) }
    }

    func cancel() { cancels.withLock { $0 += 1 } }
}

/// Collects a nap's records as they come out of its one stream.
final class RecordStream: Sendable {
    let records = Locked<[SessionRecord]>([])
    var kinds: [SessionRecord.Kind] { records.withLock { $0.map(\.event) } }
    func has(_ kind: SessionRecord.Kind) -> Bool { records.withLock { $0.contains { $0.event == kind } } }
    func last(_ kind: SessionRecord.Kind) -> SessionRecord? { records.withLock { $0.last { $0.event == kind } } }
}

@Suite("Nap session on a manual clock")
struct NapSessionTests {
    let clock = ManualClock()

    func makeNap(_ configuration: NapConfiguration, pulses: [any PulseSink] = [],
                 notes: AsyncStream<SessionNote> = AsyncStream { $0.finish() },
                 shutdown: @escaping @Sendable () async -> Void = {}) -> (NapSession<ManualClock>, RecordingAlarm) {
        let alarm = RecordingAlarm(clock: clock)
        let ports = NapPorts(clock: clock, executor: nil, alarm: alarm, pulses: pulses, notes: notes,
                             shutdown: shutdown, wallClock: { Date(timeIntervalSince1970: 0) })
        return (NapSession(configuration: configuration, ports: ports), alarm)
    }

    /// Reads every record of `nap` into `stream` while it runs, and returns how it ended.
    func consume(_ nap: NapSession<ManualClock>, into stream: RecordStream) -> Task<NapResult, Never> {
        let reader = Task { for await record in nap.records { stream.records.withLock { $0.append(record) } } }
        return Task {
            let result = await nap.run()
            await reader.value
            return result
        }
    }

    @Test func everyRecordComesOutOfOneStreamStampedOnTheSessionClock() async {
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(2)
        let (notes, noteFeed) = AsyncStream.makeStream(of: SessionNote.self)
        let (nap, _) = makeNap(NapConfiguration(timers: timers, presetName: "quick-test", hold: .none, showsCountdown: true),
                               notes: notes, shutdown: { noteFeed.finish() })
        let stream = RecordStream()
        let run = consume(nap, into: stream)
        await clock.advance(to: .init(offset: .seconds(3)))
        await waitUntil { nap.phase == .napping }
        // Something an output reports mid-nap is a record at the session's time, among the others.
        noteFeed.yield(.warning("the mixer did not answer"))
        await waitUntil { stream.has(.warning) }
        while await clock.step(orUntil: { stream.has(.end) }) != nil {}
        let result = await run.value
        #expect(result == NapResult(outcome: .ringLimitReached, interrupted: false))
        let warning = stream.last(.warning)
        #expect(warning?.t == 3 && warning?.message == "the mixer did not answer")
        let records = stream.records.withLock { $0 }
        // In order of time, countdown records among them (for displays, not events).
        #expect(zip(records, records.dropFirst()).allSatisfy { $0.t <= $1.t }, "\(records.map { ($0.event, $0.t) })")
        let countdown = records.filter { $0.event == .countdown }
        #expect(countdown.first?.countdown?.phase == .releasing)
        #expect(countdown.contains { $0.countdown?.remainingText == "4s" && $0.phase == .napping })
        #expect(countdown.allSatisfy { !$0.isEvent })
        #expect(records.filter(\.isEvent).map(\.event) == [.phase, .phase, .warning, .phase, .alarm, .alarmStopped, .phase, .end])
    }

    @Test func keysHoldsAdjustmentsAndTheDismissalGoInThroughOneEntry() async throws {
        let timers = SessionTimers(release: .seconds(2), nap: .seconds(30), max: .seconds(120))
        let pulses = RecordingPulses(clock: clock)
        let (nap, alarm) = makeNap(NapConfiguration(timers: timers, presetName: "test", hold: .key, bpm: 60),
                                   pulses: [pulses])
        let stream = RecordStream()
        let run = consume(nap, into: stream)
        // A key held (its first byte, then autorepeat) is the hold; the quiet after it, the release.
        nap.send(.key(.bytes([UInt8(ascii: "x")])))
        await waitUntil { nap.phase == .holding }
        nap.send(.key(.bytes([UInt8(ascii: "x"), UInt8(ascii: "x")])))
        await clock.advance(to: .init(offset: .milliseconds(1_500)))
        nap.send(.key(.quiet))
        await waitUntil { nap.phase == .releasing }
        // The heartbeat beat while the key was held (0, 0.3, 1.0, 1.3 s), each a record.
        #expect(pulses.pulses.withLock { $0.map(\.at.offset) } == [.zero, .milliseconds(300), .seconds(1), .milliseconds(1_300)])
        #expect(pulses.pulses.withLock { $0.map(\.intensity) } == [1, 0.7, 1, 0.7])
        #expect(stream.records.withLock { $0.filter { $0.event == .heartbeat }.count } == 4)
        await clock.advance(to: .init(offset: .milliseconds(3_500)))
        await waitUntil { nap.phase == .napping }
        // While napping a key is not a hold; `+` time goes in as a command: the alarm moves.
        nap.send(.adjust(.seconds(60)))
        await waitUntil { stream.has(.adjusted) }
        #expect(stream.last(.adjusted)?.until == 93.5, "released at 1.5 s: nap until 33.5 s, plus a minute")
        #expect(stream.last(.adjusted)?.message == "the alarm moved by +1m")
        while await clock.step(orUntil: { nap.phase == .ringing }) != nil {}
        #expect(alarm.events.withLock { $0.last?.1 } == .init(offset: .milliseconds(93_500)))
        // Ringing: a single key does not stop it (the default dismissal asks for a word)…
        nap.send(.key(.bytes([UInt8(ascii: "d"), 13])))
        await waitUntil { nap.keyPrompt.wrong }
        #expect(nap.phase == .ringing)
        // …the word of this ring, typed through the same entry, does.
        let word = try #require(nap.keyPrompt.word)
        nap.send(.key(.bytes(Array(word.utf8) + [13])))
        let result = await run.value
        #expect(result.outcome == .dismissed)
        #expect(pulses.cancels.withLock { $0 } >= 1, "the alarm pattern stops with the alarm")
    }

    @Test func aCancelFromCtrlCIsAnInterruption() async {
        let (nap, _) = makeNap(NapConfiguration(timers: Preset.basic.timers, presetName: "basic", hold: .none))
        let stream = RecordStream()
        let run = consume(nap, into: stream)
        await waitUntil { nap.phase == .releasing }
        nap.send(.cancel(interrupted: true))
        let result = await run.value
        #expect(result == NapResult(outcome: .cancelled, interrupted: true))
        #expect(stream.last(.end)?.outcome == .cancelled)
        #expect(clock.sleeperCount == 0, "no sleeper is left behind")
    }
}

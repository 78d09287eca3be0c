import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

typealias Chain = AlarmChain<Instant>
typealias ChainEffect = AlarmChainEffect<Instant>

/// The attempts the chain opened, in order, among `effects`.
func opens(_ effects: [ChainEffect]) -> [(attempt: Int, device: String, due: Instant?)] {
    effects.compactMap { if case .open(let attempt, let device, let due, _) = $0 { (attempt, device, due) } else { nil } }
}

/// The report among `effects`, if any.
func report(_ effects: [ChainEffect]) -> AlarmChainReport? {
    effects.lazy.compactMap { if case .report(let report) = $0 { report } else { nil } }.first
}

/// The output changes among `effects`.
func changes(_ effects: [ChainEffect]) -> [AlarmOutputChange] {
    effects.compactMap { if case .change(let change) = $0 { change } else { nil } }
}

/// Moves `chain` through every deadline up to `instant`, observing `observation`; all effects, in order.
func advance(_ chain: inout Chain, to instant: Instant, observing observation: AlarmChainObservation<Instant> = .init()) -> [ChainEffect] {
    var effects: [ChainEffect] = []
    while let next = chain.nextDeadline, next <= instant {
        effects += chain.handle(.timeElapsed(observation), at: next)
    }
    return effects
}

@Suite("Alarm output chain: transitions")
struct AlarmChainTableTests {
    @Test func armedDeviceWritesAtTheDueInstantAndStartReportsItsLateness() {
        var chain = Chain(device: "pulse")
        #expect(chain.devices == ["pulse", "default"])
        let armed = chain.handle(.arm(reason: .nap, due: at(2)), at: at(0))
        #expect(armed == [.open(attempt: 1, device: "pulse", due: at(2), position: .zero)])
        #expect(chain.nextDeadline == at(1), "the open has a second")
        #expect(chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0.1)) == [])
        #expect(chain.nextDeadline == at(3), "then the watchdog looks a second after the due instant")
        #expect(chain.handle(.firstWrite(attempt: 1, at: at(2.001)), at: at(2.001)) == [])
        let started = chain.handle(.start(reason: .nap), at: at(2.002))
        #expect(started == [.report(AlarmChainReport(output: "ALSA pulse", fallbacks: [], lateness: .milliseconds(1), onFallback: false))])
        #expect(chain.isSounding)
    }

    @Test func aDeviceThatFailsToOpenIsSkippedAndNamedInTheReport() {
        var chain = Chain(device: "nonexistent")
        let first = chain.handle(.start(reason: .nap), at: at(10))
        #expect(opens(first).map(\.device) == ["nonexistent"])
        let next = chain.handle(.openFailed(attempt: 1, reason: "Unknown PCM nonexistent"), at: at(10.01))
        #expect(opens(next).map(\.device) == ["default"])
        #expect(report(next) == nil, "start waits while a device is left")
        let last = chain.handle(.openFailed(attempt: 2, reason: "No such file or directory"), at: at(10.02))
        // Nothing left: the fallback sounds, and the report names both failures in order.
        #expect(last == [
            .startFallback,
            .report(AlarmChainReport(output: "terminal bell", fallbacks: [
                "ALSA nonexistent failed: Unknown PCM nonexistent",
                "ALSA default failed: No such file or directory",
            ], lateness: nil, onFallback: true)),
        ])
        #expect(chain.fallbackSounding)
        #expect(chain.mode == .idle)
    }

    @Test func anOpenThatHangsFallsThroughInTimeAndIsUsedWhenItCompletes() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.arm(reason: .nap, due: at(2)), at: at(0))
        // The open of pulse has not returned a second later: the chain moves on to default.
        let timedOut = advance(&chain, to: at(1))
        #expect(opens(timedOut).map(\.device) == ["default"])
        #expect(chain.hungOpens["pulse"]?.attempt == 1)
        _ = chain.handle(.openFailed(attempt: 2, reason: "no card"), at: at(1.1))
        #expect(chain.mode == .onFallback(device: "pulse"), "nothing left: the hung device is the one to wait for")
        let started = chain.handle(.start(reason: .nap), at: at(2))
        #expect(started.first == .startFallback)
        let fallbacks = report(started)?.fallbacks ?? []
        #expect(fallbacks.count == 2)
        #expect(fallbacks.first?.contains("ALSA open on PCM 'pulse' did not return within 1s") == true)
        // The reconnect is due 2 s after the alarm; the open still hangs, so it waits instead of opening again.
        let waiting = advance(&chain, to: at(4))
        #expect(opens(waiting).isEmpty)
        #expect(changes(waiting).first?.message.hasPrefix("reopening pulse waits: its open from 4s ago has not returned") == true)
        // The hung open returns at last, already writing: the alarm moves there and the bell stops.
        let back = chain.handle(.opened(attempt: 1, lastWrite: at(4.5)), at: at(4.5))
        #expect(back.first == .stopFallback)
        #expect(changes(back).map(\.kind) == [.restored])
        #expect(chain.mode == .playing)
        #expect(chain.reconnectAt == nil)
    }

    @Test func aDeviceThatOpensButNeverWritesHandsOverOneSecondAfterTheDueInstant() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.arm(reason: .nap, due: at(2)), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0.5))
        _ = chain.handle(.start(reason: .nap), at: at(2))
        #expect(advance(&chain, to: at(2.999)) == [])
        let watched = advance(&chain, to: at(3))
        #expect(watched.first == .abandon(attempt: 1), "asked to stop, never waited for")
        #expect(opens(watched).map(\.device) == ["default"])
        // Past the deadline nothing may stay silent while the next device opens: the bell at once.
        #expect(watched.contains(.startFallback))
        let fallbacks = report(watched)?.fallbacks ?? []
        #expect(fallbacks.first?.contains("ALSA PCM 'pulse' opened but accepted no frames within 1s") == true, "\(fallbacks)")
        #expect(fallbacks.last?.contains("nothing sounded within 1s of the alarm while ALSA default is still opening") == true)
        // default fails too: the lost device is the one to reconnect, the bell keeps sounding.
        let failed = chain.handle(.openFailed(attempt: 2, reason: "no card"), at: at(3.01))
        #expect(changes(failed).map(\.kind) == [.retryFailed])
        #expect(chain.mode == .onFallback(device: "pulse"))
        #expect(chain.reconnectAt == at(5.01))
    }

    @Test func aStalledDeviceIsLostAndReconnectedOnTheBackoffScheduleThenResumes() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0.1))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0.1)), at: at(0.1))
        // It writes until 10 s, then accepts nothing: lost 3 s after its last write.
        let playing = AlarmChainObservation(lastWrite: at(10), resumePosition: .milliseconds(9_400))
        #expect(advance(&chain, to: at(12.9), observing: playing).isEmpty)
        let lost = advance(&chain, to: at(13), observing: playing)
        #expect(lost.first == .abandon(attempt: 1))
        #expect(lost.contains(.startFallback))
        #expect(changes(lost).map(\.kind) == [.lost])
        #expect(changes(lost).first?.message.contains("stalled: it accepted no frames for 3s") == true)
        #expect(chain.resumePosition == .milliseconds(9_400))
        // Reopened 2 s, 4 s, 8 s, 8 s after each failure.
        var failedAt = at(13)
        var attempts: [Instant] = []
        for delay in [2, 4, 8, 8] {
            let due = failedAt.advanced(by: .seconds(delay))
            #expect(chain.reconnectAt == due)
            let reopened = advance(&chain, to: due)
            let attempt = try! #require(opens(reopened).first)
            #expect(attempt.device == "pulse")
            attempts.append(due)
            failedAt = due.advanced(by: .milliseconds(30))
            let failed = chain.handle(.openFailed(attempt: attempt.attempt, reason: "Connection refused"), at: failedAt)
            #expect(changes(failed).map(\.kind) == [.retryFailed])
        }
        #expect(chain.reconnectAttempts == 5)
        // The next one works: it resumes where the alarm was lost, and the bell stops.
        let resumed = advance(&chain, to: chain.reconnectAt!)
        let attempt = try! #require(resumed.first)
        guard case .open(let id, _, nil, let position) = attempt else {
            Issue.record("expected a reopen without a due instant: \(resumed)")
            return
        }
        #expect(position == .milliseconds(9_400))
        _ = chain.handle(.opened(attempt: id, lastWrite: nil), at: at(60))
        let back = chain.handle(.firstWrite(attempt: id, at: at(60.01)), at: at(60.01))
        #expect(back.first == .stopFallback)
        #expect(changes(back).first?.message == "ALSA pulse is back; the alarm resumes there at 9s")
        #expect(!chain.fallbackSounding && chain.isSounding)
    }

    @Test func aDeviceLostWithAnErrorHandsOverAtOnce() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.start(reason: .max), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        let lost = chain.handle(.ended(attempt: 1, failure: "Input/output error (EIO)", deviceLost: true, resumePosition: .seconds(4)), at: at(5))
        #expect(lost.first == .startFallback)
        #expect(changes(lost).first?.message == "ALSA pulse was lost mid-alarm (Input/output error (EIO)); the alarm continues on the terminal bell and pulse is reopened in 2s")
        #expect(chain.reconnectAt == at(7))
    }

    @Test func theSoundServerLostMidAlarmHandsOverToALSADefaultThenTheCardBesideTheBell() throws {
        var chain = Chain(device: nil, soundServer: true)
        #expect(chain.devices == ["sound server", "default", "sysdefault"])
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        // The server dies: the bell at once, and ALSA default (its plugin leads to the same dead
        // server) is opened in the same step, where the alarm was.
        let lost = chain.handle(.ended(attempt: 1, failure: "connection refused", deviceLost: true, resumePosition: .seconds(5)), at: at(5))
        #expect(lost.first == .startFallback)
        #expect(opens(lost).map(\.device) == ["default"])
        #expect(lost.contains(.open(attempt: 2, device: "default", due: nil, position: .seconds(5))))
        #expect(changes(lost).first?.message == "sound server was lost mid-alarm (connection refused); the alarm continues on the terminal bell; ALSA default, then ALSA sysdefault are tried now and sound server is reopened in 2s")
        // default fails: the card itself is next, still beside the bell.
        let next = chain.handle(.openFailed(attempt: 2, reason: "Connection refused"), at: at(5.1))
        #expect(opens(next).map(\.device) == ["sysdefault"])
        #expect(changes(next).map(\.message) == ["ALSA default in place of the sound server failed: Connection refused"])
        #expect(chain.fallbackSounding)
        // The card writes: it takes the alarm over and the bell stops; the server is not reopened.
        _ = chain.handle(.opened(attempt: 3, lastWrite: nil), at: at(5.2))
        let over = chain.handle(.firstWrite(attempt: 3, at: at(5.3)), at: at(5.3))
        #expect(over.first == .stopFallback)
        #expect(changes(over).first?.message == "ALSA sysdefault took the alarm over from the lost sound server; it resumes there at 5s")
        #expect(chain.mode == .playing && chain.current?.device == "sysdefault")
        #expect(chain.reconnectAt == nil)
        #expect(advance(&chain, to: at(30), observing: .init(lastWrite: at(29.9))).isEmpty)
    }

    @Test func whenNoDeviceTakesOverTheLostSoundServerIsReopenedOnItsSchedule() throws {
        var chain = Chain(device: nil, soundServer: true)
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        _ = chain.handle(.ended(attempt: 1, failure: "killed", deviceLost: true, resumePosition: .seconds(3)), at: at(3))
        #expect(chain.reconnectAt == at(5))
        // default opens but never writes (a plugin waiting on a frozen server); it is abandoned a
        // second later and sysdefault tried; the reconnect due meanwhile waits its turn.
        _ = chain.handle(.opened(attempt: 2, lastWrite: nil), at: at(3.1))
        let silent = advance(&chain, to: at(4.2))
        #expect(silent.contains(.abandon(attempt: 2)))
        #expect(opens(silent).map(\.device) == ["sysdefault"])
        #expect(chain.substitutes.isEmpty)
        let noCard = chain.handle(.openFailed(attempt: 3, reason: "cannot find card '0'"), at: at(4.3))
        #expect(opens(noCard).isEmpty)
        #expect(chain.fallbackSounding, "nothing took over: the bell goes on")
        // The server is reopened at its time and, when it writes, the alarm goes back to it.
        let reopen = advance(&chain, to: at(5))
        #expect(opens(reopen).map(\.device) == ["sound server"])
        let id = try #require(opens(reopen).first?.attempt)
        _ = chain.handle(.opened(attempt: id, lastWrite: nil), at: at(5.5))
        let back = chain.handle(.firstWrite(attempt: id, at: at(5.6)), at: at(5.6))
        #expect(changes(back).first?.message == "sound server is back; the alarm resumes there at 3s")
    }

    @Test func aReconnectDueWhileASubstituteOpensWaitsForTheNextTurn() throws {
        var chain = Chain(device: nil, soundServer: true,
                          limits: AlarmChainLimits(openTimeout: .seconds(5), reconnectDelays: [.seconds(1), .seconds(2)]))
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        _ = chain.handle(.ended(attempt: 1, failure: "killed", deviceLost: true, resumePosition: nil), at: at(1))
        // default's open hangs past the reconnect's time: the reconnect is moved on, not lost.
        let due = advance(&chain, to: at(2))
        #expect(opens(due).isEmpty)
        #expect(chain.reconnectAt == at(4))
        #expect(chain.current?.device == "default")
    }

    @Test func stopWinsOverEverythingPending() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.arm(reason: .nap, due: at(2)), at: at(0))
        // Dismissed before the open returned: nothing may sound afterwards.
        let stopped = chain.handle(.stop, at: at(0.5))
        #expect(stopped == [])
        #expect(!chain.isSounding && !chain.chainTried)
        #expect(chain.handle(.opened(attempt: 1, lastWrite: at(2)), at: at(2)) == [.abandon(attempt: 1)])
        #expect(chain.nextDeadline == nil)
        // A start after a stop begins afresh; one stopped while starting reports that it stayed silent.
        _ = chain.handle(.start(reason: .nap), at: at(10))
        let silent = chain.handle(.stop, at: at(10.1))
        #expect(report(silent) == AlarmChainReport(output: "none (stopped before it started)", fallbacks: [], lateness: nil, onFallback: false))
    }

    @Test func stopDuringAReconnectClosesNothingItDoesNotHaveAndSilencesTheFallback() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        _ = chain.handle(.ended(attempt: 1, failure: "EIO", deviceLost: true, resumePosition: nil), at: at(1))
        let reopening = advance(&chain, to: at(3))
        let id = try! #require(opens(reopening).first?.attempt)
        let stopped = chain.handle(.stop, at: at(3.2))
        #expect(stopped == [.stopFallback])
        #expect(chain.reconnectAt == nil)
        #expect(chain.handle(.opened(attempt: id, lastWrite: nil), at: at(3.5)) == [.abandon(attempt: id)])
    }

    @Test func stopClosesAPlayingDevice() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        #expect(chain.handle(.stop, at: at(1)) == [.close(attempt: 1)])
    }

    @Test func aWatchdogWokenLateByASuspendGivesTheDeviceAFreshPeriod() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.start(reason: .nap), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0))
        _ = chain.handle(.firstWrite(attempt: 1, at: at(0)), at: at(0))
        // Due to look at 1 s; the machine slept and it looks at 60 s, last write long ago.
        let stale = AlarmChainObservation(lastWrite: at(0.5), resumePosition: nil)
        #expect(chain.handle(.timeElapsed(stale), at: at(60)) == [])
        #expect(chain.nextDeadline == at(61))
        // Still nothing written at the next look: now it is lost.
        let lost = chain.handle(.timeElapsed(stale), at: at(61))
        #expect(lost.first == .abandon(attempt: 1))
    }

    @Test func nothingSoundingByTheDeadlineStartsTheFallbackEvenBeforeStartIsCalled() {
        var chain = Chain(device: "pulse")
        _ = chain.handle(.arm(reason: .nap, due: at(2)), at: at(0))
        _ = chain.handle(.opened(attempt: 1, lastWrite: nil), at: at(0.2))
        // The device opened, writes nothing; the session has not called start (it is late itself).
        let watched = advance(&chain, to: at(3))
        #expect(watched.contains(.startFallback))
        #expect(chain.fallbackSounding)
        let started = chain.handle(.start(reason: .nap), at: at(3.1))
        #expect(report(started)?.onFallback == true)
        #expect(report(started)?.fallbacks.contains { $0.contains("nothing sounded within 1s of the alarm") } == true)
    }
}

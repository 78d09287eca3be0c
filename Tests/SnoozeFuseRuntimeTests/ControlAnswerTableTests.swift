import SnoozeFuseSystem
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// A guardian answers every command a nap answers, in every phase, with the same result (issue 21,
/// item 4): the same table of (phase, command) on a nap started fresh and on a session taken over
/// where it stood, as a guardian or `resume` takes it, both on a manual clock.
@Suite("Control answers: a guardian answers as the nap would, in every phase")
struct ControlAnswerTableTests {
    enum Holder: String, CaseIterable, Sendable { case nap, guardian }
    enum Where: String, CaseIterable, Sendable { case napping, ringing, snoozed }

    static let requests: [(String, ControlRequest)] = [
        ("status", ControlRequest(.status)),
        ("add 60", ControlRequest(.add, seconds: 60)),
        ("add -1", ControlRequest(.add, seconds: -1)),
        ("snooze 30", ControlRequest(.snooze, seconds: 30)),
        ("stop", ControlRequest(.stop)),
        ("stop confirmed", ControlRequest(.stop, confirmed: true)),
    ]

    /// A nap with the alarm 5 s after its start (quick-test's 2 s release, then 5 s: a fresh nap
    /// naps from 2 s), brought to `phase`, and the answer to `request` there.
    func answer(_ request: ControlRequest, holder: Holder, in phase: Where, state: LiveSessionState? = nil) async -> ControlReply {
        let clock = ManualClock()
        var timers = Preset.quickTest.timers
        timers.ringLimit = .seconds(60)
        let alarm = RecordingAlarm(clock: clock)
        var ports = NapPorts(clock: clock, executor: nil, alarm: alarm, wallClock: { Date(timeIntervalSince1970: 0) })
        if holder == .guardian {
            // Taken over while napping: the alarm at its original instant, 7 s from the start.
            ports.initialSession = Session(timers: timers, resumingAlarmAt: clock.now.advanced(by: .seconds(7)), reason: .nap, at: clock.now)
        }
        let nap = NapSession(configuration: NapConfiguration(timers: timers, presetName: "quick-test", hold: .none, dismissal: .key),
                             ports: ports)
        let records = Task { for await _ in nap.records {} }
        let ended = Locked(false)
        let run = Task {
            let result = await nap.run()
            ended.withLock { $0 = true }
            return result
        }
        // The session's own phase, as the answer sees it. The guard (a minute) only keeps a session
        // that never gets there from hanging the run: a few seconds were once not enough when the
        // other suites held the cooperative pool's two threads.
        func reach(_ wanted: Phase) async -> Bool {
            for _ in 0 ..< 60_000 where nap.phase != wanted {
                await Task.yield()
                try? await Task.sleep(for: .milliseconds(1))
            }
            return nap.phase == wanted
        }
        await clock.advance(to: .init(offset: .seconds(3)))
        var reached = await reach(.napping)
        if reached, phase != .napping {
            await clock.advance(to: .init(offset: .seconds(8)))
            reached = await reach(.ringing)
        }
        if reached, phase == .snoozed {
            nap.send(.snooze(.seconds(120)))
            reached = await reach(.snoozed)
        }
        // As the nap's control thread answers: on a thread of its own (`snooze` and `add` wait there
        // for the session, run by the pool, to make and save the change).
        let reply = reached ? ((try? await onOwnThread { ControlAnswer.reply(to: request, session: nap, state: { state }) })
            ?? ControlReply(ok: false, message: "no thread for the answer", state: nil))
            : ControlReply(ok: false, message: "the session never showed \(phase.rawValue) (it shows \(nap.phase.rawValue))", state: nil)
        nap.send(.cancel(interrupted: false))
        while await clock.step(orUntil: { ended.withLock { $0 } }) != nil {}
        _ = await run.value
        await records.value
        return reply
    }

    @Test("the same answer from a nap and from its guardian", arguments: Where.allCases)
    func theSameAnswerWhoeverHoldsTheNap(_ phase: Where) async {
        for (name, request) in Self.requests {
            let fromNap = await answer(request, holder: .nap, in: phase)
            let fromGuardian = await answer(request, holder: .guardian, in: phase)
            #expect(fromGuardian.ok == fromNap.ok && fromGuardian.message == fromNap.message,
                    "\(phase) \(name): nap \(fromNap), guardian \(fromGuardian)")
        }
    }

    @Test func whatEachPhaseAnswers() async {
        // The table itself, for the nap and the guardian alike.
        let expected: [(Where, String, Bool, String)] = [
            (.napping, "status", true, "napping"), (.napping, "add 60", true, "alarm moved by +1m: it rings in "),
            (.napping, "snooze 30", false, "nothing to snooze: the nap is napping"),
            (.napping, "stop", false, "cancelling the nap needs a confirmation: its alarm will not ring"),
            (.napping, "stop confirmed", true, "nap cancelled"),
            (.ringing, "status", true, "ringing"), (.ringing, "add 60", false, "no alarm time to move while ringing"),
            (.ringing, "snooze 30", true, "snoozed: it rings again in "), (.ringing, "stop", true, "alarm stopped"),
            (.snoozed, "status", true, "snoozed"), (.snoozed, "add 60", true, "alarm moved by +1m: it rings in "),
            (.snoozed, "snooze 30", false, "nothing to snooze: the nap is snoozed"), (.snoozed, "stop", true, "alarm stopped"),
        ]
        for holder in Holder.allCases {
            for (phase, name, ok, message) in expected {
                let request = Self.requests.first { $0.0 == name }!.1
                let got = await answer(request, holder: holder, in: phase)
                // Where the answer says when it rings, the time left depends on the moment: its start.
                let matches = message.hasSuffix(" in ") ? got.message.hasPrefix(message) : got.message == message
                #expect(got.ok == ok && matches, "\(holder) \(phase) \(name): \(got)")
            }
        }
    }

    /// A length a command would never send (beyond a year, or not a number) is refused, not
    /// turned into milliseconds: `Int64(1e300 * 1000)` stopped the nap's process.
    @Test func aLengthBeyondAYearIsRefusedAndTheNapGoesOn() async {
        for seconds in [1e300, -1e300, 366 * 86_400 + 1, .infinity, .nan] {
            let add = await answer(ControlRequest(.add, seconds: seconds), holder: .nap, in: .napping)
            #expect(!add.ok && add.message.hasPrefix("not a length"), "add \(seconds): \(add)")
            let snooze = await answer(ControlRequest(.snooze, seconds: seconds), holder: .nap, in: .ringing)
            #expect(!snooze.ok && snooze.message.hasPrefix("not a length"), "snooze \(seconds): \(snooze)")
        }
        // A year either way is a length: later, the alarm moves (to a day at most); sooner, an alarm
        // a few seconds away cannot come sooner (never within 10 s), which is said, not sent.
        let later = await answer(ControlRequest(.add, seconds: 366 * 86_400), holder: .nap, in: .napping)
        #expect(later.ok && later.message.hasPrefix("alarm moved by +"), "\(later)")
        let sooner = await answer(ControlRequest(.add, seconds: -366 * 86_400), holder: .nap, in: .napping)
        #expect(!sooner.ok && sooner.message.hasPrefix("the alarm did not move"), "\(sooner)")
    }

    /// Only `status` carries the live state; every other answer is its few fields.
    @Test func onlyStatusCarriesTheLiveState() async throws {
        let text = """
            {"bootID":"b","detached":false,"holder":"nap","phase":"napping","pid":1,"setup":{"device":"default","fadeInSeconds":0,\
            "maxSeconds":1,"napSeconds":1,"presetName":"p","releaseSeconds":1,"snoozeSeconds":1,"soundName":"tone","volume":0},\
            "snoozes":0,"updated":{"bootSeconds":0,"wall":"","wallSeconds":0},"version":1}
            """
        let state = try JSONDecoder().decode(LiveSessionState.self, from: Data(text.utf8))
        for phase in Where.allCases {
            for (name, request) in Self.requests {
                let reply = await answer(request, holder: .nap, in: phase, state: state)
                #expect((reply.state != nil) == (name == "status"), "\(phase) \(name): \(reply)")
            }
        }
    }
}

import PropertyBased
import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// How a device behaves on one open, in a simulated world of faults.
struct DeviceScript: Sendable, CustomStringConvertible {
    enum Open: Sendable { case ok(Int), fail(Int), hang, hangThenOk(Int) }
    enum Then: Sendable { case playsOn, stalls(Int), fails(Int, lost: Bool) }
    var open: Open
    /// Milliseconds from the open (or the due instant) to the first write; nil: never writes.
    var firstWrite: Int?
    var then: Then
    var description: String { "\(open)/\(firstWrite.map(String.init) ?? "never")/\(then)" }
}

func deviceScriptGen() -> Generator<DeviceScript, some Sequence & SendableMetatype> {
    zip(Gen.int(in: 0...5), Gen.int(in: 0...3_000), Gen.int(in: 0...6), Gen.int(in: 0...3), Gen.int(in: 0...20_000)).map {
        openKind, openMs, writeKind, thenKind, thenMs -> DeviceScript in
        let open: DeviceScript.Open = switch openKind {
        case 0, 1: .ok(openMs % 900)
        case 2: .ok(openMs)
        case 3: .fail(openMs % 1_500)
        case 4: .hang
        default: .hangThenOk(openMs * 5)
        }
        let firstWrite: Int? = writeKind == 0 ? nil : writeKind == 1 ? 1_500 : writeKind * 40
        let then: DeviceScript.Then = switch thenKind {
        case 0: .playsOn
        case 1: .stalls(thenMs)
        case 2: .fails(thenMs, lost: true)
        default: .fails(thenMs, lost: false)
        }
        return DeviceScript(open: open, firstWrite: firstWrite, then: then)
    }
}

/// A run of the chain against scripted devices on virtual time, from arming (or a cold start) to
/// the dismissal, recording what actually sounded.
struct ChainSimulation {
    enum Pending: Comparable {
        case opened(Int), openFailed(Int), firstWrite(Int), ended(Int, String?, Bool), start, stop
        static func < (lhs: Pending, rhs: Pending) -> Bool { false }
    }

    struct Attempt {
        var device: String
        var script: DeviceScript
        var due: Instant?
        var openedAt: Instant?
        var writingFrom: Instant?
        /// When it stopped accepting frames (stalled, failed, abandoned).
        var silentFrom: Instant?
        var released = false
    }

    var chain: Chain
    var now = Instant(offset: .zero)
    var queue: [(Instant, Int, Pending)] = []
    var sequence = 0
    var attempts: [Int: Attempt] = [:]
    var scripts: [String: [DeviceScript]]
    var used: [String: Int] = [:]
    var fallbackOn = false
    /// When the fallback sounded, as intervals.
    var fallbackFrom: Instant?
    var fallbackIntervals: [(Instant, Instant)] = []
    let due: Instant
    let stopAt: Instant
    var stopped = false
    var afterStopSound: [String] = []
    var reconnectSchedules: [(at: Instant, due: Instant, attempts: Int)] = []
    var reconnectOpens: [Instant] = []
    var problems: [String] = []

    /// With `soundServer`, the chain starts on the sound server (scripts "sound server", "default"
    /// and "sysdefault"); otherwise on "want", then "default".
    init(devices: [String: [DeviceScript]], armed: Bool, stopAfter: Int, soundServer: Bool = false) {
        chain = soundServer ? Chain(device: nil, soundServer: true) : Chain(device: "want", limits: AlarmChainLimits())
        scripts = devices
        due = Instant(offset: .seconds(armed ? 2 : 0))
        stopAt = due.advanced(by: .milliseconds(stopAfter))
        if armed {
            apply(.arm(reason: .nap, due: due))
        }
        schedule(.start, at: due)
        schedule(.stop, at: stopAt)
    }

    mutating func schedule(_ pending: Pending, at instant: Instant) {
        sequence += 1
        queue.append((instant, sequence, pending))
    }

    mutating func apply(_ event: AlarmChainEvent<Instant>) {
        let reconnectBefore = chain.reconnectAt
        let effects = chain.handle(event, at: now)
        if let at = chain.reconnectAt, at != reconnectBefore {
            reconnectSchedules.append((now, at, chain.reconnectAttempts))
        }
        for effect in effects { perform(effect) }
        checkAfterEvent()
    }

    mutating func perform(_ effect: ChainEffect) {
        switch effect {
        case .open(let id, let device, let due, _):
            if stopped { afterStopSound.append("open \(device) at \(now)") }
            // A reopen of the lost device (not a device tried in place of a lost sound server).
            if due == nil, chain.mode == .onFallback(device: device) { reconnectOpens.append(now) }
            let list = scripts[device] ?? []
            let script = list.isEmpty ? DeviceScript(open: .fail(0), firstWrite: nil, then: .playsOn)
                : list[(used[device] ?? 0) % list.count]
            used[device, default: 0] += 1
            attempts[id] = Attempt(device: device, script: script, due: due)
            switch script.open {
            case .ok(let ms): schedule(.opened(id), at: now.advanced(by: .milliseconds(ms)))
            case .fail(let ms): schedule(.openFailed(id), at: now.advanced(by: .milliseconds(ms)))
            case .hang: break
            case .hangThenOk(let ms): schedule(.opened(id), at: now.advanced(by: .milliseconds(1_000 + ms)))
            }
        case .abandon(let id), .close(let id):
            release(id)
        case .startFallback:
            if stopped { afterStopSound.append("fallback at \(now)") }
            if !fallbackOn { fallbackFrom = now }
            fallbackOn = true
        case .stopFallback:
            if fallbackOn, let from = fallbackFrom { fallbackIntervals.append((from, now)) }
            fallbackOn = false
        case .change, .report:
            break
        }
    }

    /// The attempt stops playing (asked to stop): its thread ends soon after.
    mutating func release(_ id: Int) {
        guard var attempt = attempts[id], !attempt.released else { return }
        attempt.released = true
        if attempt.writingFrom != nil { attempt.silentFrom = min(attempt.silentFrom ?? now, now) }
        attempts[id] = attempt
        queue.removeAll { if case .firstWrite(id) = $0.2 { true } else if case .ended(id, _, _) = $0.2 { true } else { false } }
        if attempt.openedAt != nil { schedule(.ended(id, nil, false), at: now.advanced(by: .milliseconds(10))) }
    }

    /// What the driver sees of the current device: its last write (a period of 250 ms at a time).
    func observation() -> AlarmChainObservation<Instant> {
        guard let current = chain.current, let attempt = attempts[current.id], let from = attempt.writingFrom else { return .init() }
        let until = min(attempt.silentFrom ?? now, now)
        let periods = from.duration(to: until) / .milliseconds(250)
        return AlarmChainObservation(lastWrite: from.advanced(by: .milliseconds(250) * Int(periods)), resumePosition: .zero)
    }

    mutating func handle(_ pending: Pending) {
        switch pending {
        case .start:
            apply(.start(reason: .nap))
        case .stop:
            stopped = true
            apply(.stop)
            if fallbackOn { problems.append("the fallback still sounds after stop") }
        case .opened(let id):
            guard var attempt = attempts[id] else { return }
            attempt.openedAt = now
            attempts[id] = attempt
            if let delay = attempt.script.firstWrite {
                let start = max(now, attempt.due ?? now).advanced(by: attempt.due != nil && now <= attempt.due! ? .zero : .milliseconds(delay))
                schedule(.firstWrite(id), at: start)
            }
            apply(.opened(attempt: id, lastWrite: nil))
        case .openFailed(let id):
            apply(.openFailed(attempt: id, reason: "scripted failure"))
        case .firstWrite(let id):
            guard var attempt = attempts[id], !attempt.released else { return }
            attempt.writingFrom = now
            attempts[id] = attempt
            switch attempt.script.then {
            case .playsOn: break
            case .stalls(let ms):
                // It stops accepting frames; no event ever comes (a frozen sound server).
                attempts[id]?.silentFrom = now.advanced(by: .milliseconds(ms))
            case .fails(let ms, let lost):
                schedule(.ended(id, "scripted error", lost), at: now.advanced(by: .milliseconds(ms)))
            }
            apply(.firstWrite(attempt: id, at: now))
        case .ended(let id, let failure, let lost):
            // Its thread is done (failed, or stopped on request): it plays no more.
            if var attempt = attempts[id] {
                if attempt.writingFrom != nil { attempt.silentFrom = min(attempt.silentFrom ?? now, now) }
                attempt.released = true
                attempts[id] = attempt
            }
            apply(.ended(attempt: id, failure: failure, deviceLost: lost, resumePosition: .zero))
        }
    }

    /// Invariants after every event: before the dismissal, when nothing sounds a hand-over is due
    /// within the silence limit; after it, nothing sounds and nothing is reopened.
    mutating func checkAfterEvent() {
        if !stopped && now >= due && !chain.isSounding {
            if let next = chain.nextDeadline {
                if next > now.advanced(by: chain.limits.silenceTimeout) {
                    problems.append("at \(now): nothing sounds and the next look is only at \(next)")
                }
            } else {
                problems.append("at \(now): nothing sounds and nothing is due")
            }
        }
        if stopped {
            if chain.isSounding { problems.append("at \(now): sounding after the dismissal") }
            if chain.reconnectAt != nil { problems.append("at \(now): a reconnect is due after the dismissal") }
        }
    }

    /// Runs to the dismissal and some time after it.
    mutating func run() {
        let end = stopAt.advanced(by: .seconds(30))
        var steps = 0
        while steps < 100_000 {
            steps += 1
            let nextQueued = queue.min { ($0.0, $0.1) < ($1.0, $1.1) }
            let deadline = chain.nextDeadline
            if let deadline, deadline <= (nextQueued?.0 ?? deadline), deadline <= end {
                now = deadline
                apply(.timeElapsed(observation()))
            } else if let nextQueued, nextQueued.0 <= end {
                queue.removeAll { $0.1 == nextQueued.1 }
                now = max(now, nextQueued.0)
                handle(nextQueued.2)
            } else {
                break
            }
        }
        if fallbackOn, let from = fallbackFrom { fallbackIntervals.append((from, end)) }
    }

    /// Where the reconnects broke their schedule: 2 s, 4 s, 8 s, then 8 s after each failure,
    /// never counted from before the alarm; every reopen exactly when it was scheduled.
    func backoffProblems() -> [String] {
        var problems: [String] = []
        let delays = chain.limits.reconnectDelays
        for schedule in reconnectSchedules {
            let expected = delays[min(schedule.attempts - 1, delays.count - 1)]
            if max(schedule.at, due).duration(to: schedule.due) != expected {
                problems.append("attempt \(schedule.attempts) scheduled at \(schedule.at) for \(schedule.due), not \(expected) later")
            }
        }
        let scheduled = Set(reconnectSchedules.map(\.due))
        for reopen in reconnectOpens where !scheduled.contains(reopen) {
            problems.append("a reopen at \(reopen) that was never scheduled")
        }
        return problems
    }

    /// The longest stretch between the due instant and the dismissal when nothing actually sounded.
    func longestSilence() -> Duration {
        var intervals = fallbackIntervals
        for attempt in attempts.values {
            guard let from = attempt.writingFrom else { continue }
            intervals.append((from, attempt.silentFrom ?? stopAt))
        }
        intervals.sort { $0.0 < $1.0 }
        var covered = due
        var longest = Duration.zero
        for (from, to) in intervals where to > covered {
            if from > covered { longest = max(longest, covered.duration(to: min(from, stopAt))) }
            covered = max(covered, to)
            if covered >= stopAt { break }
        }
        if covered < stopAt { longest = max(longest, covered.duration(to: stopAt)) }
        return longest
    }
}

@Suite("Alarm output chain: properties over random fault sequences")
struct AlarmChainPropertyTests {
    /// Scripts for the requested device and `default`, whether the alarm is armed ahead, and when
    /// (ms after the due instant) it is dismissed.
    func scriptsGen() -> Generator<([DeviceScript], [DeviceScript], Int, Int), some Sequence & SendableMetatype> {
        zip(deviceScriptGen().array(of: 1...6), deviceScriptGen().array(of: 1...6), Gen.int(in: 0...1), Gen.int(in: 500...90_000))
    }

    /// Scripts for the sound server, ALSA `default` and `sysdefault`, armed, when it is dismissed.
    func serverScriptsGen() -> Generator<([DeviceScript], [DeviceScript], [DeviceScript], Int, Int), some Sequence & SendableMetatype> {
        zip(deviceScriptGen().array(of: 1...6), deviceScriptGen().array(of: 1...4), deviceScriptGen().array(of: 1...4),
            Gen.int(in: 0...1), Gen.int(in: 500...90_000))
    }

    func simulate(_ want: [DeviceScript], _ fallback: [DeviceScript], armed: Bool, stopAfter: Int) -> ChainSimulation {
        var simulation = ChainSimulation(devices: ["want": want, "default": fallback], armed: armed, stopAfter: stopAfter)
        simulation.run()
        return simulation
    }

    @Test func somethingSoundsOrAHandOverIsDueUntilTheDismissal() async {
        await propertyCheck(count: 500, input: scriptsGen()) { want, fallback, armed, stopAfter in
            let simulation = simulate(want, fallback, armed: armed == 1, stopAfter: stopAfter)
            #expect(simulation.problems.isEmpty, "\(simulation.problems.prefix(3)) scripts want \(want) default \(fallback)")
            // What was actually heard: no silence longer than the stall limit (a device that stops
            // accepting frames is only known to have stalled then).
            let silence = simulation.longestSilence()
            #expect(silence <= simulation.chain.limits.stallTimeout, "silent for \(silence): want \(want) default \(fallback)")
        }
    }

    @Test func aDismissalIsNeverLost() async {
        await propertyCheck(count: 500, input: scriptsGen()) { want, fallback, armed, stopAfter in
            let simulation = simulate(want, fallback, armed: armed == 1, stopAfter: stopAfter)
            #expect(simulation.afterStopSound.isEmpty, "\(simulation.afterStopSound): want \(want) default \(fallback)")
            #expect(!simulation.chain.isSounding && !simulation.chain.fallbackSounding)
            // Every device that opened was let go: nothing plays on after the dismissal.
            let playing = simulation.attempts.filter { $0.value.openedAt != nil && !$0.value.released }
            #expect(playing.isEmpty, "still playing: \(playing.keys.sorted()): want \(want) default \(fallback)")
        }
    }

    @Test func theReconnectBackoffIsExact() async {
        await propertyCheck(count: 500, input: scriptsGen()) { want, fallback, armed, stopAfter in
            let simulation = simulate(want, fallback, armed: armed == 1, stopAfter: stopAfter)
            let problems = simulation.backoffProblems()
            #expect(problems.isEmpty, "\(problems.prefix(3)): want \(want) default \(fallback)")
        }
    }

    @Test func theSoundServerLostHandsOverToALSAWithoutSilenceOrALostDismissal() async {
        await propertyCheck(count: 400, input: serverScriptsGen()) { server, alsaDefault, card, armed, stopAfter in
            var simulation = ChainSimulation(devices: ["sound server": server, "default": alsaDefault, "sysdefault": card],
                                             armed: armed == 1, stopAfter: stopAfter, soundServer: true)
            simulation.run()
            let scripts = "server \(server) default \(alsaDefault) sysdefault \(card)"
            #expect(simulation.problems.isEmpty, "\(simulation.problems.prefix(3)) \(scripts)")
            let silence = simulation.longestSilence()
            #expect(silence <= simulation.chain.limits.stallTimeout, "silent for \(silence): \(scripts)")
            #expect(simulation.afterStopSound.isEmpty, "\(simulation.afterStopSound): \(scripts)")
            let playing = simulation.attempts.filter { $0.value.openedAt != nil && !$0.value.released }
            #expect(playing.isEmpty, "still playing: \(playing.keys.sorted()): \(scripts)")
            let backoff = simulation.backoffProblems()
            #expect(backoff.isEmpty, "\(backoff.prefix(3)): \(scripts)")
        }
    }

    @Test func atMostOneDeviceIsCurrentAndNoOtherPlays() async {
        await propertyCheck(count: 300, input: scriptsGen()) { want, fallback, armed, stopAfter in
            var simulation = ChainSimulation(devices: ["want": want, "default": fallback], armed: armed == 1, stopAfter: stopAfter)
            // Stop short of the dismissal, in the middle of whatever is going on.
            let end = simulation.stopAt.advanced(by: .milliseconds(-1))
            while let next = [simulation.chain.nextDeadline, simulation.queue.map(\.0).min()].compactMap({ $0 }).min(), next <= end {
                if simulation.chain.nextDeadline == next {
                    simulation.now = next
                    simulation.apply(.timeElapsed(simulation.observation()))
                } else if let item = simulation.queue.min(by: { ($0.0, $0.1) < ($1.0, $1.1) }) {
                    simulation.queue.removeAll { $0.1 == item.1 }
                    simulation.now = max(simulation.now, item.0)
                    simulation.handle(item.2)
                }
            }
            let playing = simulation.attempts.filter { $0.value.openedAt != nil && !$0.value.released && $0.value.silentFrom == nil }
            let allowed = Set([simulation.chain.current?.id].compactMap { $0 })
            #expect(Set(playing.keys).isSubset(of: allowed), "playing \(playing.keys.sorted()) while current is \(allowed): want \(want) default \(fallback)")
        }
    }
}

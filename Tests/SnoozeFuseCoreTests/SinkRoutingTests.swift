import Foundation
import SnoozeFuseCore
import Testing

private let speakers = SinkDescription(name: "speakers", formFactor: "internal", bus: "pci", portType: "speaker")
private let headset = SinkDescription(name: "headset", formFactor: "headset", bus: "bluetooth")
private let headphones = SinkDescription(name: "jack", bus: "pci", portType: "headphones")
private let hdmi = SinkDescription(name: "hdmi", bus: "pci", portType: "hdmi")
private let unplugged = SinkDescription(name: "lineout", portType: "line", portAvailable: false)
private let plain = SinkDescription(name: "auto_null")
private let usbSpeaker = SinkDescription(name: "usb-speaker", formFactor: "speaker", bus: "usb")

@Suite("Routing: which sinks an alarm plays on")
struct SinkRoutingTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var sinks: [SinkDescription]
        var defaultSink: String?
        var route: AlarmRoute
        var expected: [String]
        var missing: [String] = []
        var testDescription: String { "\(route) with default \(defaultSink ?? "none") among \(sinks.map(\.name))" }
    }

    static let rows: [Row] = [
        // The default sink alone, when nobody wears it.
        Row(sinks: [speakers, headset], defaultSink: "speakers", route: .wake, expected: ["speakers"]),
        Row(sinks: [plain], defaultSink: "auto_null", route: .wake, expected: ["auto_null"]),
        // A headset, headphones or anything on Bluetooth as the default: the speakers too.
        Row(sinks: [speakers, headset], defaultSink: "headset", route: .wake, expected: ["headset", "speakers"]),
        Row(sinks: [headphones, speakers, hdmi], defaultSink: "jack", route: .wake, expected: ["jack", "speakers"]),
        Row(sinks: [SinkDescription(name: "bt", bus: "bluetooth"), usbSpeaker], defaultSink: "bt", route: .wake,
            expected: ["bt", "usb-speaker"]),
        // No sink says it is a speaker: every other sink nobody wears.
        Row(sinks: [headset, hdmi, plain, headphones], defaultSink: "headset", route: .wake, expected: ["headset", "hdmi", "auto_null"]),
        // A default with nothing plugged in is not heard either; unplugged sinks are not added.
        Row(sinks: [unplugged, speakers], defaultSink: "lineout", route: .wake, expected: ["lineout", "speakers"]),
        Row(sinks: [headset, unplugged], defaultSink: "headset", route: .wake, expected: ["headset"]),
        // No default named (or one the server lacks): the first sink stands for it.
        Row(sinks: [headset, speakers], defaultSink: nil, route: .wake, expected: ["headset", "speakers"]),
        Row(sinks: [speakers, headset], defaultSink: "gone", route: .defaultSink, expected: ["speakers"]),
        // --route default: the default only, whatever it is.
        Row(sinks: [speakers, headset], defaultSink: "headset", route: .defaultSink, expected: ["headset"]),
        // --route all: every sink but those with nothing plugged in.
        Row(sinks: [speakers, headset, unplugged, hdmi], defaultSink: "speakers", route: .all, expected: ["speakers", "headset", "hdmi"]),
        // --route NAMES: those, in order; missing ones are named; with none present, the default.
        Row(sinks: [speakers, headset, hdmi], defaultSink: "speakers", route: .sinks(["hdmi", "headset"]), expected: ["hdmi", "headset"]),
        Row(sinks: [speakers, headset], defaultSink: "speakers", route: .sinks(["hdmi", "headset"]), expected: ["headset"], missing: ["hdmi"]),
        Row(sinks: [speakers, headset], defaultSink: "headset", route: .sinks(["nowhere"]), expected: ["headset"], missing: ["nowhere"]),
        // No sink at all.
        Row(sinks: [], defaultSink: nil, route: .wake, expected: []),
    ]

    @Test(arguments: rows)
    func routes(_ row: Row) {
        let decision = SinkRouting.route(row.sinks, defaultSink: row.defaultSink, route: row.route)
        #expect(decision.sinks == row.expected)
        #expect(decision.missing == row.missing)
        #expect(decision.reasons.count == max(row.expected.count, 1))
    }

    @Test func routeParsesWordsAndLists() {
        #expect(AlarmRoute(parsing: "default") == .defaultSink)
        #expect(AlarmRoute(parsing: "wake") == .wake)
        #expect(AlarmRoute(parsing: "all") == .all)
        #expect(AlarmRoute(parsing: "speakers, headset") == .sinks(["speakers", "headset"]))
        #expect(AlarmRoute(parsing: "") == nil)
        #expect(AlarmRoute(parsing: "a,,b") == nil)
        #expect(AlarmRoute(parsing: ",") == nil)
    }
}

@Suite("Mute and volume fixed for the alarm, and put back")
struct SinkLevelFixTests {
    @Test func aMutedQuietSinkIsUnmutedAndRaisedAndTheOwnValuesAreKept() {
        let sink = SinkDescription(name: "speakers", muted: true, volumePercent: 5)
        let (fix, unmute, raise) = SinkLevelFix.plan(for: sink, original: sink, floor: 60, earlier: nil)
        #expect(unmute)
        #expect(raise == 60)
        #expect(fix == SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 5))
        #expect(SinkLevelFix.describe(sink, unmute: unmute, raiseTo: raise)
            == "sink 'speakers' was muted and at 5 % for the alarm: unmuted it and raised it to 60 % until it stops")
    }

    @Test func aSinkAlreadyLoudAndUnmutedIsLeftAlone() {
        let sink = SinkDescription(name: "s", volumePercent: 90)
        let (fix, unmute, raise) = SinkLevelFix.plan(for: sink, original: sink, floor: 60, earlier: nil)
        #expect(!unmute && raise == nil && !fix.changedSomething)
        #expect(SinkLevelFix.describe(SinkDescription(name: "s"), unmute: false, raiseTo: nil) == nil)
    }

    @Test func aMuteMadeWhileRingingIsUndoneButThePersonsOwnValuesStayThoseFoundFirst() {
        let original = SinkDescription(name: "s", muted: false, volumePercent: 30)
        let first = SinkLevelFix.plan(for: original, original: original, floor: 60, earlier: nil).fix
        #expect(first == SinkLevelFix(sink: "s", mutedBefore: nil, volumeBefore: 30))
        // A sleepy hand mutes it and turns it down while it rings: undone now, and what is put
        // back is still the person's own from before the alarm (not muted, 30 %).
        let again = SinkLevelFix.plan(for: SinkDescription(name: "s", muted: true, volumePercent: 10), original: original, floor: 60, earlier: first)
        #expect(again.unmute && again.raiseTo == 60)
        #expect(again.fix == SinkLevelFix(sink: "s", mutedBefore: false, volumeBefore: 30))
        // Found muted and loud enough, then turned down while ringing: raised now; put back muted at 80 %, as found.
        let mutedOriginal = SinkDescription(name: "m", muted: true, volumePercent: 80)
        let unmuted = SinkLevelFix.plan(for: mutedOriginal, original: mutedOriginal, floor: 60, earlier: nil).fix
        let lowered = SinkLevelFix.plan(for: SinkDescription(name: "m", volumePercent: 20), original: mutedOriginal, floor: 60, earlier: unmuted)
        #expect(lowered.fix == SinkLevelFix(sink: "m", mutedBefore: true, volumeBefore: 80))
    }
}

@Suite("Proof that the alarm is heard: its band shape in the monitor")
struct AlarmBandProfileTests {
    static let rate = 8_000

    static func tone(_ frequencies: [Double], seconds: Double = 1, amplitude: Float = 0.5, rate: Int = rate) -> [Float] {
        (0 ..< Int(seconds * Double(rate))).map { index in
            let t = Double(index) / Double(rate)
            return amplitude * Float(frequencies.reduce(0.0) { $0 + sin(2 * Double.pi * $1 * t) } / Double(frequencies.count))
        }
    }

    /// Deterministic white noise.
    static func noise(seconds: Double = 1, amplitude: Float = 0.3) -> [Float] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0 ..< Int(seconds * Double(rate))).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return amplitude * (Float(state >> 40) / Float(1 << 24) * 2 - 1)
        }
    }

    static let alarm = tone([880, 1320])
    static let written = AlarmBandProfile.of(alarm, sampleRate: rate)

    @Test func theAlarmAtAnyGainProvesItself() {
        let test = AlarmHeardTest()
        for gain: Float in [1, 0.5, 0.1] {
            let monitor = AlarmBandProfile.of(Self.alarm.map { $0 * gain }, sampleRate: Self.rate)
            #expect(monitor.similarity(to: Self.written) > 0.99)
            #expect(test.proves(monitor, written: Self.written), "gain \(gain)")
        }
    }

    @Test func whatWasWrittenAtFortyEightKilohertzMatchesTheMonitorAtEight() {
        let high = AlarmBandProfile.of(Self.tone([880, 1320], rate: 48_000), sampleRate: 48_000)
        // Other window lengths, other leakage: alike well above the proof's threshold (0.75).
        #expect(high.similarity(to: Self.written) > 0.85)
        #expect(AlarmHeardTest().proves(Self.written, written: high))
    }

    @Test func silenceAMutedSinkOrAFewPercentProveNothing() {
        let test = AlarmHeardTest()
        #expect(!test.proves(AlarmBandProfile.of([Float](repeating: 0, count: 8_000), sampleRate: Self.rate), written: Self.written))
        // A sink at 5 % volume (PulseAudio's cubic scale: 0.05³ of the amplitude).
        let quiet = AlarmBandProfile.of(Self.alarm.map { $0 * 0.000_125 }, sampleRate: Self.rate)
        #expect(!test.proves(quiet, written: Self.written))
    }

    @Test func otherAudioOnTheSinkIsNoProof() {
        let test = AlarmHeardTest()
        let music = AlarmBandProfile.of(Self.tone([196, 247, 294]), sampleRate: Self.rate)
        let hiss = AlarmBandProfile.of(Self.noise(), sampleRate: Self.rate)
        #expect(!test.proves(music, written: Self.written), "similarity \(music.similarity(to: Self.written))")
        #expect(!test.proves(hiss, written: Self.written), "similarity \(hiss.similarity(to: Self.written))")
    }

    @Test func anAnalyserUsedForManyBlocksProfilesEachAsIfItWereTheFirst() {
        // A stream keeps one analyser: nothing of one block may leak into the next.
        var analyser = AlarmBandAnalyser(sampleRate: Self.rate)
        let blocks = [Self.alarm, Self.noise(), Self.tone([196, 247, 294]), Self.alarm.map { $0 * 0.25 }]
        for block in blocks + blocks.reversed() {
            let reused = block.withUnsafeBufferPointer { analyser.profile(of: $0, channels: 1) }
            let fresh = AlarmBandProfile.of(block, sampleRate: Self.rate)
            #expect(reused == fresh)
        }
        // Interleaved stereo: the first channel is the one analysed.
        let stereo = zip(Self.alarm, Self.noise()).flatMap { [$0, $1] }
        var stereoAnalyser = AlarmBandAnalyser(sampleRate: Self.rate)
        #expect(stereo.withUnsafeBufferPointer { stereoAnalyser.profile(of: $0, channels: 2) } == Self.written)
    }

    @Test func theAlarmUnderQuieterOtherAudioStillProvesItself() {
        let mixed = zip(Self.alarm, Self.noise(amplitude: 0.05)).map { $0 + $1 }
        #expect(AlarmHeardTest().proves(AlarmBandProfile.of(mixed, sampleRate: Self.rate), written: Self.written))
    }
}

private func t(_ seconds: Double) -> Instant { at(seconds) }

@Suite("Heard or escalated: the watch over the monitors, on virtual time")
struct HeardWatchTests {
    @Test func eachSinksFirstProofIsReportedWithHowLateItCame() {
        var watch = HeardWatch(due: t(10), listening: ["a", "b"])
        #expect(watch.proof(sink: "a", level: 0.2, at: t(10.4)) == [.heard(sink: "a", level: 0.2, after: .milliseconds(400))])
        #expect(watch.proof(sink: "a", level: 0.2, at: t(10.6)) == [])
        #expect(watch.proof(sink: "b", level: 0.1, at: t(10.7)) == [.heard(sink: "b", level: 0.1, after: .milliseconds(700))])
    }

    @Test func noProofEscalatesEveryTwoSecondsInOrderThenStops() {
        var watch = HeardWatch(due: t(0), listening: ["a"])
        #expect(watch.nextDeadline == t(2))
        #expect(watch.timeElapsed(at: t(1.9)) == [])
        #expect(watch.timeElapsed(at: t(2)) == [.escalate(.fixLevels)])
        #expect(watch.nextDeadline == t(4))
        #expect(watch.timeElapsed(at: t(4)) == [.escalate(.addSinks)])
        #expect(watch.timeElapsed(at: t(6)) == [.escalate(.card)])
        #expect(watch.onCard && !watch.onFallback)
        #expect(watch.timeElapsed(at: t(8)) == [.escalate(.fallback)])
        #expect(watch.onCard && watch.onFallback)
        #expect(watch.nextDeadline == nil, "nothing is left to escalate")
        #expect(watch.timeElapsed(at: t(20)) == [])
    }

    @Test func proofAfterTheCardStopsItBeforeTheFallbackSounds() {
        var watch = HeardWatch(due: t(0), listening: ["a"])
        _ = watch.timeElapsed(at: t(2)); _ = watch.timeElapsed(at: t(4)); _ = watch.timeElapsed(at: t(6))
        #expect(watch.proof(sink: "a", level: 0.1, at: t(7)) == [.heard(sink: "a", level: 0.1, after: .seconds(7)), .recovered])
        #expect(!watch.onCard && !watch.onFallback)
        #expect(watch.nextDeadline == t(9), "proof holds for 2 s, or the card comes back")
        #expect(watch.timeElapsed(at: t(8)) == [], "the fallback was not due: proof came first")
    }

    @Test func proofAfterTheFallbackStopsBothAndSilenceAgainSoundsTheCardThenTheFallbackAgain() {
        var watch = HeardWatch(due: t(0), listening: ["a"])
        for second in [2.0, 4, 6, 8] { _ = watch.timeElapsed(at: t(second)) }
        #expect(watch.proof(sink: "a", level: 0.1, at: t(8.5)) == [.heard(sink: "a", level: 0.1, after: .milliseconds(8_500)), .recovered])
        #expect(!watch.onCard && !watch.onFallback)
        #expect(watch.nextDeadline == t(10.5))
        #expect(watch.timeElapsed(at: t(10.5)) == [.unheard(sink: "a"), .escalate(.card)])
        #expect(watch.onCard && !watch.onFallback)
        #expect(watch.timeElapsed(at: t(12.5)) == [.escalate(.fallback)])
        #expect(watch.onFallback)
        #expect(watch.proof(sink: "a", level: 0.1, at: t(13)) == [.recovered], "not a first proof: only the recovery")
    }

    @Test func aSinkMutedMidAlarmIsUnheardTwoSecondsAfterItsLastProof() {
        var watch = HeardWatch(due: t(0), listening: ["a", "b"])
        _ = watch.proof(sink: "a", level: 0.1, at: t(0.5))
        _ = watch.proof(sink: "b", level: 0.1, at: t(0.5))
        for step in stride(from: 1.0, through: 3.0, by: 0.5) { _ = watch.proof(sink: "b", level: 0.1, at: t(step)) }
        #expect(watch.nextDeadline == t(2.5))
        #expect(watch.timeElapsed(at: t(2.5)) == [.unheard(sink: "a")], "b still proves the alarm: no escalation")
        #expect(watch.proof(sink: "a", level: 0.1, at: t(3.2)) == [], "heard again: not a first proof")
    }

    @Test func withNoMonitorToReadItNeverEscalates() {
        var watch = HeardWatch(due: t(0), listening: [])
        #expect(watch.nextDeadline == nil)
        #expect(watch.timeElapsed(at: t(100)) == [])
        watch.listen(to: "late")
        #expect(watch.nextDeadline == t(2))
        watch.forget("late")
        #expect(watch.nextDeadline == nil)
    }
}

@Suite("A monitor read a block at a time, then rested: on virtual time")
struct MonitorDutyTests {
    @Test func aMonitorThatProvedRestsThenIsReadAgain() {
        var duty = MonitorDuty<Instant>(rest: .milliseconds(750))
        #expect(!duty.isResting("a") && duty.nextWake == nil, "read from the start")
        duty.proved("a", at: t(1.25))
        #expect(duty.isResting("a"))
        #expect(duty.nextWake == t(2))
        #expect(duty.rested(at: t(1.9)) == [])
        #expect(duty.rested(at: t(2)) == ["a"])
        #expect(!duty.isResting("a") && duty.nextWake == nil)
        #expect(duty.rested(at: t(5)) == [], "once")
    }

    @Test func eachSinkRestsOnItsOwnAndTheEarliestWakesFirst() {
        var duty = MonitorDuty<Instant>(rest: .seconds(1))
        duty.proved("b", at: t(0.5))
        duty.proved("a", at: t(0.25))
        #expect(duty.nextWake == t(1.25))
        #expect(duty.rested(at: t(1.3)) == ["a"])
        #expect(duty.nextWake == t(1.5))
        #expect(duty.rested(at: t(3)) == ["b"])
    }

    @Test func aForgottenSinkNeitherRestsNorWakes() {
        var duty = MonitorDuty<Instant>()
        duty.proved("a", at: t(0))
        duty.forget("a")
        #expect(!duty.isResting("a") && duty.nextWake == nil)
        #expect(duty.rested(at: t(10)) == [])
    }

    @Test func provedOnceASecondTheWatchNeverCallsAPlayingSinkUnheard() {
        // Blocks of a quarter second, each proving the alarm, then the default rest: over a
        // minute the watch sees proof often enough and neither escalates nor reports.
        var duty = MonitorDuty<Instant>()
        var watch = HeardWatch(due: t(0), listening: ["a"])
        var now = t(0), effects: [HeardWatch<Instant>.Effect] = []
        while now < t(60) {
            now = now.advanced(by: .milliseconds(250) + .milliseconds(40))   // a block, and the server's latency
            effects += watch.proof(sink: "a", level: 0.1, at: now)
            duty.proved("a", at: now)
            now = duty.nextWake ?? now
            effects += watch.timeElapsed(at: now)
            #expect(duty.rested(at: now) == ["a"])
        }
        #expect(effects == [.heard(sink: "a", level: 0.1, after: .milliseconds(290))])
    }
}

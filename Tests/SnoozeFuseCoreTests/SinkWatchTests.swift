import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

private func t(_ seconds: Double) -> Instant { at(seconds) }

private let speakers = SinkDescription(name: "speakers", formFactor: "internal", bus: "pci", portType: "speaker", monitor: "speakers.monitor")
private let headset = SinkDescription(name: "headset", formFactor: "headset", bus: "bluetooth", monitor: "headset.monitor")
private let hdmi = SinkDescription(name: "hdmi", bus: "pci", portType: "hdmi", monitor: "hdmi.monitor")

/// The reports among `effects`.
private func reports(_ effects: [SinkEffect]) -> [SinkReport] {
    effects.compactMap { if case .report(let report) = $0 { report } else { nil } }
}

/// The steps of the escalations among `effects`.
private func steps(_ effects: [SinkEffect]) -> [EscalationStep] {
    reports(effects).compactMap { if case .escalated(let step, _) = $0 { step } else { nil } }
}

/// The effects on the server (not reports, not the ledger).
private func server(_ effects: [SinkEffect]) -> [SinkEffect] {
    effects.filter {
        switch $0 {
        case .report, .fixes: false
        default: true
        }
    }
}

@Suite("What the alarm does on the sound server's sinks: a pure watch on virtual time")
struct SinkWatchTests {
    /// Opened on a headset: it plays there and on the speakers, says why, and fixes each stream,
    /// then each sink, as it opens.
    @Test func routesFixesTheStreamThenTheSinkAndKeepsWhatToPutBack() {
        var watch = SinkWatch<Instant>(settings: .init(route: .wake, floorPercent: 60))
        let quietSpeakers = SinkDescription(name: "speakers", muted: true, volumePercent: 20, formFactor: "internal", monitor: "m")
        let opened = watch.handle(.opened(sinks: [headset, quietSpeakers], defaultSink: "headset"), at: t(0))
        #expect(server(opened) == [.play("headset"), .play("speakers")])
        #expect(reports(opened).first == .routed(sinks: ["headset", "speakers"], reasons: [
            "headset: the default sink", "speakers: the default sink is a headset on bluetooth, worn by one person"], missing: []))
        let playing = watch.handle(.playing(sink: "speakers", stream: StreamLevel(muted: true, volumePercent: 10), monitor: .reading), at: t(0))
        // The stream first, then the sink.
        #expect(server(playing) == [.setStreamLevel("speakers", unmute: true, volume: 100), .setSinkLevel("speakers", unmute: true, volume: 60)])
        #expect(playing.contains(.fixes([SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 20, volumeSet: 60)])))
        #expect(reports(playing).map { if case .streamFixed = $0 { "stream" } else if case .fixed = $0 { "sink" } else { "?" } } == ["stream", "sink"])
        #expect(watch.fixes["speakers"] == SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 20, volumeSet: 60))
    }

    /// `--no-fix-volume`: nothing is set, neither stream nor sink.
    @Test func withoutAFloorNothingIsTouched() {
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: nil))
        _ = watch.handle(.opened(sinks: [SinkDescription(name: "s", muted: true, monitor: "m")], defaultSink: "s"), at: t(0))
        let playing = watch.handle(.playing(sink: "s", stream: StreamLevel(muted: true, volumePercent: 10), monitor: .reading), at: t(0))
        #expect(server(playing).isEmpty && watch.fixes.isEmpty)
    }

    /// A mute made while it rings is undone (the person's own from before the alarm is kept); the
    /// stream turned down in a mixer is set back.
    @Test func aMuteOrAMixerWhileItRingsIsUndone() {
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: 60))
        _ = watch.handle(.opened(sinks: [speakers], defaultSink: "speakers"), at: t(0))
        _ = watch.handle(.playing(sink: "speakers", stream: StreamLevel(muted: false, volumePercent: 100), monitor: .reading), at: t(0))
        var muted = speakers
        muted.muted = true
        let changed = watch.handle(.sinksChanged(sinks: [muted], changed: ["speakers"], defaultSink: "speakers"), at: t(3))
        #expect(server(changed) == [.setSinkLevel("speakers", unmute: true, volume: nil)])
        #expect(watch.fixes["speakers"] == SinkLevelFix(sink: "speakers", mutedBefore: false))
        let mixer = watch.handle(.streamChanged(sink: "speakers", level: StreamLevel(muted: false, volumePercent: 30)), at: t(4))
        #expect(server(mixer) == [.setStreamLevel("speakers", unmute: false, volume: 100)])
        #expect(reports(mixer) == [.streamFixed(sink: "speakers", message: "the alarm's own stream on sink 'speakers' was at 30 % while it rang: set it to 100 %")])
    }

    /// A sink it plays on goes away: its stream stops, nothing of it is put back, and with none
    /// left the alarm moves to where the route picks now.
    @Test func aLostSinkIsLeftForTheRoutesChoice() {
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: 60))
        let quiet = SinkDescription(name: "usb", volumePercent: 10, formFactor: "speaker", bus: "usb", monitor: "m")
        _ = watch.handle(.opened(sinks: [quiet, speakers], defaultSink: "usb"), at: t(0))
        _ = watch.handle(.playing(sink: "usb", stream: nil, monitor: .reading), at: t(0))
        #expect(watch.fixes["usb"] != nil)
        let lost = watch.handle(.sinksChanged(sinks: [speakers], changed: [], defaultSink: "speakers"), at: t(5))
        #expect(server(lost) == [.stop("usb"), .play("speakers")])
        #expect(lost.contains(.fixes([])), "nothing to put back on a sink that is gone")
        #expect(reports(lost) == [.sinkLost(sink: "usb", message: "sink 'usb' was removed; the alarm plays on 'speakers'")])
        // Until the output says it plays there, a failure there is not the watch's to handle.
        #expect(watch.handle(.streamFailed(sink: "speakers"), at: t(5.5)).isEmpty)
        _ = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .reading), at: t(5.5))
        let failed = watch.handle(.streamFailed(sink: "speakers"), at: t(6))
        #expect(server(failed).first == .stop("speakers"))
    }

    /// A sink that appears while it rings: `--route all` plays there too, once, with a report;
    /// `wake` and `default` keep the sinks they chose (decided, DESKTOP.md "Routing").
    @Test(arguments: [AlarmRoute.all, .wake, .defaultSink])
    func aSinkThatAppearsIsAddedOnlyUnderRouteAll(route: AlarmRoute) {
        var watch = SinkWatch<Instant>(settings: .init(route: route, floorPercent: nil))
        _ = watch.handle(.opened(sinks: [speakers], defaultSink: "speakers"), at: t(0))
        _ = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .reading), at: t(0))
        let appeared = watch.handle(.sinksChanged(sinks: [speakers, hdmi], changed: [], defaultSink: "speakers"), at: t(4))
        if route == .all {
            #expect(server(appeared) == [.play("hdmi")])
            #expect(reports(appeared) == [.added(sink: "hdmi", message: "sink 'hdmi' appeared while the alarm rings: it plays there too (--route all)")])
        } else {
            #expect(appeared.isEmpty)
        }
        // Listed again before its stream plays (or after): not asked twice.
        #expect(watch.handle(.sinksChanged(sinks: [speakers, hdmi], changed: ["speakers"], defaultSink: "speakers"), at: t(4.2)).isEmpty)
    }

    /// No proof: every 2 s the next step, each as effects: the streams checked and the sinks read
    /// again, the other sinks added, then the card and the fallback (said, for the runtime).
    @Test func noProofEscalatesStepByStepWithItsEffects() {
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: 60))
        _ = watch.handle(.opened(sinks: [speakers, hdmi, headset], defaultSink: "speakers"), at: t(0))
        _ = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .reading), at: t(0))
        _ = watch.handle(.started, at: t(1))
        #expect(watch.nextDeadline == t(3))
        #expect(watch.handle(.timeElapsed, at: t(2.9)).isEmpty)
        let fix = watch.handle(.timeElapsed, at: t(3))
        #expect(server(fix) == [.checkStream("speakers"), .rereadSinks])
        let add = watch.handle(.timeElapsed, at: t(5))
        #expect(server(add) == [.play("hdmi"), .play("headset")])
        let card = watch.handle(.timeElapsed, at: t(7))
        #expect(steps(card) == [.card])
        let fallback = watch.handle(.timeElapsed, at: t(9))
        #expect(steps(fallback) == [.fallback])
        #expect(watch.nextDeadline == nil)
        // Proof: heard, and the card and the fallback may stop.
        let proof = watch.handle(.carried(sink: "speakers", level: 0.3, writtenSeconds: 8), at: t(9.5))
        #expect(reports(proof) == [.heard(sink: "speakers", level: 0.3, after: .milliseconds(8_500)), .recovered])
    }

    /// A nap taken over after its deadline opens its streams as it rings: its monitor records only
    /// later (the output says how much later as a pause). That time is not silence: the first step
    /// comes 2 s after the monitor could first carry the alarm (a resumed nap escalated before its
    /// first proof, which then came "2 s late").
    @Test func theTimeBeforeAMonitorRecordsIsNotSilence() {
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: 60))
        _ = watch.handle(.opened(sinks: [speakers], defaultSink: "speakers"), at: t(0))
        _ = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .reading), at: t(0))
        _ = watch.handle(.started, at: t(1))
        _ = watch.handle(.paused(.milliseconds(900)), at: t(1.9))
        #expect(watch.nextDeadline == t(3.9))
        #expect(watch.handle(.timeElapsed, at: t(3.5)).isEmpty)
        let proof = watch.handle(.carried(sink: "speakers", level: 0.3, writtenSeconds: 0.5), at: t(3.6))
        #expect(reports(proof) == [.heard(sink: "speakers", level: 0.3, after: .milliseconds(2_600))])
        #expect(steps(watch.handle(.timeElapsed, at: t(3.9))).isEmpty)
    }

    /// The proof's floor: a block below the alarm's level (less 23 dB, lowered by --volume, the
    /// fade-in and the sink's volume) is no proof, said once; above it, heard.
    @Test func aBlockBelowTheFloorIsNoProof() {
        let level = AlarmLevel(volume: 0.8, fadeIn: .seconds(10))
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: 60, level: level))
        _ = watch.handle(.opened(sinks: [speakers], defaultSink: "speakers"), at: t(0))
        _ = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .reading), at: t(0))
        _ = watch.handle(.started, at: t(0))
        let floor = watch.floor(for: "speakers", writtenSeconds: 12) ?? 0
        #expect(abs(floor - AlarmLoudness.proofFloor(volume: 0.8, fade: 1, sinkVolumePercent: 100)) < 1e-12)
        let quiet = watch.handle(.carried(sink: "speakers", level: floor / 2, writtenSeconds: 12), at: t(12))
        #expect(reports(quiet).count == 1 && reports(quiet).first.map { if case .unverified(let text) = $0 { text.contains("below the") } else { false } } == true)
        #expect(watch.handle(.carried(sink: "speakers", level: floor / 2, writtenSeconds: 12.25), at: t(12.25)).isEmpty, "said once")
        // Early in the fade-in the floor is lower: the same level proves it there.
        #expect((watch.floor(for: "speakers", writtenSeconds: 0.5) ?? 1) < floor / 2)
        let loud = watch.handle(.carried(sink: "speakers", level: floor * 4, writtenSeconds: 13), at: t(13))
        #expect(reports(loud) == [.heard(sink: "speakers", level: floor * 4, after: .seconds(13))])
    }

    /// A sink whose monitor cannot be read is said once and never waited for.
    @Test func unreadableMonitorsAreSaidAndNotWaitedFor() {
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: nil))
        _ = watch.handle(.opened(sinks: [speakers], defaultSink: "speakers"), at: t(0))
        let playing = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .unreadable), at: t(0))
        #expect(reports(playing) == [.unverified("the monitor of sink 'speakers' cannot be read: the alarm plays there but is not verified")])
        _ = watch.handle(.started, at: t(0))
        #expect(watch.nextDeadline == nil)
    }

    /// What an earlier holder changed is kept to put back, and the person's own values in it win
    /// over what the sink shows now.
    @Test func earlierFixesAreKept() {
        let earlier = SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 5)
        var watch = SinkWatch<Instant>(settings: .init(route: .defaultSink, floorPercent: 60, earlierFixes: [earlier]))
        var lowered = speakers
        lowered.volumePercent = 30
        _ = watch.handle(.opened(sinks: [lowered], defaultSink: "speakers"), at: t(0))
        let playing = watch.handle(.playing(sink: "speakers", stream: nil, monitor: .reading), at: t(0))
        #expect(server(playing) == [.setSinkLevel("speakers", unmute: false, volume: 60)])
        // The person's own values are the earlier ones; the volume set is this alarm's.
        #expect(watch.fixes["speakers"] == SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 5, volumeSet: 60))
    }
}

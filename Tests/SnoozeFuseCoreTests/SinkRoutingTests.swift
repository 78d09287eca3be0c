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

/// Sinks as real servers describe them (`pactl list sinks` on PulseAudio 16 and on pipewire-pulse
/// 0.3: the name, `device.bus`, `device.form_factor`, `device.profile.name`, the active port's
/// name, description and type). A card on PCI calls itself `internal`, its HDMI outputs too.
enum RealSink {
    static let laptopSpeakers = SinkDescription(
        name: "alsa_output.pci-0000_00_1f.3.analog-stereo", description: "Built-in Audio Analog Stereo", formFactor: "internal", bus: "pci",
        portType: "speaker", portAvailable: nil, profile: "analog-stereo", portName: "analog-output-speaker", portDescription: "Speakers")
    static let lineOut = SinkDescription(
        name: "alsa_output.pci-0000_00_1b.0.analog-stereo", description: "Built-in Audio Analog Stereo", formFactor: "internal", bus: "pci",
        portType: "line", portAvailable: true, profile: "analog-stereo", portName: "analog-output-lineout", portDescription: "Line Out")
    static let headphoneJack = SinkDescription(
        name: "alsa_output.pci-0000_00_1f.3.analog-stereo", description: "Built-in Audio Analog Stereo", formFactor: "internal", bus: "pci",
        portType: "headphones", portAvailable: true, profile: "analog-stereo", portName: "analog-output-headphones", portDescription: "Headphones")
    /// PulseAudio: the port's type says HDMI.
    static let hdmiPulseAudio = SinkDescription(
        name: "alsa_output.pci-0000_00_1f.3.hdmi-stereo", description: "Built-in Audio Digital Stereo (HDMI)", formFactor: "internal", bus: "pci",
        portType: "hdmi", portAvailable: true, profile: "hdmi-stereo", portName: "hdmi-output-0", portDescription: "HDMI / DisplayPort")
    /// pipewire-pulse without port types: the profile and the port's name say HDMI.
    static let hdmiPipeWire = SinkDescription(
        name: "alsa_output.pci-0000_00_1f.3.hdmi-stereo-extra1", description: "Built-in Audio Digital Stereo (HDMI 2)", formFactor: "internal",
        bus: "pci", portType: nil, portAvailable: true, profile: "hdmi-stereo-extra1", portName: "hdmi-output-1", portDescription: "HDMI / DisplayPort 2")
    /// A graphics card's DisplayPort output, whose description says only DisplayPort.
    static let displayPort = SinkDescription(
        name: "alsa_output.pci-0000_01_00.1.iec958-stereo", description: "TU106 High Definition Audio Controller Digital Stereo", bus: "pci",
        portName: "iec958-stereo-output", portDescription: "DisplayPort 1")
    static let usbHeadset = SinkDescription(
        name: "alsa_output.usb-Logitech_G430_Gaming_Headset-00.analog-stereo", description: "G430 Gaming Headset Analog Stereo",
        formFactor: "headset", bus: "usb", portType: "headset", profile: "analog-stereo", portName: "analog-output", portDescription: "Analog Output")
    /// A2DP on PulseAudio (`bluez_sink`) and on PipeWire (`bluez_output`).
    static let bluetoothA2DP = SinkDescription(
        name: "bluez_sink.00_1B_66_AA_BB_CC.a2dp_sink", description: "WH-1000XM4", formFactor: "headphone", bus: "bluetooth",
        portType: "headphones", profile: "a2dp_sink", portName: "headphone-output", portDescription: "Headphone")
    static let bluetoothHFP = SinkDescription(
        name: "bluez_output.00_1B_66_AA_BB_CC.1", description: "WH-1000XM4", formFactor: "headset", bus: "bluetooth",
        portType: "headset", profile: "headset-head-unit", portName: "headset-output", portDescription: "Headset")
    /// A Bluetooth speaker: worn by nobody, but the server cannot tell.
    static let bluetoothSpeaker = SinkDescription(
        name: "bluez_output.11_22_33_44_55_66.1", description: "JBL Flip", formFactor: "speaker", bus: "bluetooth", profile: "a2dp-sink")
}

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
        // A display as the default (HDMI, DisplayPort): it may be off or have no speakers, so the
        // machine's speakers ring too; a headset is never added.
        Row(sinks: [RealSink.hdmiPulseAudio, RealSink.laptopSpeakers, RealSink.usbHeadset], defaultSink: RealSink.hdmiPulseAudio.name,
            route: .wake, expected: [RealSink.hdmiPulseAudio.name, RealSink.laptopSpeakers.name]),
        Row(sinks: [RealSink.laptopSpeakers, RealSink.hdmiPipeWire], defaultSink: RealSink.hdmiPipeWire.name,
            route: .wake, expected: [RealSink.hdmiPipeWire.name, RealSink.laptopSpeakers.name]),
        Row(sinks: [RealSink.displayPort, RealSink.lineOut], defaultSink: RealSink.displayPort.name,
            route: .wake, expected: [RealSink.displayPort.name, RealSink.lineOut.name]),
        // The speakers as the default: the display is not added.
        Row(sinks: [RealSink.laptopSpeakers, RealSink.hdmiPulseAudio], defaultSink: RealSink.laptopSpeakers.name,
            route: .wake, expected: [RealSink.laptopSpeakers.name]),
        Row(sinks: [RealSink.lineOut, RealSink.displayPort], defaultSink: RealSink.lineOut.name, route: .wake, expected: [RealSink.lineOut.name]),
        // Headphones or a headset as the default: the speakers, never the display beside them.
        Row(sinks: [RealSink.bluetoothA2DP, RealSink.hdmiPulseAudio, RealSink.laptopSpeakers], defaultSink: RealSink.bluetoothA2DP.name,
            route: .wake, expected: [RealSink.bluetoothA2DP.name, RealSink.laptopSpeakers.name]),
        Row(sinks: [RealSink.bluetoothHFP, RealSink.lineOut], defaultSink: RealSink.bluetoothHFP.name,
            route: .wake, expected: [RealSink.bluetoothHFP.name, RealSink.lineOut.name]),
        Row(sinks: [RealSink.usbHeadset, RealSink.displayPort, RealSink.laptopSpeakers], defaultSink: RealSink.usbHeadset.name,
            route: .wake, expected: [RealSink.usbHeadset.name, RealSink.laptopSpeakers.name]),
        Row(sinks: [RealSink.headphoneJack, RealSink.hdmiPipeWire], defaultSink: RealSink.headphoneJack.name,
            route: .wake, expected: [RealSink.headphoneJack.name, RealSink.hdmiPipeWire.name]),
        // A display with only a headset beside it: nothing more to add.
        Row(sinks: [RealSink.hdmiPulseAudio, RealSink.bluetoothA2DP], defaultSink: RealSink.hdmiPulseAudio.name,
            route: .wake, expected: [RealSink.hdmiPulseAudio.name]),
        // A Bluetooth speaker is on Bluetooth: it counts as worn, and the card's speakers ring too.
        Row(sinks: [RealSink.bluetoothSpeaker, RealSink.laptopSpeakers], defaultSink: RealSink.bluetoothSpeaker.name,
            route: .wake, expected: [RealSink.bluetoothSpeaker.name, RealSink.laptopSpeakers.name]),
    ]

    /// What each real sink is, as the routing sees it.
    @Test func realSinksAreToldApart() {
        for display in [RealSink.hdmiPulseAudio, RealSink.hdmiPipeWire, RealSink.displayPort] {
            #expect(display.isDisplay && !display.isSpeaker && !display.isPersonal, "\(display.name)")
        }
        for speaker in [RealSink.laptopSpeakers, RealSink.lineOut] {
            #expect(speaker.isSpeaker && !speaker.isDisplay && !speaker.isPersonal, "\(speaker.name)")
        }
        for worn in [RealSink.usbHeadset, RealSink.bluetoothA2DP, RealSink.bluetoothHFP, RealSink.headphoneJack, RealSink.bluetoothSpeaker] {
            #expect(worn.isPersonal && !worn.isDisplay && !worn.isSpeaker, "\(worn.name)")
        }
        #expect(RealSink.hdmiPulseAudio.kind == "display (HDMI) on pci")
        #expect(RealSink.displayPort.kind == "display (DisplayPort) on pci")
        let decision = SinkRouting.route([RealSink.hdmiPipeWire, RealSink.laptopSpeakers], defaultSink: RealSink.hdmiPipeWire.name, route: .wake)
        #expect(decision.reasons.last == "\(RealSink.laptopSpeakers.name): the default sink is a display (HDMI) on pci, which may be off, muted on its own or without speakers")
    }

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
        #expect(fix == SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 5, volumeSet: 60))
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
        #expect(first == SinkLevelFix(sink: "s", mutedBefore: nil, volumeBefore: 30, volumeSet: 60))
        // A sleepy hand mutes it and turns it down while it rings: undone now, and what is put
        // back is still the person's own from before the alarm (not muted, 30 %).
        let again = SinkLevelFix.plan(for: SinkDescription(name: "s", muted: true, volumePercent: 10), original: original, floor: 60, earlier: first)
        #expect(again.unmute && again.raiseTo == 60)
        #expect(again.fix == SinkLevelFix(sink: "s", mutedBefore: false, volumeBefore: 30, volumeSet: 60))
        // Found muted and loud enough, then turned down while ringing: raised now; put back muted at 80 %, as found.
        let mutedOriginal = SinkDescription(name: "m", muted: true, volumePercent: 80)
        let unmuted = SinkLevelFix.plan(for: mutedOriginal, original: mutedOriginal, floor: 60, earlier: nil).fix
        let lowered = SinkLevelFix.plan(for: SinkDescription(name: "m", volumePercent: 20), original: mutedOriginal, floor: 60, earlier: unmuted)
        #expect(lowered.fix == SinkLevelFix(sink: "m", mutedBefore: true, volumeBefore: 80, volumeSet: 60))
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

    /// A file that starts with 2 s of silence, or pauses for long between its beeps: the alarm's
    /// own silence does not count against any sink; 2 s of its sound without proof do.
    @Test func theAlarmsOwnLongSilencesMoveEveryDeadlineByTheirLength() {
        var watch = HeardWatch(due: t(0), listening: ["a"])
        // The file's first 2 s of silence, written in the first second.
        watch.paused(for: .seconds(1), at: t(0.5))
        watch.paused(for: .seconds(1), at: t(1))
        #expect(watch.nextDeadline == t(4))
        #expect(watch.timeElapsed(at: t(2)) == [], "no false escalation in the file's own silence")
        #expect(watch.proof(sink: "a", level: 0.1, at: t(3)) == [.heard(sink: "a", level: 0.1, after: .seconds(3))])
        // A pause of 1.5 s after the sink was heard: its deadline moves by as much.
        watch.paused(for: .milliseconds(1_500), at: t(3.5))
        #expect(watch.nextDeadline == t(6.5))
        #expect(watch.timeElapsed(at: t(5)) == [])
        #expect(watch.timeElapsed(at: t(6.5)) == [.unheard(sink: "a"), .escalate(.fixLevels)], "then its sound counts again")
        // A silence noted before the last escalation does not move the next step.
        watch.paused(for: .seconds(5), at: t(6))
        #expect(watch.nextDeadline == t(8.5))
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

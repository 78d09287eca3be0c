import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseSystem

/// One of the sound server's sinks as `snoozefuse doctor` reports it: how it is set now, what it
/// is, whether the nap's routing would play the alarm there, and (with `--listen`) whether a test
/// tone played there came back from its monitor.
public struct DoctorSink: Sendable, Hashable, Encodable {
    public var name: String
    /// Its name for people.
    public var description: String
    public var muted: Bool
    public var volumePercent: Int
    /// `device.form_factor` (`internal`, `speaker`, `headset`, …), when the server says.
    public var formFactor: String?
    /// `device.bus` (`pci`, `usb`, `bluetooth`, …), when the server says.
    public var bus: String?
    /// What kind of output it is, in words (`headset on bluetooth`, `display (HDMI) on pci`).
    public var kind: String
    /// The server's default sink.
    public var isDefault: Bool
    /// The nap's routing (`--route`) would play the alarm here.
    public var routed: Bool
    /// Why it would (the routing's words), when it would.
    public var reason: String?
    /// `--listen` only: whether the test tone was found in its monitor, and at what level (dBFS).
    public var heard: Bool?
    public var heardLevelDBFS: Double?
}

/// The sound server's part of `doctor`: its sinks as the nap would route and fix them, and with
/// `listen`, a short test tone on the routed sinks with the proof read from each monitor. Bounded:
/// the listing gets 1 s per call (``PulseConnection``), the tone at most `toneLimit`, and both run
/// on a thread of their own that is never waited on longer than that.
enum SinkDoctor {
    /// What was found: nil sinks when no sound server answers (`reason` says why).
    struct Finding: Sendable {
        var sinks: [DoctorSink]?
        var reason: String?
        /// The mute and volume the server gives a new alarm stream on the default sink (what it
        /// remembers for alarm streams); nil when it cannot be read.
        var alarmStream: PulseStreamLevel?
    }

    /// How long the test tone plays at most; it stops sooner once every routed sink carried it.
    static let toneLimit = Duration.seconds(3)

    static func examine(route: AlarmRoute, listen: Bool) -> Finding {
        let call = BoundedCall.start(named: "sf-doctor-sinks") { () -> Finding in
            do throws(PulseError) {
                let connection = try PulseConnection(application: "snoozefuse doctor")
                let (_, defaultSink) = try connection.serverInfo()
                let all = try connection.sinks().map(\.description)
                let decision = SinkRouting.route(all, defaultSink: defaultSink, route: route)
                var sinks = all.map { sink in
                    let reason = decision.reasons.first { $0.hasPrefix(sink.name + ": ") }.map { String($0.dropFirst(sink.name.count + 2)) }
                    return DoctorSink(name: sink.name, description: sink.description, muted: sink.muted, volumePercent: sink.volumePercent,
                                      formFactor: sink.formFactor, bus: sink.bus, kind: sink.kind, isDefault: sink.name == defaultSink,
                                      routed: decision.sinks.contains(sink.name), reason: reason)
                }
                let restored = defaultSink.flatMap { try? connection.restoredAlarmStreamLevel(sink: $0) }
                if listen { listenFor(route: route, on: &sinks) }
                return Finding(sinks: sinks, alarmStream: restored)
            } catch {
                return Finding(sinks: nil, reason: error.description)
            }
        }
        return call.wait(atMost: toneLimit + .seconds(3)) ?? Finding(sinks: nil, reason: "the sound server did not answer within \((toneLimit + .seconds(3)).compactDescription)")
    }

    /// Plays a tone (880 Hz, -12 dBFS, in 200 ms beeps) on the routed sinks without touching their
    /// mute or volume, and notes which monitors carried it.
    private static func listenFor(route: AlarmRoute, on sinks: inout [DoctorSink]) {
        let heard = HeardLevels()
        let plan = SinkPlan(route: route, floorPercent: nil, watcher: { SinkWatchDriver(plan: $0, now: { BootInstant.now }) }, report: { report in
            if case .heard(let sink, let level, _) = report { heard.note(sink, level) }
        })
        do throws(ALSAError) {
            let output = try PulseSinkOutput(plan: plan, configuration: PCMConfiguration(sampleRate: 48_000, channels: 2))
            defer { output.close() }
            let rate = output.format.sampleRate, channels = output.format.channels
            let block = rate / 10
            var samples = [Float](repeating: 0, count: block * channels)
            var frame = 0
            let deadline = BootInstant.now.advanced(by: toneLimit)
            let routed = Set(sinks.filter(\.routed).map(\.name))
            while BootInstant.now < deadline, !routed.isSubset(of: heard.sinks) {
                for index in 0 ..< block {
                    let time = Double(frame + index) / Double(rate)
                    let on = time.truncatingRemainder(dividingBy: 0.4) < 0.2
                    let value = on ? Float(0.25 * sin(2 * Double.pi * 880 * time)) : 0
                    for channel in 0 ..< channels { samples[index * channels + channel] = value }
                }
                frame += block
                try samples.withUnsafeBufferPointer { buffer throws(ALSAError) in try output.write(buffer) }
            }
            try? output.drop()
        } catch {
            // Nothing played: every routed sink stays unheard, and the listing says so.
        }
        let levels = heard.levels
        for index in sinks.indices where sinks[index].routed {
            sinks[index].heard = levels[sinks[index].name] != nil
            sinks[index].heardLevelDBFS = levels[sinks[index].name].map { ($0 > 0 ? 20 * log10($0) : -120).rounded(toPlaces: 1) }
        }
    }

    /// The checks for the sinks, one line each, routed sinks first; `audible` when at least one
    /// routed sink would carry the alarm (muted or quiet ones count when the nap fixes them).
    static func checks(_ finding: Finding, fixesVolume: Bool,
                       floor: Int = SinkLevelFix.defaultFloorPercent) -> (checks: [DoctorCheck], audible: Bool) {
        guard let sinks = finding.sinks else { return ([], false) }
        var checks: [DoctorCheck] = []
        var audible = false
        for sink in sinks where sink.routed {
            let what = "\(sink.name) (\(sink.isDefault ? "the default, " : "")\(sink.kind), \(sink.muted ? "muted" : "not muted"), \(sink.volumePercent) %)"
            let why = sink.reason.map { " (\($0))" } ?? ""
            let quiet = sink.muted || sink.volumePercent < floor
            let fixLater = "the nap unmutes it and raises it to \(floor) % while the alarm rings, then puts it back"
            let fixNow = "pactl set-sink-mute \(sink.name) 0; pactl set-sink-volume \(sink.name) \(floor)%"
            switch (sink.heard, quiet) {
            case (true?, _):
                audible = true
                checks.append(DoctorCheck(check: "sink", verdict: .ok,
                                          detail: "\(what): the alarm plays here\(why); the test tone came back from its monitor at \(sink.heardLevelDBFS.map { "\($0)" } ?? "?") dBFS"))
            case (false?, true) where fixesVolume, (nil, true) where fixesVolume:
                audible = true
                // Nothing to fix: the nap does it. Said as a tip, with what makes it heard now.
                checks.append(DoctorCheck(check: "sink", verdict: .ok,
                                          detail: "\(what): the alarm plays here\(why); \(fixLater)"
                                              + (sink.heard == false ? " (the test tone did not come back from its monitor, as it is \(sink.muted ? "muted" : "low"))" : ""),
                                          fix: "to hear it now too: \(fixNow)"))
            case (false?, _):
                checks.append(DoctorCheck(check: "sink", verdict: .problem,
                                          detail: "\(what): the alarm plays here\(why), but the test tone did not come back from its monitor",
                                          fix: quiet ? "nap without --no-fix-volume, or \(fixNow)" : "check `pactl list sinks` for \(sink.name), or route the alarm elsewhere (nap --route)"))
            case (nil, true):
                checks.append(DoctorCheck(check: "sink", verdict: .problem, detail: "\(what): the alarm plays here\(why), silenced",
                                          fix: "nap without --no-fix-volume, or \(fixNow)"))
            case (nil, false):
                audible = true
                checks.append(DoctorCheck(check: "sink", verdict: .ok, detail: "\(what): the alarm plays here\(why)"))
            }
        }
        if let stream = finding.alarmStream, stream.muted || stream.volumePercent < 100 {
            let found = [stream.muted ? "muted" : nil, stream.volumePercent < 100 ? "at \(stream.volumePercent) %" : nil].compactMap { $0 }
                .joined(separator: " and ")
            let detail = "the sound server gives a new alarm stream \(found) (it remembers what a mixer once set for alarm streams: module-stream-restore, or WirePlumber's restore-stream)"
            let clear = "to clear it now: `pactl list sink-inputs` while an alarm plays, then `pactl set-sink-input-mute N 0` and `pactl set-sink-input-volume N 100%`"
            checks.append(fixesVolume
                ? DoctorCheck(check: "alarm stream", verdict: .ok,
                              detail: detail + "; the nap unmutes its stream and sets it to 100 % as it rings, before any sink (and the server then remembers that)",
                              fix: clear)
                : DoctorCheck(check: "alarm stream", verdict: .problem, detail: detail + ", and --no-fix-volume leaves it so: the alarm would be \(stream.muted ? "silent" : "quiet")",
                              fix: "nap without --no-fix-volume, or \(clear)"))
            if !fixesVolume, stream.muted { audible = false }
        }
        for sink in sinks where !sink.routed {
            checks.append(DoctorCheck(check: "sink", verdict: .ok,
                                      detail: "\(sink.name) (\(sink.kind), \(sink.muted ? "muted" : "not muted"), \(sink.volumePercent) %): not used by the alarm with this route"))
        }
        return (checks, audible)
    }

}

/// What the monitors carried, noted on the tone's thread.
private final class HeardLevels: Sendable {
    private let found = Locked<[String: Double]>([:])

    func note(_ sink: String, _ level: Double) { found.withLock { $0[sink] = max($0[sink] ?? 0, level) } }
    var levels: [String: Double] { found.withLock { $0 } }
    var sinks: Set<String> { Set(levels.keys) }
}

extension Double {
    fileprivate func rounded(toPlaces places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}

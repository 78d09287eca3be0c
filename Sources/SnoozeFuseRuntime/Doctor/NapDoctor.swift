import Foundation
import Glibc
import SnoozeFuseAudio
public import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem

/// One thing that decides whether an alarm is heard, as `snoozefuse doctor` examined it.
public struct DoctorCheck: Sendable, Hashable, Encodable {
    public enum Verdict: String, Sendable, Hashable, Encodable {
        /// Fine.
        case ok
        /// The alarm is still heard, but something it relies on is missing (waking from suspend,
        /// keeping the machine awake, a plugin).
        case warning
        /// The alarm would not be heard (or not on this output) until it is fixed.
        case problem
    }

    /// What was examined: `output`, `volume`, `keep-awake`, `wake-alarm`, `real-time-clock`,
    /// `plugins`, `store`.
    public var check: String
    public var verdict: Verdict
    /// What was found.
    public var detail: String
    /// What to do about it; for an `ok` check, what could still be better (a tip: nothing needs
    /// fixing); nil when nothing.
    public var fix: String?
}

/// What `snoozefuse doctor` found.
public struct DoctorReport: Sendable, Hashable, Encodable {
    public var checks: [DoctorCheck]
    /// Whether an alarm would be heard: on the sound server, a routed sink that is (or that the
    /// nap makes) audible, and with `listen`, that gave the test tone back; without one, the output
    /// the nap uses first, or `default` after it, opens and makes sound, and the system volume is
    /// neither muted nor at zero.
    public var audible: Bool
    /// The sound server's sinks (nil when no server answers, or `--device` names an ALSA PCM).
    public var sinks: [DoctorSink]?
}

/// Examines the machine as a nap depends on it (issue 15): which outputs open and the system
/// volume, the system bus and the inhibitor, CAP_WAKE_ALARM and the real-time clock, the plugin
/// folders, the store. Every probe is bounded in time (an output or mixer gets 1 s, a bus call
/// 3 s). Blocking: call it from a command, not from a nap's loop.
public enum NapDoctor {
    /// - Parameters:
    ///   - device: the output the nap would use first (`--device`, `default` by default).
    ///   - route: where the nap would play on the sound server (`--route`).
    ///   - fixesVolume: whether the nap would fix the sinks' mute and volume (`--no-fix-volume`).
    ///   - floorPercent: the volume it would raise them to (`--system-volume`, 60 % without it).
    ///   - listen: play a short test tone on the routed sinks and read it back from their monitors.
    ///   - environment: where the folders are found (this process's environment when nil).
    public static func examine(device: String = "default", route: AlarmRoute = .wake, fixesVolume: Bool = true,
                               floorPercent: Int = SinkLevelFix.defaultFloorPercent,
                               listen: Bool = false, environment: [String: String]? = nil) -> DoctorReport {
        var checks: [DoctorCheck] = []
        // `default` means the sound server first (AlarmChain), ALSA after it.
        let server = device == "default" ? SinkDoctor.examine(route: route, listen: listen) : nil
        if let server {
            checks += serverChecks(server, listen: listen)
        } else if listen {
            checks.append(DoctorCheck(check: "sound server", verdict: .warning, detail: "--listen plays on the sound server, which the nap does not use with --device \(device)",
                                      fix: "leave out --device to check the sound server's sinks"))
        }
        let outputs = examineOutputs(device: device)
        checks += outputs.checks
        let sinks = server.map { SinkDoctor.checks($0, fixesVolume: fixesVolume, floor: floorPercent) }
        checks += sinks?.checks ?? []
        // On the sound server the sinks are the volume; the ALSA mixer only matters without one.
        let volume = server?.sinks == nil ? examineVolume(device: device) : nil
        if let volume { checks.append(volume) }
        checks.append(examineKeepAwake())
        checks += examineWakeAlarm()
        checks.append(examinePlugins())
        checks.append(examineKeyHold())
        checks.append(examineDesktopHold(environment: environment ?? ProcessInfo.processInfo.environment))
        checks.append(examineStore(environment: environment ?? ProcessInfo.processInfo.environment))
        let audible = if let sinks, server?.sinks != nil { sinks.audible } else { outputs.audible && volume?.verdict != .problem }
        return DoctorReport(checks: checks, audible: audible, sinks: server?.sinks)
    }

    /// Whether the sound server answers, and where the alarm goes when it does not.
    private static func serverChecks(_ finding: SinkDoctor.Finding, listen: Bool) -> [DoctorCheck] {
        guard let sinks = finding.sinks else {
            return [DoctorCheck(check: "sound server", verdict: listen ? .warning : .ok,
                                detail: "no sound server answers (\(finding.reason ?? "no reason given")): the alarm plays through ALSA",
                                fix: listen ? "start PulseAudio or PipeWire (`pactl info` shows whether one answers) to check its sinks" : nil)]
        }
        guard !sinks.isEmpty else {
            return [DoctorCheck(check: "sound server", verdict: .warning, detail: "the sound server answers but has no sink: the alarm plays through ALSA",
                                fix: "check `pactl list sinks`")]
        }
        let routed = sinks.filter(\.routed).map(\.name)
        return [DoctorCheck(check: "sound server", verdict: .ok,
                            detail: "the sound server answers with \(sinks.count) sink\(sinks.count == 1 ? "" : "s"); the alarm plays on \(routed.joined(separator: ", "))")]
    }

    // MARK: - Checks

    /// Outputs that write to no speaker: they open everywhere and prove nothing.
    private static func isSilent(_ name: String) -> Bool {
        name == "null" || name.hasPrefix("file")
    }

    /// The nap plays on `device`, then on `default`, then rings the terminal bell: the alarm is
    /// heard when the first of those that opens makes sound. Only those two are opened (1 s each):
    /// probing every PCM would take a second for each that hangs.
    private static func examineOutputs(device: String) -> (checks: [DoctorCheck], audible: Bool) {
        do {
            // Listing (without opening anything) proves alsa-lib's configuration loads.
            _ = try DeviceListing.list(probe: false)
        } catch {
            return ([DoctorCheck(check: "output", verdict: .problem, detail: "the ALSA devices cannot be listed: \(error)",
                                 fix: "install alsa-lib's configuration (Debian: libasound2, libasound2-plugins) and check `aplay -L`")], false)
        }
        let fix = "start the sound server (`pactl info` for PulseAudio), or choose a device that opens with --device"
            + " (`snoozefuse devices` lists them and whether each opens)"
        var checks: [DoctorCheck] = []
        let chosen = DeviceListing.probe(device)
        if chosen.opens == true {
            guard isSilent(device) else {
                checks.append(DoctorCheck(check: "output", verdict: .ok, detail: "\(device) opens for playback"))
                return (checks, true)
            }
            // It opens, so the nap plays there and never falls back: nothing is heard.
            checks.append(DoctorCheck(check: "output", verdict: .problem, detail: "\(device) opens but writes to no speaker",
                                      fix: "use it to test, not to wake up: leave out --device, or name one that makes sound"))
            return (checks, false)
        }
        checks.append(DoctorCheck(check: "output", verdict: device == "default" ? .problem : .warning,
                                  detail: "\(device) does not open: \(chosen.error ?? "no reason given")", fix: fix))
        guard device != "default" else { return (checks, false) }
        let fallback = DeviceListing.probe("default")
        if fallback.opens == true {
            checks.append(DoctorCheck(check: "output", verdict: .ok, detail: "the nap falls back to default, which opens for playback"))
            return (checks, true)
        }
        checks.append(DoctorCheck(check: "output", verdict: .problem,
                                  detail: "default does not open either: \(fallback.error ?? "no reason given"); only the terminal bell would ring",
                                  fix: fix))
        return (checks, false)
    }

    private struct MixerReading: Sendable {
        var mixer = "default"
        var element = ""
        var percent: Int?
        var muted = false
        var error: String?
    }

    /// The volume of the mixer that `device` plays through (``MixerOfDevice``: the card it names,
    /// else the default card's).
    private static func examineVolume(device: String) -> DoctorCheck? {
        let reading = BoundedCall.start(named: "sf-doctor-mix") { () -> MixerReading? in
            guard let name = MixerOfDevice.name(for: device) else { return nil }
            do {
                let mixer = try SystemMixerVolume(card: name)
                defer { mixer.restore() }
                return MixerReading(mixer: name, element: mixer.elementName, percent: mixer.foundPercent, muted: mixer.foundMuted)
            } catch {
                return MixerReading(mixer: name, error: "\(error)")
            }
        }.wait(atMost: .seconds(1))
        guard let reading else {
            return DoctorCheck(check: "volume", verdict: .warning, detail: "the mixer of \(device) did not answer within 1s",
                               fix: "check the sound server (`pactl info`); `nap --system-volume 80` sets the volume for the alarm")
        }
        // null and file have no mixer: the output check says they write to no speaker.
        guard let reading else { return nil }
        let which = reading.mixer == "default" ? "the default mixer" : "the mixer \(reading.mixer) (of \(device))"
        if let error = reading.error {
            return DoctorCheck(check: "volume", verdict: .warning, detail: "the system volume cannot be read from \(which): \(error)",
                               fix: "check it yourself (`alsamixer -D \(reading.mixer)`, or `pactl get-sink-volume @DEFAULT_SINK@` on a sound server)")
        }
        let level = reading.percent.map { "\($0) %" } ?? "unknown"
        if reading.muted || reading.percent == 0 {
            let fix = ["default", "pulse", "pipewire"].contains(reading.mixer)
                ? "unmute it (`pactl set-sink-mute @DEFAULT_SINK@ 0`, `pactl set-sink-volume @DEFAULT_SINK@ 70%`) or nap with --system-volume 80"
                : "unmute it (`amixer -D \(reading.mixer) set \(reading.element) unmute 70%`) or nap with --system-volume 80"
            return DoctorCheck(check: "volume", verdict: .problem,
                               detail: "\(reading.element) of \(which) is \(reading.muted ? "muted" : "at 0 %") (volume \(level))", fix: fix)
        }
        return DoctorCheck(check: "volume", verdict: .ok, detail: "\(reading.element) of \(which) at \(level), not muted")
    }

    private static func examineKeepAwake() -> DoctorCheck {
        do {
            let lock = try LogindInhibitor().inhibit(why: "snoozefuse doctor: checking that naps can keep the machine awake")
            lock.release()
            return DoctorCheck(check: "keep-awake", verdict: .ok,
                               detail: "logind gives a sleep:idle inhibitor on the system bus: the machine stays awake during a nap")
        } catch {
            return DoctorCheck(check: "keep-awake", verdict: .warning,
                               detail: "no inhibitor: \(error.description)",
                               fix: "naps still ring, but a suspend delays the alarm until the machine resumes; run naps where systemd-logind and the system bus run")
        }
    }

    private static func examineWakeAlarm() -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let wakealarm = WakeAlarmTimer.realTimeClockPath + "/wakealarm"
        let hasClock = access(wakealarm, F_OK) == 0
        do {
            _ = try WakeAlarmTimer()
            // Never "it wakes the machine" beside "nothing can wake this machine": the timer is
            // only as good as the clock that fires it.
            checks.append(DoctorCheck(check: "wake-alarm", verdict: .ok,
                                      detail: hasClock ? "CLOCK_BOOTTIME_ALARM timers can be made (CAP_WAKE_ALARM): a nap wakes a suspended machine for its alarm"
                                          : "CLOCK_BOOTTIME_ALARM timers can be made (CAP_WAKE_ALARM); whether one wakes this machine is its real-time clock's part (real-time-clock, below)"))
        } catch {
            checks.append(DoctorCheck(check: "wake-alarm", verdict: .warning, detail: "\(error)",
                                      fix: "run as root or from a local session on systemd 254 or later (which grants CAP_WAKE_ALARM); otherwise keep the machine from suspending"))
        }
        if hasClock {
            checks.append(DoctorCheck(check: "real-time-clock", verdict: .ok, detail: "\(wakealarm) exists: the hardware clock can wake the machine"))
        } else {
            checks.append(DoctorCheck(check: "real-time-clock", verdict: .warning,
                                      detail: "\(wakealarm) does not exist: nothing can wake this machine from suspend (a virtual machine or container often has none)",
                                      fix: "keep the machine from suspending during naps"))
        }
        return checks
    }

    /// Whether a held key's true release can be read here (evdev), or the terminal's gap is used.
    private static func examineKeyHold() -> DoctorCheck {
        switch EvdevKeyRelease.open() {
        case .success(let reader):
            return DoctorCheck(check: "hold-key", verdict: .ok, detail: "--hold key: \(reader.description)")
        case .failure(let unavailable):
            return DoctorCheck(check: "hold-key", verdict: .ok,
                               detail: "--hold key: the key's release is taken 0.75 s after its autorepeat stops (\(unavailable.reason))",
                               fix: "for a true key-up, read access to the keyboard's /dev/input/event* device (the input group)")
        }
    }

    /// Which sources of the desktop's idle time answer here (`--hold desktop` uses the first).
    private static func examineDesktopHold(environment: [String: String]) -> DoctorCheck {
        let survey = IdleTimeSources(environment: environment).survey()
        let answers = survey.map { source in
            switch source.answer {
            case .success(let said): "\(source.name): works (\(said))"
            case .failure(let error): "\(source.name): \(error.problem)"
            }
        }
        guard let first = survey.first(where: { if case .success = $0.answer { true } else { false } }) else {
            return DoctorCheck(check: "hold-desktop", verdict: .warning,
                               detail: "no source of the desktop's idle time answers here: " + answers.joined(separator: "; "),
                               fix: "--hold desktop then holds with a key in the nap's terminal (off a terminal the release starts at once); run the nap inside a GNOME, KDE, sway (or another wlroots compositor) or X11 session (WAYLAND_DISPLAY, DISPLAY, DBUS_SESSION_BUS_ADDRESS)")
        }
        return DoctorCheck(check: "hold-desktop", verdict: .ok,
                           detail: "--hold desktop is held by \(first.name); " + answers.joined(separator: "; "))
    }

    private static func examinePlugins() -> DoctorCheck {
        let catalog = PluginCatalog(verbosity: .none) { _ in }
        guard !catalog.problems.isEmpty else {
            return DoctorCheck(check: "plugins", verdict: .ok, detail: "\(catalog.plugins.count) plugins found, none refused")
        }
        let problems = catalog.problems.map { "\($0.path): \($0.message)" }
        return DoctorCheck(check: "plugins", verdict: .warning,
                           detail: "\(catalog.problems.count) plugin file(s) refused or doubtful: " + problems.joined(separator: "; "),
                           fix: "see `snoozefuse plugins list`; naps that name a refused plugin use the built-in sound instead")
    }

    private static func examineStore(environment: [String: String]) -> DoctorCheck {
        let paths: StorePaths
        do {
            paths = try StorePaths(environment: environment)
        } catch {
            return DoctorCheck(check: "store", verdict: .warning, detail: "\(error)", fix: "set HOME or the XDG_* variables to absolute paths")
        }
        // A nap keeps its live state (for its guardian, `status` and `resume`) in the state folder.
        for folder in [paths.state, paths.data] {
            var existing = folder
            while access(existing.path, F_OK) != 0, existing.path != "/" { existing.deleteLastPathComponent() }
            if access(existing.path, W_OK) != 0 {
                return DoctorCheck(check: "store", verdict: .warning,
                                   detail: "\(existing.path) cannot be written: \(String(cString: strerror(errno)))",
                                   fix: "make it writable for you (naps then run without their guardian and live state)")
            }
        }
        return DoctorCheck(check: "store", verdict: .ok, detail: "\(paths.state.path) and \(paths.data.path) can be written")
    }
}

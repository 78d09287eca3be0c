import Foundation
import SnoozeFuseTestSupport
import Testing

/// `snoozefuse doctor` (the built binary) against a real PulseAudio daemon with a null sink and a
/// private system bus with a logind stand-in, both started by the test.
@Suite("snoozefuse doctor: will the alarm be heard?")
struct DoctorTests {
    private struct Run: Sendable {
        var status: Int32
        var checks: [String: [String]] // check → "verdict: detail | fix", in order
        var audible: Bool?
        var text: String
    }

    private static func doctor(_ arguments: [String], environment: [String: String]) throws -> Run {
        let result = try runProcessBlocking(BuiltProducts.executable("snoozefuse"), ["doctor", "--json"] + arguments,
                                            environment: environment)
        let object = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        var checks: [String: [String]] = [:]
        for check in object?["checks"] as? [[String: Any]] ?? [] {
            let line = "\(check["verdict"] as? String ?? "?"): \(check["detail"] as? String ?? "") | \(check["fix"] as? String ?? "")"
            checks[check["check"] as? String ?? "?", default: []].append(line)
        }
        return Run(status: result.status, checks: checks, audible: object?["audible"] as? Bool,
                   text: result.standardOutput + result.standardError)
    }

    /// `--route` naming no sink of the server was said only when the alarm rang (issue 42): the
    /// nap says it as it starts, and `--dry-run` too, listing the sinks there are; a route that
    /// names one says nothing.
    @Test func aRouteNamingNoSinkIsSaidAtTheStartAndInDryRun() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let (dryRun, nap, good) = try await onOwnThread { () throws -> (ProcessResult, ProcessResult, ProcessResult) in
            try pulse.startDaemon()
            let folder = try TemporaryFolder()
            var environment = pulse.environment
            for (name, sub) in [("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config")] {
                environment[name] = folder.path(sub)
            }
            let snoozefuse = BuiltProducts.executable("snoozefuse")
            let quick = ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "1", "--device", "null", "--quiet"]
            return (try runProcessBlocking(snoozefuse, quick + ["--route", "nosuchsink", "--dry-run"], environment: environment),
                    try runProcessBlocking(snoozefuse, quick + ["--route", "nosuchsink,nullsink"], environment: environment),
                    try runProcessBlocking(snoozefuse, quick + ["--route", "nullsink", "--dry-run"], environment: environment))
        }
        #expect(dryRun.status == 0, "\(dryRun.standardError)")
        #expect(dryRun.standardError.contains("warning: --route names no sink of the sound server: 'nosuchsink'; the alarm plays on the default sink instead. Its sinks: nullsink"),
                "\(dryRun.standardError)")
        #expect(nap.status == 0, "\(nap.standardError)")
        #expect(nap.standardError.contains("--route names no sink of the sound server: 'nosuchsink'; the alarm plays on the others"), "\(nap.standardError)")
        #expect(good.status == 0 && !good.standardError.contains("--route names no sink"), "\(good.standardError)")
    }

    @Test func aWorkingSinkIsAudibleAMutedOneIsNotAndTheInhibitorIsTriedAndReleased() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let (working, fallback, muted, system) = try await onOwnThread { () throws -> (Run, Run, Run, [String]) in
            try pulse.startDaemon()
            let bus = try PrivateBus()
            try bus.publish(.login1)
            var environment = pulse.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
            let working = try Self.doctor(["--device", "pulse"], environment: environment)
            let fallback = try Self.doctor(["--device", "no-such-pcm"], environment: environment)
            _ = try pulse.pactl(["set-sink-mute", "@DEFAULT_SINK@", "1"])
            let muted = try Self.doctor(["--device", "pulse"], environment: environment)
            return (working, fallback, muted, bus.log(of: .login1))
        }
        // A device that does not open: the nap falls back to `default` (PulseAudio's plugin here).
        #expect(fallback.status == 0, "\(fallback.text)")
        let outputs = fallback.checks["output"] ?? []
        #expect(outputs.count == 2 && outputs[0].hasPrefix("warning: no-such-pcm does not open")
            && outputs[1].hasPrefix("ok: the nap falls back to default"), "\(outputs)")
        #expect(working.status == 0, "\(working.text)")
        #expect(working.audible == true)
        #expect(working.checks["output"]?.first == "ok: pulse opens for playback | ", "\(working.checks)")
        #expect(working.checks["volume"]?.first?.hasPrefix("ok: ") == true, "\(working.checks)")
        #expect(working.checks["keep-awake"]?.first?.hasPrefix("ok: ") == true, "\(working.checks)")
        // The inhibitor was taken for the check and given back at once.
        #expect(system.contains { $0.hasPrefix("inhibit 1 ") && $0.contains("snoozefuse doctor") }, "\(system)")
        #expect(system.contains("released 1"), "\(system)")
        // Muted: the alarm would not be heard, and the fix says how to unmute.
        #expect(muted.status == 69, "\(muted.text)")
        #expect(muted.audible == false)
        let volume = try #require(muted.checks["volume"]?.first, "\(muted.checks)")
        #expect(volume.hasPrefix("problem: ") && volume.contains("muted") && volume.contains("pactl set-sink-mute @DEFAULT_SINK@ 0"), "\(volume)")
    }

    /// With `--device` naming a PCM that has a mixer of its own (a second card; here the pulse
    /// plugin on the muted sink `headset`, in the test's `~/.asoundrc`), the volume check reads that
    /// mixer, not the default card's (it read the default one and said all was well).
    @Test func theVolumeCheckReadsTheMixerOfTheNamedDevice() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let run = try await onOwnThread { () throws -> Run in
            try pulse.startDaemon()
            try """
            pcm.headset { type pulse; device "headset" }
            ctl.headset { type pulse; device "headset" }
            """.write(to: pulse.directory.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
            try pulse.addSink("headset")
            _ = try pulse.pactl(["set-sink-mute", "headset", "1"])
            return try Self.doctor(["--device", "headset"], environment: pulse.environment)
        }
        #expect(run.checks["output"]?.first == "ok: headset opens for playback | ", "\(run.checks)")
        let volume = try #require(run.checks["volume"]?.first, "\(run.checks)")
        #expect(volume.hasPrefix("problem: ") && volume.contains("muted") && volume.contains("headset"), "\(volume)")
        #expect(run.status == 69, "\(run.text)")
        #expect(run.audible == false)
    }

    @Test func withoutASoundServerOrABusItSaysWhatIsMissingAndExits69() async throws {
        let folder = try TemporaryFolder()
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = "unix:" + folder.path("no-pulse.sock")
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + folder.path("no-bus.sock")
        environment["XDG_RUNTIME_DIR"] = folder.url.path
        let run = try await onOwnThread { [environment] in try Self.doctor([], environment: environment) }
        #expect(run.status == 69, "\(run.text)")
        #expect(run.audible == false)
        let outputs = run.checks["output"] ?? []
        #expect(outputs.count == 1 && outputs[0].hasPrefix("problem: default does not open") && outputs[0].contains("pactl info"), "\(outputs)")
        #expect(run.checks["keep-awake"]?.first?.hasPrefix("warning: no inhibitor") == true, "\(run.checks)")
        // Tests run as root here: the wake-alarm timer can be made.
        #expect(run.checks["wake-alarm"]?.first?.hasPrefix("ok: ") == true, "\(run.checks)")
        // Doctor never contradicts itself: a timer that "wakes a suspended machine" beside
        // "nothing can wake this machine" (no real-time clock) said both.
        let clockless = run.checks["real-time-clock"]?.first?.contains("nothing can wake this machine") == true
        let wakes = run.checks["wake-alarm"]?.first?.contains("a nap wakes a suspended machine") == true
        #expect(!(clockless && wakes), "\(run.checks)")
        if clockless { #expect(run.checks["wake-alarm"]?.first?.contains("whether one wakes this machine is its real-time clock's part") == true, "\(run.checks)") }
        #expect(run.checks["store"]?.first?.hasPrefix("ok: ") == true, "\(run.checks)")
    }

    /// `null` opens everywhere, so a nap on it never falls back: nothing would be heard.
    @Test func aDeviceThatWritesToNoSpeakerIsNotAudible() async throws {
        let run = try await onOwnThread { try Self.doctor(["--device", "null"], environment: ProcessInfo.processInfo.environment) }
        #expect(run.status == 69, "\(run.text)")
        #expect(run.audible == false)
        let outputs = run.checks["output"] ?? []
        #expect(outputs.count == 1 && outputs[0].hasPrefix("problem: null opens but writes to no speaker"), "\(outputs)")
    }

    @Test func thePlainReportHasAVerdictPerLineAndTheConclusion() async throws {
        let folder = try TemporaryFolder()
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = "unix:" + folder.path("no-pulse.sock")
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + folder.path("no-bus.sock")
        let result = try await onOwnThread { [environment] in
            try runProcessBlocking(BuiltProducts.executable("snoozefuse"), ["doctor"], environment: environment)
        }
        #expect(result.status == 69)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.last == "An alarm would NOT be heard: fix the problems above.", "\(lines)")
        let verdicts = lines.dropLast().filter { !$0.hasPrefix(" ") }
        #expect(!verdicts.isEmpty && verdicts.allSatisfy { $0.hasPrefix("ok ") || $0.hasPrefix("warning ") || $0.hasPrefix("problem ") }, "\(lines)")
        #expect(lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("fix: ") }, "\(lines)")
        // A fix follows a warning or a problem; what follows an ok is a tip (it needs no fix).
        var verdict = ""
        for line in lines.dropLast() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !line.hasPrefix(" ") { verdict = String(line.prefix { $0 != " " }) }
            if trimmed.hasPrefix("fix: ") { #expect(verdict != "ok", "a fix after ok: \(lines)") }
            if trimmed.hasPrefix("tip: ") { #expect(verdict == "ok", "a tip after \(verdict): \(lines)") }
        }
    }

    /// Per sink on a real server: mute, volume, form factor and bus, whether the routing would use
    /// it, and with `--listen` the test tone read back from each monitor. A recording of the
    /// headset's monitor confirms the tone, and doctor leaves every sink's mute and volume alone.
    @Test("doctor reports each sink and, with --listen, the proof from its monitor", arguments: SoundServer.allCases)
    func eachSinkWithTheProofFromItsMonitor(_ server: SoundServer) async throws {
        let pulse = try PrivatePulse(server: server)
        defer { pulse.cleanUp() }
        let (output, strict, toneLevel, speakersMuted, configured, flagged) = try await onOwnThread { () throws -> (String, Run, Double, Bool, Run, Run) in
            try pulse.startDaemon()
            try pulse.addSink("headset", properties: "'device.form_factor=headset device.bus=bluetooth'")
            try pulse.addSink("speakers", properties: "device.form_factor=internal")
            try pulse.pactl(["set-default-sink", "headset"])
            try pulse.pactl(["set-sink-mute", "speakers", "1"])
            let capture = try pulse.startCapture(name: "doctor-headset.raw", sink: "headset")
            let result = try runProcessBlocking(BuiltProducts.executable("snoozefuse"), ["doctor", "--listen", "--json"], environment: pulse.environment)
            pulse.stop(capture)
            // The default sink only, and nothing fixed: the muted speakers are silence.
            let strict = try Self.doctor(["--route", "speakers", "--no-fix-volume"], environment: pulse.environment)
            // The same two settings from the configuration, as a nap takes them; a flag still wins.
            var configuring = pulse.environment
            for (variable, name) in [("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config")] {
                configuring[variable] = pulse.directory.appendingPathComponent(name).path
            }
            for (key, value) in [("route", "speakers"), ("fix-volume", "false")] {
                let set = try runProcessBlocking(BuiltProducts.executable("snoozefuse"), ["config", "set", key, value], environment: configuring)
                #expect(set.status == 0, "config set \(key): \(set.standardError)")
            }
            let configured = try Self.doctor([], environment: configuring)
            let flagged = try Self.doctor(["--route", "headset"], environment: configuring)
            return (result.standardOutput + result.standardError, strict, try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("doctor-headset.raw")),
                    try pulse.sinkMuted("speakers"), configured, flagged)
        }
        let listened = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(listened["audible"] as? Bool == true, "\(listened)")
        let sinks = Dictionary(uniqueKeysWithValues: (listened["sinks"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "?", $0) })
        let headset = try #require(sinks["headset"], "\(listened)")
        #expect(headset["isDefault"] as? Bool == true && headset["routed"] as? Bool == true)
        #expect(headset["formFactor"] as? String == "headset" && headset["bus"] as? String == "bluetooth", "\(headset)")
        #expect(headset["heard"] as? Bool == true, "\(headset)")
        #expect((headset["heardLevelDBFS"] as? Double ?? -200) > -40, "\(headset)")
        let speakers = try #require(sinks["speakers"], "\(listened)")
        // Routed past the headset; muted, so the tone is not heard there, and the nap would fix that.
        #expect(speakers["routed"] as? Bool == true && speakers["muted"] as? Bool == true, "\(speakers)")
        #expect(speakers["heard"] as? Bool == false, "\(speakers)")
        let nullsink = try #require(sinks["nullsink"], "\(listened)")
        #expect(nullsink["routed"] as? Bool == false && nullsink["heard"] == nil, "\(nullsink)")
        let checks = listened["checks"] as? [[String: Any]] ?? []
        // Nothing to fix there (the nap unmutes it as it rings): ok, and how to hear it now as a tip.
        let speakersCheck = checks.first { $0["check"] as? String == "sink" && ($0["detail"] as? String ?? "").hasPrefix("speakers") }
        #expect(speakersCheck?["verdict"] as? String == "ok", "\(checks)")
        let speakersDetail = speakersCheck?["detail"] as? String, speakersTip = speakersCheck?["fix"] as? String
        #expect(speakersDetail?.contains("the nap unmutes it and raises it to") == true, "\(checks)")
        #expect(speakersTip?.hasPrefix("to hear it now too: pactl set-sink-mute speakers 0") == true, "\(checks)")
        // No check says a warning needs nothing done.
        #expect(!checks.contains { ($0["fix"] as? String ?? "").contains("none needed") }, "\(checks)")
        // The tone was really there (the recording, not doctor's word), and doctor changed nothing.
        #expect(toneLevel > 0.02, "the headset's monitor during doctor --listen: RMS \(toneLevel)")
        #expect(speakersMuted, "doctor left the speakers muted")
        // Routed to the muted speakers alone, without the nap's fix: no alarm would be heard.
        #expect(strict.status == 69, "\(strict.text)")
        #expect(strict.checks["sink"]?.first?.hasPrefix("problem: speakers") == true, "\(strict.checks)")
        #expect(configured.status == 69, "route and fix-volume from `config set`: \(configured.text)")
        #expect(configured.checks["sink"]?.first?.hasPrefix("problem: speakers") == true, "\(configured.checks)")
        #expect(flagged.status == 0, "--route headset over the configured route: \(flagged.text)")
        #expect(flagged.checks["sink"]?.first?.contains("headset") == true, "\(flagged.checks)")
    }
}

import SnoozeFuseSystem
import Foundation
import SnoozeFuseAudio
import SnoozeFusePluginHost
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// Crash isolation: every plugin instance of a nap runs in a child process (the built
/// `snoozefuse-plugin-host serve`); the alarm renderer reads the source's frames from a pipe and
/// switches to the built-in tone when they stop.
@Suite("Plugin crash isolation and the validator", .serialized)
struct PluginIsolationTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    @Test func sourceThatSegfaultsDuringRingingFallsBackToTheBuiltInTone() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        // Crashes after 0.5 s of audio: the child writes that much, then dies in render.
        let path = try folder.buildC("crash.so", defines: ["CRASH_AFTER_FRAMES=24000"])
        let info = try PluginLoader.load(path: path, logger: LogRecorder().logger).info
        let ended = Locked<String?>(nil)
        let child = try PluginChildProcess(
            executable: BuiltProducts.executable(PluginHostProgram.name).path,
            arguments: PluginHostProgram.serveArguments(kind: .source, path: path, config: ""),
            info: info, role: .readsFromChild) { _, how in ended.withLock { $0 = how } }
        let stream = PluginAudioStream(child: child, sampleRate: PluginServer.sourceRate, channels: 1)
        let format = PCMStreamFormat(sampleFormat: .float32LE, sampleRate: 48_000, channels: 2, bufferFrames: 4800, periodFrames: 1200)
        let renderer = try AlarmRenderer(source: stream.makeSource(), format: format,
                                         gain: AlarmGain(volume: 1, fadeIn: .zero))
        var block = [Float](repeating: 0, count: 1200 * 2)
        var blocks = 0
        // Render until the renderer has switched (it reads on, without waiting, as a device would).
        while renderer.switchedToBuiltInTone == nil {
            let frames = block.withUnsafeMutableBufferPointer { renderer.render(into: $0, format: format) }
            #expect(frames == 1200)
            blocks += 1
            if blocks > 1_000_000 { break } // a bound instead of a hang if the fallback never comes
        }
        #expect(renderer.switchedToBuiltInTone != nil)
        // What follows is the built-in tone, never silence: one second holds its four beeps.
        var second = [Float](repeating: 0, count: 48_000 * 2)
        _ = second.withUnsafeMutableBufferPointer { renderer.render(into: $0, format: format) }
        #expect(second.contains { abs($0) > 0.3 })
        // The parent learns how the child ended (its waiting thread reports it).
        while child.exitDescription == nil { usleep(1000) }
        #expect(child.exitDescription?.contains("signal 11") == true)
        #expect(ended.withLock { $0 }?.contains("signal 11") == true)
    }

    @Test func napWithACrashingSourceStillRingsAndReportsIt() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        // Seven seconds of audio before the crash: more than the pipe holds (1 MiB: 5.5 s), so the
        // child is still alive (blocked on the full pipe) when the alarm starts, and crashes while it
        // rings, once the alarm (paced to real time, even on `null`) has read 1.5 s of it.
        try folder.buildC("crash.so", defines: ["PLUGIN_ID=\"org.test.crash\"", "CRASH_AFTER_FRAMES=336000"])
        var environment = ProcessInfo.processInfo.environment
        environment["SNOOZEFUSE_PLUGIN_PATH"] = folder.path
        let result = try runMergingOutput(snoozefuse, [
            "nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "3",
            "--device", "null", "--source", "org.test.crash", "--events", "jsonl", "--quiet",
        ], environment: environment)
        #expect(result.status == 0, "\(result.output)")
        let events = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let alarm = try #require(events.first { $0["event"] as? String == "alarm" }, "\(result.output)")
        let warning = try #require(events.first { ($0["message"] as? String)?.contains("org.test.crash") == true }, "\(result.output)")
        #expect((warning["message"] as? String)?.contains("signal 11") == true)
        #expect((warning["message"] as? String)?.contains("built-in tone") == true)
        #expect((warning["t"] as? Double ?? 0) >= (alarm["t"] as? Double ?? .infinity))
        #expect(events.last?["outcome"] as? String == "ring_limit")
    }

    /// A nap on the null device ringing 2 s with the test plugin built as `file` (id `source`,
    /// with `defines`) as its source.
    func napRinging2s(source: String, built file: String, defines: [String]) throws -> (status: Int32, output: String) {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try folder.buildC(file, defines: ["PLUGIN_ID=\"\(source)\""] + defines)
        var environment = ProcessInfo.processInfo.environment
        environment["SNOOZEFUSE_PLUGIN_PATH"] = folder.path
        let result = try runMergingOutput(snoozefuse, [
            "nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "2",
            "--device", "null", "--source", source, "--events", "jsonl", "--quiet",
        ], environment: environment)
        return (result.status, result.output)
    }

    /// A nap whose source is a plugin (floats) recorded to a WAV by ALSA's file PCM: the file
    /// decodes as what it holds. alsa-lib's file PCM labels every format integer PCM; the
    /// recording is labelled float when it closes (on main: 32-bit floats under a header saying
    /// 32-bit integers, read back as noise).
    @Test func aPluginSourceRecordedToAWAVFileDecodesAsWhatItHolds() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let capture = folder.path + "/alarm.wav"
        let result = try runMergingOutput(snoozefuse, [
            "nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "2",
            "--fade-in", "0", "--device", "file:FILE=\(capture),FORMAT=wav", "--source", "tone", "--quiet",
        ])
        #expect(result.status == 0, "\(result.output)")
        let wav = try WAVFile(contentsOf: URL(fileURLWithPath: capture))
        let isFloat = wav.formatTag == 3 && wav.bitsPerSample == 32, isS16 = wav.formatTag == 1 && wav.bitsPerSample == 16
        #expect(isFloat || isS16, "format tag \(wav.formatTag), \(wav.bitsPerSample) bits")
        let samples = isFloat ? rawFloats(in: wav.data) : rawS16AsFloats(in: wav.data)
        // The tone, not noise from floats read as integers: loud, and not a full-scale square.
        let level = rms(samples)
        #expect(level > 0.05 && level < 0.9, "RMS \(level)")
    }

    /// A source that crashed before the alarm: when the alarm finds its stream ended, the switch
    /// to the built-in tone says it of the plugin (on main: "Cannot read sound file 'plugin
    /// org.test.crash' … export it again from its source").
    @Test func aSourceThatEndedBeforeTheAlarmIsSaidToBeAPluginNotAFile() throws {
        let result = try napRinging2s(source: "org.test.crash", built: "crash.so", defines: ["CRASH_AFTER_FRAMES=1000"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("sound-source plugin org.test.crash stopped producing audio: the built-in tone plays instead"), "\(result.output)")
        #expect(!result.output.contains("Cannot read sound file"), "\(result.output)")
        #expect(!result.output.contains("export it again"), "\(result.output)")
    }

    /// A source that renders NaN is said to be disabled, and what plays instead is the built-in
    /// tone, as the nap says (on main the message said "silence instead" while the tone played).
    @Test func napWithASourceRenderingNaNSaysTheBuiltInTonePlays() throws {
        let result = try napRinging2s(source: "org.test.nan", built: "nan.so", defines: ["RENDER_NAN"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("render wrote NaN or infinity; the source was disabled"), "\(result.output)")
        #expect(result.output.contains("sound-source plugin org.test.nan stopped"), "\(result.output)")
        #expect(result.output.contains("the alarm plays the built-in tone instead"), "\(result.output)")
        #expect(!result.output.contains("silence instead"), "\(result.output)")
    }

    @Test func napWithACrashingEmitterStillRings() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try folder.buildC("crash.so", defines: ["PLUGIN_ID=\"org.test.crashpulse\"", "EMITTER", "EMIT_CRASH"])
        var environment = ProcessInfo.processInfo.environment
        environment["SNOOZEFUSE_PLUGIN_PATH"] = folder.path
        let result = try runMergingOutput(snoozefuse, [
            "nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "2",
            "--device", "null", "--emitter", "org.test.crashpulse", "--events", "jsonl", "--quiet",
        ], environment: environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("\"event\":\"alarm\""))
        #expect(result.output.contains("plugin org.test.crashpulse stopped: killed by signal 11"))
    }

    @Test func checkPassesAGoodPlugin() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("good.so", defines: ["EMITTER"])
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("all"))
        #expect(!result.output.contains("PROBLEM"))
    }

    /// Skipped checks are not passed ones: with checks skipped (the built rumble plugin, where it
    /// is installed, given a device that is not there), the exit status says so (3), and
    /// --allow-skips accepts it (0). On main: 0 either way.
    @Test func skippedChecksExit3UnlessAllowed() throws {
        let path = builtPlugin("rumble")
        let skipped = try runMergingOutput(snoozefuse, ["plugins", "check", path, "--config", "device=/nonexistent/event99"])
        #expect(skipped.status == 3, "\(skipped.output)")
        #expect(skipped.output.contains("skipped"), "\(skipped.output)")
        #expect(!skipped.output.contains("PROBLEM"), "\(skipped.output)")
        let allowed = try runMergingOutput(snoozefuse, ["plugins", "check", path, "--config", "device=/nonexistent/event99", "--allow-skips"])
        #expect(allowed.status == 0, "\(allowed.output)")
    }

    /// A built-in rebuilt elsewhere keeps its reserved id: the id check fails it, as a nap refuses it.
    @Test func aReservedIDOutsideTheInstalledPluginsFailsTheCheck() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildBuiltIn("tone")
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 65, "\(result.output)")
        #expect(result.output.contains("PROBLEM  id: refused: its id org.snoozefuse.tone uses the prefix org.snoozefuse., which is reserved"), "\(result.output)")
        #expect(result.output.contains("so a nap refuses it"), "\(result.output)")
    }

    @Test func checkReportsACrashInRenderAndExits65() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("crash.so", defines: ["CRASH_AFTER_FRAMES=1000"])
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 65)
        #expect(result.output.contains("create_sound_source returns a complete instance"))
        #expect(result.output.contains("the plugin crashed the checking process: killed by signal 11"))
    }

    @Test func checkReportsABlockingEmitter() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("slow.so", defines: ["EMITTER", "EMIT_BLOCK_MS=5000"])
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 65)
        #expect(result.output.contains("did not return within 1000 ms"))
    }

    @Test func checkReportsEveryBrokenKindNamingTheFile() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let cases: [(String, [String], String)] = [
            ("abi.so", ["ABI_MAJOR=2"], "built for plugin ABI 2.0, but this snoozefuse speaks ABI 1.0"),
            ("entry.so", ["NO_ENTRY"], "does not export the function snoozefuse_plugin_entry"),
            ("null.so", ["NULL_RENDER"], "snoozefuse_sound_source.render is NULL"),
            ("error.so", ["RENDER_ERROR"], "render failed with FAILED"),
            ("nan.so", ["RENDER_NAN"], "render wrote NaN or infinity"),
        ]
        for (name, defines, expected) in cases {
            let path = try folder.buildC(name, defines: defines)
            let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
            #expect(result.status == 65, "\(name): \(result.output)")
            #expect(result.output.contains(expected), "\(name): \(result.output)")
            #expect(result.output.contains(path), "\(name): \(result.output)")
        }
    }

    @Test func listShowsBuiltInPluginsWithKindsAndFeaturesByName() throws {
        let result = try runMergingOutput(snoozefuse, ["plugins", "list", "--json"])
        #expect(result.status == 0, "\(result.output)")
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)")
        #expect(listing["problems"] is [Any])
        let plugins = try #require(listing["plugins"] as? [[String: Any]])
        func entry(_ id: String) -> (kinds: [String]?, features: [String]?)? {
            plugins.first { $0["id"] as? String == id }.map { ($0["kinds"] as? [String], $0["features"] as? [String]) }
        }
        let expected: [(String, [String], [String])] = [
            ("org.snoozefuse.tone", ["sound_source"], []),
            ("org.snoozefuse.noise", ["sound_source"], ["sleep_sound"]),
            ("org.snoozefuse.terminal", ["pulse_emitter"], []),
            ("org.snoozefuse.command", ["pulse_emitter"], ["runs_commands"]),
            ("org.snoozefuse.led", ["pulse_emitter"], ["hardware"]),
            ("org.snoozefuse.rumble", ["pulse_emitter"], ["hardware"]),
        ]
        for (id, kinds, features) in expected {
            let found = try #require(entry(id), "\(id) in \(result.output)")
            #expect(found.kinds == kinds, "\(id)")
            #expect(found.features == features, "\(id)")
        }
        #expect(plugins.allSatisfy { $0["unknownFeatureBits"] == nil })
    }

    @Test func jsonNamesBothKindsAndKnownFeaturesAndGivesUnknownFeatureBitsInHex() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("both.so", defines: [
            "PLUGIN_ID=\"org.test.both\"", "EMITTER", "FEATURES=(SNOOZEFUSE_FEATURE_STEREO|SNOOZEFUSE_FEATURE_HARDWARE|(UINT64_C(1)<<40))",
        ])
        var environment = ProcessInfo.processInfo.environment
        environment["SNOOZEFUSE_PLUGIN_PATH"] = folder.path
        for arguments in [["plugins", "list", "--json"], ["plugins", "info", "org.test.both", "--json"]] {
            let result = try runMergingOutput(snoozefuse, arguments, environment: environment)
            #expect(result.status == 0, "\(result.output)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            let plugin = try #require(((object["plugins"] as? [[String: Any]]) ?? [object]).first { $0["id"] as? String == "org.test.both" })
            #expect(plugin["kinds"] as? [String] == ["sound_source", "pulse_emitter"], "\(arguments)")
            #expect(plugin["features"] as? [String] == ["stereo", "hardware"], "\(arguments)")
            #expect(plugin["unknownFeatureBits"] as? String == "0x10000000000", "\(arguments)")
            #expect(plugin["path"] as? String == path)
        }
        let text = try runMergingOutput(snoozefuse, ["plugins", "info", "org.test.both"], environment: environment)
        #expect(text.output.contains("kinds:    sound_source, pulse_emitter"), "\(text.output)")
        #expect(text.output.contains("features: stereo, hardware, unknown(0x10000000000)"), "\(text.output)")
    }
}

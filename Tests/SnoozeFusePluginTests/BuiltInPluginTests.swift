import Foundation
import SnoozeFusePluginHost
import Testing

/// The built-in plugins, compiled from `Plugins/` at test time (they see only the ABI header).
@Suite("Built-in plugins: tone, noise, command, led")
struct BuiltInPluginTests {
    func load(_ name: String, in folder: PluginFolder) throws -> LoadedPlugin {
        try PluginLoader.load(path: try folder.buildBuiltIn(name), logger: LogRecorder().logger)
    }

    func render(_ source: SoundSource, frames: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: frames)
        let error = samples.withUnsafeMutableBufferPointer { source.render(into: $0) }
        #expect(error == nil)
        return samples
    }

    @Test func toneBeepFollowsThePatternAndRejectsBadConfig() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let source = try SoundSource(plugin: try load("tone", in: folder))
        try source.activate(sampleRate: 48_000, channels: 1, maxFrames: 1024, config: "pattern=beep,frequency=1000,volume=0.5")
        let second = render(source, frames: 48_000)
        // Beeps at 0–100 ms, silence at 100–200 ms and after 800 ms.
        #expect(second[0 ..< 4800].map { abs($0) }.max()! > 0.45)
        #expect(second[4900 ..< 9500].allSatisfy { $0 == 0 })
        #expect(second[38_500 ..< 48_000].allSatisfy { $0 == 0 })
        #expect(second.allSatisfy { abs($0) <= 0.5 })
        #expect(throws: PluginError.self) {
            try source.activate(sampleRate: 48_000, channels: 1, maxFrames: 1024, config: "pattern=polka")
        }
        #expect(throws: PluginError.self) {
            try source.activate(sampleRate: 48_000, channels: 1, maxFrames: 1024, config: "frequency=5")
        }
    }

    @Test func sirenNeverFallsSilent() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let source = try SoundSource(plugin: try load("tone", in: folder))
        try source.activate(sampleRate: 44_100, channels: 2, maxFrames: 512, config: "pattern=siren")
        let samples = render(source, frames: 44_100 * 2)
        for window in stride(from: 0, to: samples.count, by: 4410) {
            #expect(samples[window ..< window + 4410].map { abs($0) }.max()! > 0.5)
        }
    }

    @Test func noiseColoursDifferInSpectrum() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let plugin = try load("noise", in: folder)
        /// Mean absolute difference between neighbours over mean absolute value: high for white,
        /// lower for pink, lowest for brown (energy moves to low frequencies).
        func roughness(_ colour: String) throws -> Double {
            let source = try SoundSource(plugin: plugin)
            try source.activate(sampleRate: 48_000, channels: 1, maxFrames: 4096, config: "color=\(colour),volume=1")
            let samples = render(source, frames: 48_000)
            let level = samples.reduce(0) { $0 + Double(abs($1)) }
            let change = zip(samples, samples.dropFirst()).reduce(0) { $0 + Double(abs($1.1 - $1.0)) }
            #expect(level > 0)
            return change / level
        }
        let white = try roughness("white"), pink = try roughness("pink"), brown = try roughness("brown")
        #expect(white > pink)
        #expect(pink > brown)
    }

    @Test func commandRunsWithVariablesAndIsRateLimited() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let out = folder.path + "/pulses.txt"
        let emitter = try PulseEmitter(plugin: try load("command", in: folder),
                                       config: "min-interval=60000,timeout=2000,run=echo \"$SNOOZEFUSE_PULSE $SNOOZEFUSE_INTENSITY $SNOOZEFUSE_DURATION_MS\" >> \(out)")
        emitter.emit(intensity: 0.7, duration: .milliseconds(150))
        emitter.waitUntilIdle() // however long it takes (it returns once idle)
        emitter.emit(intensity: 1, duration: .milliseconds(150))
        emitter.waitUntilIdle() // however long it takes (it returns once idle)
        // The first pulse ran; the second came within min-interval and was dropped. Wait for the
        // shell to have written its line (it runs on its own; closing the emitter would kill it).
        var text = ""
        for _ in 0 ..< 50_000 where !text.hasSuffix("\n") {
            text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            usleep(2000)
        }
        emitter.close()
        #expect(text == "1 0.700 150\n")
    }

    @Test func commandWithoutRunIsAConfigError() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let plugin = try load("command", in: folder)
        #expect {
            try PulseEmitter(plugin: plugin, config: "timeout=10")
        } throws: { error in
            (error as? PluginError)?.description.contains("run=COMMAND") == true
        }
    }

    @Test func ledBlinksAndRestoresItsState() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let led = folder.path + "/leds/test::capslock"
        try FileManager.default.createDirectory(atPath: led, withIntermediateDirectories: true)
        try "1\n".write(toFile: led + "/max_brightness", atomically: false, encoding: .utf8)
        try "0\n".write(toFile: led + "/brightness", atomically: false, encoding: .utf8)
        let emitter = try PulseEmitter(plugin: try load("led", in: folder), config: "led=test::capslock,root=\(folder.path)/leds")
        emitter.emit(intensity: 1, duration: .milliseconds(300))
        // While the pulse lasts the LED is on…
        var seenOn = false
        while emitter.isBusy && !seenOn {
            seenOn = (try? String(contentsOfFile: led + "/brightness", encoding: .utf8)) == "1\n"
        }
        emitter.waitUntilIdle() // however long it takes (it returns once idle)
        #expect(seenOn)
        // …and afterwards it is as it was found.
        #expect(try String(contentsOfFile: led + "/brightness", encoding: .utf8) == "0\n")
        #expect(emitter.reportedErrors.isEmpty)
        emitter.close()
    }

    @Test func ledWithoutANameIsAConfigError() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let plugin = try load("led", in: folder)
        #expect(throws: PluginError.self) { try PulseEmitter(plugin: plugin, config: "") }
    }

    @Test func terminalRejectsBadConfigNamingTheKey() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let plugin = try load("terminal", in: folder)
        let cases = [
            ("bell=yes", "bell=yes: expected 0 or 1"),
            ("symbol=", "symbol: expected 1 to 16 bytes of text without control characters (got 0 bytes)"),
            ("symbol=\u{1B}[2J", "symbol: expected 1 to 16 bytes of text without control characters (got 4 bytes, with control characters)"),
            ("symbol=abcdefghijklmnopq", "symbol: expected 1 to 16 bytes of text without control characters (got 17 bytes)"),
            ("colour=red", "unknown key \"colour\" (terminal accepts tty, bell, symbol)"),
        ]
        for (config, message) in cases {
            #expect(throws: PluginError(path: plugin.info.path, reason: .callFailed(call: "create_pulse_emitter", status: 1, message: message))) {
                try PulseEmitter(plugin: plugin, config: config)
            }
        }
        #expect(throws: PluginError(path: plugin.info.path, reason: .callFailed(
            call: "create_pulse_emitter", status: 3, message: "cannot open tty=\(folder.path)/none: No such file or directory"))) {
            try PulseEmitter(plugin: plugin, config: "tty=\(folder.path)/none")
        }
    }

    @Test func noiseAndLEDRefuseBadValuesAndUnknownKeysNamingThem() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let noise = try SoundSource(plugin: try load("noise", in: folder))
        for (config, message) in [("seed=abc", "seed=abc: expected a whole number from 0 to 18446744073709551615"),
                                  ("seed=-1", "seed=-1: expected a whole number from 0 to 18446744073709551615")] {
            #expect(throws: PluginError(path: noise.plugin.info.path, reason: .callFailed(call: "activate", status: 1, message: message))) {
                try noise.activate(sampleRate: 48_000, channels: 1, maxFrames: 512, config: config)
            }
        }
        try noise.activate(sampleRate: 48_000, channels: 1, maxFrames: 512, config: "seed=42")
        let led = try load("led", in: folder)
        #expect(throws: PluginError(path: led.info.path, reason: .callFailed(
            call: "create_pulse_emitter", status: 1, message: "unknown key \"brightness\" (led accepts led, root)"))) {
            try PulseEmitter(plugin: led, config: "led=input3::capslock,brightness=1")
        }
    }
}

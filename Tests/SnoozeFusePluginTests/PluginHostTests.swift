import Foundation
import SnoozeFuseAudio
import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

@Suite("Plugin host: loading, validation, registry, instances")
struct PluginHostTests {
    @Test func goodPluginLoadsAndRenders() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("good.so")
        let plugin = try PluginLoader.load(path: path, logger: LogRecorder().logger)
        #expect(plugin.info.id == "org.test.plugin")
        #expect(plugin.info.kinds == .soundSource)
        let source = try SoundSource(plugin: plugin)
        try source.activate(sampleRate: 48_000, channels: 2, maxFrames: 256, config: "")
        var samples = [Float](repeating: 0, count: 1000 * 2)
        let error = samples.withUnsafeMutableBufferPointer { source.render(into: $0) }
        #expect(error == nil)
        #expect(samples.contains { $0 != 0 })
        #expect(samples.allSatisfy { abs($0) <= 1 })
    }

    @Test func wrongABIMajorIsRefusedNamingBothVersionsAndTheFile() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("future.so", defines: ["ABI_MAJOR=2"])
        #expect {
            try PluginLoader.load(path: path, logger: LogRecorder().logger)
        } throws: { error in
            let error = try #require(error as? PluginError)
            return error.reason == .abiMajorMismatch(plugin: 2, pluginMinor: 0, host: 1, hostMinor: 0)
                && error.description.contains(path) && error.description.contains("ABI 2.0")
                && error.description.contains("ABI 1.0")
        }
    }

    @Test func missingEntryIsReported() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("noentry.so", defines: ["NO_ENTRY"])
        #expect(throws: PluginError(path: path, reason: .missingEntry)) {
            try PluginLoader.load(path: path, logger: LogRecorder().logger)
        }
    }

    @Test func nullFunctionPointerIsReportedWhenCreatingTheInstance() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("nullrender.so", defines: ["NULL_RENDER"])
        let plugin = try PluginLoader.load(path: path, logger: LogRecorder().logger)
        #expect(throws: PluginError(path: path, reason: .missingField("snoozefuse_sound_source.render"))) {
            try SoundSource(plugin: plugin)
        }
    }

    @Test func badIDIsRefused() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("badid.so", defines: ["PLUGIN_ID=\"Not A DNS id\""])
        #expect(throws: PluginError(path: path, reason: .invalidID("Not A DNS id"))) {
            try PluginLoader.load(path: path, logger: LogRecorder().logger)
        }
    }

    @Test func scanKeepsGoodPluginsSkipsBadOnesAndFirstIDWins() throws {
        let first = try PluginFolder(), second = try PluginFolder()
        defer { first.cleanUp(); second.cleanUp() }
        let winner = try first.buildC("a.so")
        try first.buildC("b-broken.so", defines: ["ABI_MAJOR=7"])
        try first.buildC("c-noentry.so", defines: ["NO_ENTRY"])
        let loser = try second.buildC("a.so")
        try second.buildC("d-other.so", defines: ["PLUGIN_ID=\"org.test.other\""])
        let log = LogRecorder()
        let registry = PluginDiscovery(searchPath: [
            PluginSearchPath(folder: first.path, origin: .environment),
            PluginSearchPath(folder: second.path, origin: .environment),
        ], host: hostProgram, cache: nil, logger: log.logger).scan()

        #expect(registry.plugins.map(\.id) == ["org.test.plugin", "org.test.other"])
        #expect(registry.plugin(id: "org.test.plugin")?.path == winner)
        #expect(registry.problems.count == 3)
        let duplicate = try #require(registry.problems.first { $0.severity == .warning })
        #expect(duplicate.error.path == loser)
        #expect(duplicate.error.description.contains(winner))
        #expect(log.recorded.contains { $0.hasPrefix("warning") && $0.contains(loser) })
        #expect(log.recorded.filter { $0.hasPrefix("error") }.count == 2)
    }

    @Test func fileWritableByOthersIsRefused() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("open.so")
        chmod(path, 0o666)
        let registry = PluginDiscovery(searchPath: [PluginSearchPath(folder: folder.path, origin: .environment)],
                                       host: hostProgram, cache: nil, logger: LogRecorder().logger).scan()
        #expect(registry.plugins.isEmpty)
        let problem = try #require(registry.problems.first)
        #expect(problem.error.reason == .writableByOthers(path: path, mode: UInt32(S_IFREG) | 0o666))
        #expect(problem.error.description.contains("writable by other users"))
    }

    @Test func folderWritableByOthersIsRefused() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try folder.buildC("fine.so")
        chmod(folder.path, 0o777)
        let registry = PluginDiscovery(searchPath: [PluginSearchPath(folder: folder.path, origin: .environment)],
                                       host: hostProgram, cache: nil, logger: LogRecorder().logger).scan()
        #expect(registry.plugins.isEmpty)
        let problem = try #require(registry.problems.first)
        guard case .writableByOthers(let where_, _) = problem.error.reason else {
            Issue.record("expected writableByOthers, got \(problem.error)")
            return
        }
        #expect(where_ == folder.path)
    }

    @Test func renderErrorSilencesAndDisablesTheSource() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("error.so", defines: ["RENDER_ERROR"])
        let source = try SoundSource(plugin: try PluginLoader.load(path: path, logger: LogRecorder().logger))
        try source.activate(sampleRate: 48_000, channels: 1, maxFrames: 512, config: "")
        var samples = [Float](repeating: 0.5, count: 512)
        let error = samples.withUnsafeMutableBufferPointer { source.render(into: $0) }
        #expect(error == PluginError(path: path, reason: .callFailed(call: "render", status: 5, message: "")))
        #expect(samples.allSatisfy { $0 == 0 })
        #expect(source.disabledReason != nil)
    }

    @Test func renderNaNSilencesAndDisablesTheSource() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("nan.so", defines: ["RENDER_NAN"])
        let source = try SoundSource(plugin: try PluginLoader.load(path: path, logger: LogRecorder().logger))
        try source.activate(sampleRate: 48_000, channels: 2, maxFrames: 512, config: "")
        var samples = [Float](repeating: 0.5, count: 1024)
        let first = samples.withUnsafeMutableBufferPointer { source.render(into: $0) }
        #expect(first == PluginError(path: path, reason: .renderNotFinite))
        #expect(samples.allSatisfy { $0 == 0 })
        samples = [Float](repeating: 0.5, count: 1024)
        let second = samples.withUnsafeMutableBufferPointer { source.render(into: $0) }
        #expect(second == first)
        #expect(samples.allSatisfy { $0 == 0 })
        #expect(first?.description.contains(path) == true)
    }

    @Test func blockingEmitterNeverBlocksTheCaller() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("slow.so", defines: ["EMITTER", "EMIT_BLOCK_MS=5000"])
        let emitter = try PulseEmitter(plugin: try PluginLoader.load(path: path, logger: LogRecorder().logger), config: "")
        #expect(emitter.emit(intensity: 1, duration: .milliseconds(100)) == .accepted)
        // The call returned while the plugin is still inside its 5 s emit: the next pulse is dropped
        // at once instead of waiting for it.
        #expect(emitter.isBusy)
        #expect(emitter.emit(intensity: 0.7, duration: .milliseconds(100)) == .droppedBusy)
        #expect(emitter.completedPulses == 0)
        #expect(emitter.droppedPulses == 1)
        emitter.close()
    }

    @Test func pluginSpecsParse() {
        #expect(PluginSpec(parsing: "tone") == PluginSpec(id: "tone"))
        #expect(PluginSpec(parsing: "tone:pattern=siren,frequency=600") == PluginSpec(id: "tone", config: "pattern=siren,frequency=600"))
        #expect(PluginSpec(parsing: "command:run=echo a:b,c") == PluginSpec(id: "command", config: "run=echo a:b,c"))
        #expect(PluginSpec(parsing: ":x") == nil)
    }

    @Test func idFormat() {
        #expect(PluginInfo.isValidID("org.snoozefuse.tone"))
        #expect(PluginInfo.isValidID("com.example.my-plugin2"))
        #expect(!PluginInfo.isValidID("tone"))
        #expect(!PluginInfo.isValidID("Org.example.x"))
        #expect(!PluginInfo.isValidID("org..x"))
        #expect(!PluginInfo.isValidID("-org.x"))
        #expect(!PluginInfo.isValidID("org.x/../y"))
    }

    @Test func searchPathFollowsTheSpecOrder() {
        let paths = PluginSearchPath.standard(
            environment: ["SNOOZEFUSE_PLUGIN_PATH": "/a:/b", "XDG_DATA_HOME": "/data", "HOME": "/home/u"],
            executablePath: "/opt/sf/bin/snoozefuse")
        #expect(paths.map(\.folder) == ["/a", "/b", "/data/snoozefuse/plugins", "/opt/sf/lib/snoozefuse/plugins"])
        let build = PluginSearchPath.standard(environment: ["HOME": "/home/u"], executablePath: "/src/.build/debug/snoozefuse")
        #expect(build.map(\.folder) == ["/home/u/.local/share/snoozefuse/plugins", "/src/.build/debug"])
        #expect(build.last?.namePrefix == "libsnoozefuse-")
    }
}

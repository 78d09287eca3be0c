public import Logging
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The child's side of `PluginChildProcess`: runs one instance until the parent goes away.
public enum PluginServer {
    /// The rate and layout a source's child renders at; the alarm renderer converts to the device.
    public static let sourceRate = 48_000
    public static let sourceChannels = 1
    static let blockFrames = 1024

    /// Exit statuses of a serving child.
    public enum Status: Int32 {
        case parentGone = 0
        case setupFailed = 65
        case renderFailed = 75
    }

    /// The plugin at `path`, checked and loaded; with `expectID`, refused unless it is that plugin
    /// (the file may have been replaced since the scan that found it).
    static func load(path: String, expectID: String?, logger: Logger) throws(PluginError) -> LoadedPlugin {
        try PluginPermissions.check(path: path)
        let plugin = try PluginLoader.load(path: path, logger: logger)
        if let expectID, plugin.info.id != expectID {
            throw PluginError(path: path, reason: .changedSinceScan(expected: expectID, found: plugin.info.id))
        }
        return plugin
    }

    /// A source of the plugin at `path`, active at the serving format with `config`.
    static func startSource(path: String, config: String, expectID: String?, logger: Logger) throws(PluginError) -> SoundSource {
        let source = try SoundSource(plugin: try load(path: path, expectID: expectID, logger: logger))
        try source.activate(sampleRate: sourceRate, channels: sourceChannels, maxFrames: blockFrames, config: config)
        return source
    }

    /// An emitter of the plugin at `path`, created with `config`.
    static func startEmitter(path: String, config: String, expectID: String?, logger: Logger,
                             onPulseDone: (@Sendable (UInt64) -> Void)? = nil) throws(PluginError) -> PulseEmitter {
        try PulseEmitter(plugin: try load(path: path, expectID: expectID, logger: logger), config: config, onPulseDone: onPulseDone)
    }

    /// What serving an instance with `config` would meet when it starts, without serving it: the
    /// source is created and activated as `serveSource` does (or the emitter created), then freed.
    /// Nil when it starts. This is how a configuration is checked before a nap: the ABI hands a
    /// source its configuration in `activate` and an emitter in `create_pulse_emitter`, and a
    /// plugin refuses a bad one there with `SNOOZEFUSE_STATUS_INVALID_CONFIG`.
    public static func checkStart(emitter: Bool, path: String, config: String, expectID: String?, logger: Logger) -> PluginError? {
        do {
            if emitter {
                // Its thread destroys the instance (which may put a device back) before the answer.
                try startEmitter(path: path, config: config, expectID: expectID, logger: logger).close(waitingAtMost: .seconds(1))
            } else {
                try startSource(path: path, config: config, expectID: expectID, logger: logger).deactivate()
            }
            return nil
        } catch {
            return error
        }
    }

    /// Renders `plugin`'s source into `output` until the pipe breaks or render fails.
    public static func serveSource(path: String, config: String, expectID: String?, output: Int32, logger: Logger) -> Status {
        let source: SoundSource
        do {
            source = try startSource(path: path, config: config, expectID: expectID, logger: logger)
        } catch {
            logger.error("\(error)")
            return .setupFailed
        }
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockFrames * sourceChannels)
        defer { buffer.deallocate() }
        while true {
            if let error = source.render(into: buffer) {
                logger.error("\(error)")
                return .renderFailed
            }
            let raw = UnsafeRawBufferPointer(buffer)
            var offset = 0
            while offset < raw.count {
                let written = write(output, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return .parentGone
                }
            }
        }
    }

    /// Reads pulse commands (`e TAG INTENSITY MS`, `c`) from `input` and hands them to the
    /// emitter's own thread, so a slow plugin only drops pulses. Answers each pulse on `answers`:
    /// `d TAG` once the plugin's emit has returned, `x TAG` when it was dropped (the plugin was
    /// busy), so the parent can tell a plugin that stopped returning. Ends at end of input.
    public static func serveEmitter(path: String, config: String, expectID: String?, input: Int32, answers: Int32,
                                     logger: Logger) -> Status {
        let emitter: PulseEmitter
        do {
            emitter = try startEmitter(path: path, config: config, expectID: expectID, logger: logger) { tag in
                writeAll("d \(tag)\n", to: answers)
            }
        } catch {
            logger.error("\(error)")
            return .setupFailed
        }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: chunk[0 ..< count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                let words = line.split(separator: " ")
                if words.first == "c" {
                    emitter.cancel()
                } else if words.count == 4, words[0] == "e", let tag = UInt64(words[1]), let intensity = Double(words[2]),
                          let ms = Int64(words[3]) {
                    if emitter.emit(intensity: intensity, duration: .milliseconds(ms), tag: tag) != .accepted {
                        writeAll("x \(tag)\n", to: answers)
                    }
                }
            }
        }
        emitter.cancel()
        emitter.close(waitingAtMost: PluginChildProcess.emitterEndLimit)
        return .parentGone
    }
}

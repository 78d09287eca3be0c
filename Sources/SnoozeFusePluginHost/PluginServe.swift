public import Logging
import Foundation
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

    /// A source of the plugin at `path`, active at the serving format with `config`.
    static func startSource(path: String, config: String, logger: Logger) throws(PluginError) -> SoundSource {
        try PluginPermissions.check(path: path)
        let source = try SoundSource(plugin: try PluginLoader.load(path: path, logger: logger))
        try source.activate(sampleRate: sourceRate, channels: sourceChannels, maxFrames: blockFrames, config: config)
        return source
    }

    /// An emitter of the plugin at `path`, created with `config`.
    static func startEmitter(path: String, config: String, logger: Logger) throws(PluginError) -> PulseEmitter {
        try PluginPermissions.check(path: path)
        return try PulseEmitter(plugin: try PluginLoader.load(path: path, logger: logger), config: config)
    }

    /// What serving an instance with `config` would meet when it starts, without serving it: the
    /// source is created and activated as `serveSource` does (or the emitter created), then freed.
    /// Nil when it starts. This is how a configuration is checked before a nap: the ABI hands a
    /// source its configuration in `activate` and an emitter in `create_pulse_emitter`, and a
    /// plugin refuses a bad one there with `SNOOZEFUSE_STATUS_INVALID_CONFIG`.
    public static func checkStart(emitter: Bool, path: String, config: String, logger: Logger) -> PluginError? {
        do {
            if emitter {
                try startEmitter(path: path, config: config, logger: logger).close()
            } else {
                try startSource(path: path, config: config, logger: logger).deactivate()
            }
            return nil
        } catch {
            return error
        }
    }

    /// Renders `plugin`'s source into standard output until the pipe breaks or render fails.
    public static func serveSource(path: String, config: String, logger: Logger) -> Status {
        let source: SoundSource
        do {
            source = try startSource(path: path, config: config, logger: logger)
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
                let written = write(1, raw.baseAddress! + offset, raw.count - offset)
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

    /// Reads pulse commands (`e INTENSITY MS`, `c`) from standard input and hands them to the
    /// emitter's own thread, so a slow plugin only drops pulses. Ends at end of input.
    public static func serveEmitter(path: String, config: String, logger: Logger) -> Status {
        let emitter: PulseEmitter
        do {
            emitter = try startEmitter(path: path, config: config, logger: logger)
        } catch {
            logger.error("\(error)")
            return .setupFailed
        }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: chunk[0 ..< count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                let words = line.split(separator: " ")
                if words.first == "c" {
                    emitter.cancel()
                } else if words.count == 3, words[0] == "e", let intensity = Double(words[1]), let ms = Int64(words[2]) {
                    emitter.emit(intensity: intensity, duration: .milliseconds(ms))
                }
            }
        }
        emitter.cancel()
        emitter.close()
        return .parentGone
    }
}

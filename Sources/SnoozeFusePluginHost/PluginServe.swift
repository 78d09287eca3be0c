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

/// The pulse patterns of SPEC §2, as offsets from the start of a cycle.
public enum PulsePattern {
    public struct Pulse: Sendable, Hashable {
        public var offset: Duration
        public var intensity: Double
        public var duration: Duration
    }

    /// While holding: a beat every 60/BPM s, then a lighter one (0.7) at 30 % of the interval.
    /// BPM is clamped to 40…120.
    public static func heartbeat(bpm: Int) -> (interval: Duration, pulses: [Pulse]) {
        let bpm = min(max(bpm, 40), 120)
        let interval = Duration.seconds(60) / bpm
        return (interval, [
            Pulse(offset: .zero, intensity: 1, duration: .milliseconds(120)),
            Pulse(offset: interval * 0.3, intensity: 0.7, duration: .milliseconds(90)),
        ])
    }

    /// While ringing: one pulse at once, then every second a pair of pulses 0.5 s apart. Returns
    /// the pulses whose offsets from the start of ringing are below `until`.
    public static func alarm(until: Duration) -> [Pulse] {
        var pulses = [Pulse(offset: .zero, intensity: 1, duration: .milliseconds(250))]
        var second = Duration.seconds(1)
        while second < until {
            pulses.append(Pulse(offset: second, intensity: 1, duration: .milliseconds(200)))
            if second + .milliseconds(500) < until {
                pulses.append(Pulse(offset: second + .milliseconds(500), intensity: 1, duration: .milliseconds(200)))
            }
            second += .seconds(1)
        }
        return pulses
    }
}

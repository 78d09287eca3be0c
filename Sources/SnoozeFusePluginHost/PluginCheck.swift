public import Logging
import Foundation

/// One result of `plugins check`.
public struct PluginCheckFinding: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Verdict: String, Sendable, Hashable, Codable { case pass, problem }
    public var verdict: Verdict
    /// What was checked, e.g. `render 1 s at 48000 Hz, 2 channels`.
    public var check: String
    public var detail: String?

    public init(_ verdict: Verdict, _ check: String, _ detail: String? = nil) {
        self.verdict = verdict
        self.check = check
        self.detail = detail
    }

    public var description: String {
        "\(verdict == .pass ? "ok     " : "PROBLEM") \(check)\(detail.map { ": \($0)" } ?? "")"
    }
}

/// The validator behind `snoozefuse plugins check`, in the spirit of clap-validator. It runs in a
/// child process (the command re-executes itself), so a plugin that crashes is reported, not fatal.
public enum PluginCheck {
    /// How long a pulse may take before it counts as blocking.
    public static let emitDeadline = Duration.seconds(1)

    /// Checks everything about `path`; `report` gets each finding as soon as it is known (so a
    /// crash later still leaves the earlier ones).
    public static func run(path: String, config: String, logger: Logger,
                           report: (PluginCheckFinding) -> Void) {
        do {
            try PluginPermissions.check(path: path)
            report(.init(.pass, "file and folder are not writable by other users"))
        } catch {
            report(.init(.problem, "permissions", error.reasonText))
            return
        }
        let plugin: LoadedPlugin
        do {
            plugin = try PluginLoader.load(path: path, logger: logger)
            let info = plugin.info
            report(.init(.pass, "loads with RTLD_NOW and exports \(PluginABI.entrySymbol)"))
            report(.init(.pass, "ABI \(info.abiMajor).\(info.abiMinor) (host \(PluginABI.major).\(PluginABI.minor))"))
            report(.init(.pass, "descriptor: \(info.id) \(info.version) by \(info.vendor.isEmpty ? "(no vendor)" : info.vendor), \(info.kinds.names.joined(separator: " + "))"))
        } catch {
            report(.init(.problem, "load", error.reasonText))
            return
        }
        if plugin.info.kinds.contains(.soundSource) { checkSource(plugin, config: config, report: report) }
        if plugin.info.kinds.contains(.pulseEmitter) { checkEmitter(plugin, config: config, report: report) }
    }

    static func checkSource(_ plugin: LoadedPlugin, config: String, report: (PluginCheckFinding) -> Void) {
        let source: SoundSource
        do {
            source = try SoundSource(plugin: plugin)
            report(.init(.pass, "create_sound_source returns a complete instance"))
        } catch {
            report(.init(.problem, "create_sound_source", error.reasonText))
            return
        }
        for (rate, channels, block) in [(48_000, 2, 512), (44_100, 1, 1024)] {
            let what = "render 1 s at \(rate) Hz, \(channels) channel\(channels == 1 ? "" : "s") in blocks of \(block)"
            do {
                try source.activate(sampleRate: rate, channels: channels, maxFrames: block, config: config)
            } catch {
                report(.init(.problem, "activate at \(rate) Hz, \(channels) channels", error.reasonText))
                continue
            }
            var samples = [Float](repeating: 0, count: block * channels)
            var rendered = 0, peak: Float = 0, problem: PluginError?
            while rendered < rate, problem == nil {
                problem = samples.withUnsafeMutableBufferPointer { source.render(into: $0) }
                peak = max(peak, samples.reduce(0) { max($0, abs($1)) })
                rendered += block
            }
            if let problem {
                report(.init(.problem, what, problem.reasonText))
            } else if peak == 0 {
                report(.init(.problem, what, "the output is silent"))
            } else {
                report(.init(.pass, what, "peak \(String(format: "%.2f", peak))"))
            }
            source.deactivate()
        }
        report(.init(.pass, "deactivate and destroy return"))
    }

    static func checkEmitter(_ plugin: LoadedPlugin, config: String, report: (PluginCheckFinding) -> Void) {
        let emitter: PulseEmitter
        do {
            emitter = try PulseEmitter(plugin: plugin, config: config)
            report(.init(.pass, "create_pulse_emitter returns a complete instance"))
        } catch {
            report(.init(.problem, "create_pulse_emitter", error.reasonText))
            return
        }
        let deadlineMs = Int(emitDeadline.components.seconds * 1000)
        for (intensity, length) in [(1.0, 60), (0.7, 40)] {
            let what = "emit(intensity \(intensity), \(length) ms) returns within \(deadlineMs) ms"
            emitter.emit(intensity: intensity, duration: .milliseconds(length))
            guard emitter.waitUntilIdle(within: emitDeadline) else {
                report(.init(.problem, what, PluginError(path: plugin.info.path, reason: .timedOut(call: "emit", milliseconds: deadlineMs)).reasonText))
                return // the plugin's thread is stuck; nothing more can be checked
            }
            if let error = emitter.reportedErrors.last {
                report(.init(.problem, what, error.reasonText))
                return
            }
            report(.init(.pass, what))
        }
        emitter.cancel()
        if emitter.waitUntilIdle(within: emitDeadline) {
            report(.init(.pass, "cancel returns"))
        } else {
            report(.init(.problem, "cancel", PluginError(path: plugin.info.path, reason: .timedOut(call: "cancel", milliseconds: deadlineMs)).reasonText))
        }
        emitter.close()
    }
}

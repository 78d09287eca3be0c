public import Logging
import SnoozeFuseCore
import SnoozeFuseSystem

/// The checks of `snoozefuse plugins check` that run plugin code, each in a child of its own
/// (`snoozefuse-plugin-host check NAME PATH -- CONFIG`). Every child loads the plugin again and
/// replays the earlier steps (create, activate) under their own time limits, so one check's
/// failure never hides another's.
public enum PluginCheckName: String, Sendable, Hashable, Codable, CaseIterable {
    /// dlopen, the entry function, the descriptor.
    case load
    /// create_sound_source, activate at two formats, deactivate, destroy.
    case sourceCreate = "source-create"
    /// 10 s of audio at 48 kHz, 2 channels, in blocks of 512: finite, not silent, within 1 s.
    case sourceRenderStereo = "source-render-48000-stereo"
    /// 10 s of audio at 44.1 kHz, 1 channel, in blocks of 1024.
    case sourceRenderMono = "source-render-44100-mono"
    /// 1 s of audio with every system call and malloc of render watched.
    case sourceRealtime = "source-realtime"
    /// create_pulse_emitter with the configuration.
    case emitterCreate = "emitter-create"
    /// Two pulses, a cancel and destroy, each back within 1 s.
    case emitterEmit = "emitter-emit"
}

/// A check's steps, each with its own time limit (the parent kills a child whose step overruns).
public enum PluginCheckPhase: String, Sendable, Hashable, Codable {
    case load, create, render, emit

    /// The time limit of the step.
    public var limit: Duration {
        switch self {
        case .load: .seconds(2)
        case .create, .render, .emit: .seconds(1)
        }
    }

    /// What runs during the step, for messages.
    public var activity: String {
        switch self {
        case .load: "loading it (dlopen, its constructors, snoozefuse_plugin_entry)"
        case .create: "creating and activating the instance"
        case .render: "rendering"
        case .emit: "emit, cancel or destroy"
        }
    }
}

/// A check's outcome, as clap-validator gives them.
public enum PluginCheckVerdict: String, Sendable, Hashable, Codable {
    case pass, fail, skip, warning
}

/// One line a checking child writes to its parent (JSON): a step begins, a finding, progress, or
/// the check's verdict (its last line).
public struct PluginCheckMessage: Sendable, Hashable, Codable {
    public var phase: PluginCheckPhase?
    public var note: String?
    /// Frames rendered so far (for the message of a render that runs out of time).
    public var rendered: Int?
    public var verdict: PluginCheckVerdict?
    public var summary: String?
    /// The descriptor (the `load` check's verdict carries it).
    public var info: PluginInfo?

    public init(phase: PluginCheckPhase? = nil, note: String? = nil, rendered: Int? = nil, verdict: PluginCheckVerdict? = nil,
                summary: String? = nil, info: PluginInfo? = nil) {
        self.phase = phase
        self.note = note
        self.rendered = rendered
        self.verdict = verdict
        self.summary = summary
        self.info = info
    }
}

/// Watches what a plugin's render does: every system call and every allocation through malloc
/// made between ``RenderCallHooks``' enter and leave, on the thread that called
/// ``watchCallingThread()``. The host program provides it (a seccomp filter that traps and a malloc
/// of its own); it lives there because it replaces malloc for the whole process.
public protocol RenderProbe: Sendable {
    /// Starts watching the calling thread's system calls; nil when it does, else why it cannot
    /// (allocations are counted either way).
    func watchCallingThread() -> String?
    /// Run around each call of render.
    var hooks: RenderCallHooks { get }
    /// What render did between the hooks so far.
    func report() -> RenderProbeReport
}

/// What render did: system calls by name and how often, and allocations.
public struct RenderProbeReport: Sendable, Hashable, Codable {
    public var systemCalls: [String: Int]
    public var allocations: Int
    public var frees: Int

    public init(systemCalls: [String: Int], allocations: Int, frees: Int) {
        self.systemCalls = systemCalls
        self.allocations = allocations
        self.frees = frees
    }
}

/// The checking child's side of the validator: runs one ``PluginCheckName`` and tells its parent
/// each step and finding as it goes (so a crash later still leaves them), then the verdict.
public enum PluginCheck {
    /// How long a pulse may take before it counts as blocking.
    public static let emitDeadline = Duration.seconds(1)
    /// How much audio each render check renders, and within how long (the `render` step's limit).
    public static let renderSeconds = 10
    /// How much audio the real-time check renders, watched.
    public static let watchedSeconds = 1

    /// Runs `check` on the plugin at `path` with `config`; `send` gets every message.
    public static func run(_ check: PluginCheckName, path: String, config: String, probe: (any RenderProbe)?,
                           logger: Logger, send: (PluginCheckMessage) -> Void) {
        send(PluginCheckMessage(phase: .load))
        let plugin: LoadedPlugin
        do {
            try PluginPermissions.check(path: path)
            plugin = try PluginLoader.load(path: path, logger: logger)
        } catch {
            send(PluginCheckMessage(verdict: .fail, summary: error.reasonText))
            return
        }
        let info = plugin.info
        switch check {
        case .load:
            send(PluginCheckMessage(note: "ABI \(info.abiMajor).\(info.abiMinor) (host \(PluginABI.major).\(PluginABI.minor))"))
            send(PluginCheckMessage(note: "descriptor: \(info.id) \(info.version) by \(info.vendor.isEmpty ? "(no vendor)" : info.vendor), \(info.kinds.names.joined(separator: " + "))"))
            send(PluginCheckMessage(verdict: .pass, summary: "loads with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE and exports \(PluginABI.entrySymbol)",
                                    info: info))
        case .sourceCreate:
            checkSourceLifecycle(plugin, config: config, send: send)
        case .sourceRenderStereo:
            checkRender(plugin, config: config, rate: 48_000, channels: 2, block: 512, send: send)
        case .sourceRenderMono:
            checkRender(plugin, config: config, rate: 44_100, channels: 1, block: 1024, send: send)
        case .sourceRealtime:
            checkRealtime(plugin, config: config, probe: probe, send: send)
        case .emitterCreate:
            send(PluginCheckMessage(phase: .create))
            do {
                try PulseEmitter(plugin: plugin, config: config).close(waitingAtMost: emitDeadline)
                send(PluginCheckMessage(verdict: .pass, summary: "create_pulse_emitter returns a complete instance"))
            } catch {
                send(refusal(error, call: "create_pulse_emitter", config: config))
            }
        case .emitterEmit:
            checkEmit(plugin, config: config, send: send)
        }
    }

    /// The verdict for an instance the plugin would not create or activate: a configuration it
    /// needs and was not given, or a device missing here, is a skip (saying what it needs); any
    /// other refusal fails.
    static func refusal(_ error: PluginError, call: String, config: String) -> PluginCheckMessage {
        if case .callFailed(_, let status, let message) = error.reason {
            if status == 1 && config.isEmpty {
                return PluginCheckMessage(verdict: .skip, summary: "it needs a configuration: \(message.isEmpty ? "\(call) refused an empty one" : message); check it with --config key=value,...")
            }
            if status == 3 {
                return PluginCheckMessage(verdict: .skip, summary: "what it drives is not available here: \(message.isEmpty ? "\(call) says UNAVAILABLE" : message)")
            }
        }
        return PluginCheckMessage(verdict: .fail, summary: error.reasonText)
    }

    /// A source, or the message that ends the check instead.
    enum Activation {
        case active(SoundSource)
        case ends(PluginCheckMessage)
    }

    /// A source created and activated at `rate`, `channels`, in blocks of `block`.
    static func activeSource(_ plugin: LoadedPlugin, config: String, rate: Int, channels: Int, block: Int) -> Activation {
        do {
            let source = try SoundSource(plugin: plugin)
            do {
                try source.activate(sampleRate: rate, channels: channels, maxFrames: block, config: config)
            } catch {
                return .ends(refusal(error, call: "activate", config: config))
            }
            return .active(source)
        } catch {
            return .ends(PluginCheckMessage(verdict: .fail, summary: error.reasonText))
        }
    }

    static func checkSourceLifecycle(_ plugin: LoadedPlugin, config: String, send: (PluginCheckMessage) -> Void) {
        send(PluginCheckMessage(phase: .create))
        /// Creates, activates twice and deactivates; the instance is destroyed when this returns,
        /// inside the step and its time limit. The message that ends the check early, if any.
        func exercise() -> PluginCheckMessage? {
            let source: SoundSource
            do {
                source = try SoundSource(plugin: plugin)
                send(PluginCheckMessage(note: "create_sound_source returns a complete instance"))
            } catch {
                return PluginCheckMessage(verdict: .fail, summary: "create_sound_source: \(error.reasonText)")
            }
            for (rate, channels, block) in [(48_000, 2, 512), (44_100, 1, 1024)] {
                do {
                    try source.activate(sampleRate: rate, channels: channels, maxFrames: block, config: config)
                    source.deactivate()
                    send(PluginCheckMessage(note: "activate at \(rate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), blocks of \(block), and deactivate"))
                } catch {
                    return refusal(error, call: "activate", config: config)
                }
            }
            return nil
        }
        send(exercise() ?? PluginCheckMessage(verdict: .pass, summary: "create_sound_source returns a complete instance; activate, deactivate and destroy return"))
    }

    static func checkRender(_ plugin: LoadedPlugin, config: String, rate: Int, channels: Int, block: Int,
                            send: (PluginCheckMessage) -> Void) {
        send(PluginCheckMessage(phase: .create))
        let source: SoundSource
        switch activeSource(plugin, config: config, rate: rate, channels: channels, block: block) {
        case .active(let active): source = active
        case .ends(let message):
            send(message)
            return
        }
        let what = "\(renderSeconds) s of audio at \(rate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), blocks of \(block)"
        var samples = [Float](repeating: 0, count: block * channels)
        var rendered = 0, peak: Float = 0
        let total = rate * renderSeconds
        send(PluginCheckMessage(phase: .render))
        let started = BootInstant.now, waitedBefore = CPUWait.callingThread()
        while rendered < total {
            if let problem = samples.withUnsafeMutableBufferPointer({ source.render(into: $0) }) {
                send(PluginCheckMessage(verdict: .fail, summary: "\(what): \(problem.reasonText)"))
                return
            }
            peak = max(peak, samples.reduce(0) { max($0, abs($1)) })
            rendered += block
            if rendered / rate != (rendered - block) / rate { send(PluginCheckMessage(rendered: rendered)) }
        }
        // The time this thread waited for a CPU (a busy machine) is not the plugin's.
        var waited = Duration.zero
        if let before = waitedBefore, let after = CPUWait.callingThread() { waited = after - before }
        let took = started.duration(to: .now) - waited
        source.deactivate()
        func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }
        let besides = waited >= .milliseconds(50) ? " (and \(DecimalText.fixed(milliseconds(waited), decimals: 0)) ms waiting for a CPU, not counted)" : ""
        if took > PluginCheckPhase.render.limit {
            send(PluginCheckMessage(verdict: .fail, summary: "\(what) took \(DecimalText.fixed(milliseconds(took), decimals: 0)) ms to render\(besides), over the limit of \(PluginCheckPhase.render.limit.components.seconds * 1000) ms"))
        } else if peak == 0 {
            send(PluginCheckMessage(verdict: .fail, summary: "\(what): the output is silent"))
        } else {
            send(PluginCheckMessage(verdict: .pass, summary: "\(what) in \(DecimalText.fixed(milliseconds(took), decimals: 1)) ms\(besides), peak \(DecimalText.fixed(Double(peak), decimals: 2))"))
        }
    }

    static func checkRealtime(_ plugin: LoadedPlugin, config: String, probe: (any RenderProbe)?, send: (PluginCheckMessage) -> Void) {
        guard let probe else {
            send(PluginCheckMessage(verdict: .skip, summary: "this plugin host cannot watch render"))
            return
        }
        send(PluginCheckMessage(phase: .create))
        let source: SoundSource
        switch activeSource(plugin, config: config, rate: 48_000, channels: 2, block: 512) {
        case .active(let active): source = active
        case .ends(let message):
            send(message)
            return
        }
        send(PluginCheckMessage(phase: .render))
        // On a thread of its own: the system-call watch stays on that thread and ends with it.
        let box = SourceBox(source)
        let outcome = BoundedCall.start(named: "snoozefuse-rt") { () -> (String?, PluginError?) in
            let unwatched = probe.watchCallingThread()
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512 * 2)
            defer { buffer.deallocate() }
            buffer.initialize(repeating: 0)
            for _ in 0 ..< watchedSeconds * 48_000 / 512 {
                if let problem = box.source.render(into: buffer, hooks: probe.hooks) { return (unwatched, problem) }
            }
            return (unwatched, nil)
        }.wait()
        let report = probe.report()
        let calls = report.systemCalls.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }
        var findings: [String] = []
        if !calls.isEmpty {
            let total = calls.reduce(0) { $0 + $1.value }
            findings.append("render made \(total) system call\(total == 1 ? "" : "s"): " + calls.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
        }
        if report.allocations + report.frees > 0 {
            findings.append("render called malloc (or calloc, realloc, posix_memalign…) \(report.allocations) time\(report.allocations == 1 ? "" : "s") and free \(report.frees) time\(report.frees == 1 ? "" : "s")")
        }
        if let problem = outcome.1 { send(PluginCheckMessage(note: problem.reasonText)) }
        if !findings.isEmpty {
            send(PluginCheckMessage(verdict: .fail, summary: findings.joined(separator: "; ") + " (render must never allocate, lock, block or do I/O)"))
        } else if let unwatched = outcome.0 {
            send(PluginCheckMessage(verdict: .warning, summary: "render allocated nothing in 1 s of audio; its system calls were not watched: \(unwatched)"))
        } else {
            send(PluginCheckMessage(verdict: .pass, summary: "render made no system call and allocated nothing in 1 s of audio at 48000 Hz, 2 channels"))
        }
    }

    /// Hands the source to the watched thread (the check's main thread waits meanwhile).
    private final class SourceBox: @unchecked Sendable {
        // @unchecked Sendable: used by one thread at a time (the main thread waits for the other).
        let source: SoundSource
        init(_ source: SoundSource) { self.source = source }
    }

    static func checkEmit(_ plugin: LoadedPlugin, config: String, send: (PluginCheckMessage) -> Void) {
        send(PluginCheckMessage(phase: .create))
        let emitter: PulseEmitter
        do {
            emitter = try PulseEmitter(plugin: plugin, config: config)
        } catch {
            send(refusal(error, call: "create_pulse_emitter", config: config))
            return
        }
        let deadlineMs = Int(emitDeadline.components.seconds * 1000)
        for (intensity, length) in [(1.0, 60), (0.7, 40)] {
            send(PluginCheckMessage(phase: .emit))
            emitter.emit(intensity: intensity, duration: .milliseconds(length))
            guard emitter.waitUntilIdle(within: emitDeadline) else {
                send(PluginCheckMessage(verdict: .fail, summary: "emit(intensity \(intensity), \(length) ms): " + PluginError(path: plugin.info.path, reason: .timedOut(call: "emit", milliseconds: deadlineMs)).reasonText))
                return
            }
            if let error = emitter.reportedErrors.last {
                send(PluginCheckMessage(verdict: .fail, summary: "emit(intensity \(intensity), \(length) ms): \(error.reasonText)"))
                return
            }
            send(PluginCheckMessage(note: "emit(intensity \(intensity), \(length) ms) returns within \(deadlineMs) ms"))
        }
        send(PluginCheckMessage(phase: .emit))
        emitter.cancel()
        guard emitter.waitUntilIdle(within: emitDeadline) else {
            send(PluginCheckMessage(verdict: .fail, summary: PluginError(path: plugin.info.path, reason: .timedOut(call: "cancel", milliseconds: deadlineMs)).reasonText))
            return
        }
        send(PluginCheckMessage(phase: .emit))
        guard emitter.close(waitingAtMost: emitDeadline) else {
            send(PluginCheckMessage(verdict: .fail, summary: PluginError(path: plugin.info.path, reason: .timedOut(call: "destroy", milliseconds: deadlineMs)).reasonText))
            return
        }
        send(PluginCheckMessage(verdict: .pass, summary: "two pulses, cancel and destroy each return within \(deadlineMs) ms"))
    }
}

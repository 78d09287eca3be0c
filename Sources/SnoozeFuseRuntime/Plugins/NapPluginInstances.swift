import Foundation
import Logging
import SnoozeFuseAudio
import SnoozeFusePluginHost
import SnoozeFuseSystem

/// The plugin instances of one nap, each in a child process of the plugin host program (never in
/// the nap's own process), and what they report. Every child dies with the nap: ``finish()`` ends
/// them on every way out of a nap (its end, a cancel, SIGTERM), and each asked the kernel to kill
/// it when the nap's process ends (a crash, SIGKILL).
final class NapPluginInstances: Sendable {
    /// The `--source` plugin's frames, when one started.
    let stream: PluginAudioStream?
    /// The `--sleep-sound` plugin's frames, when one started.
    let sleepStream: PluginAudioStream?
    /// Each `--emitter`'s child.
    let emitters: [PluginProcessEmitter]

    init(stream: PluginAudioStream?, sleepStream: PluginAudioStream?, emitters: [PluginProcessEmitter]) {
        self.stream = stream
        self.sleepStream = sleepStream
        self.emitters = emitters
    }

    /// Ends every child: emitters get a second to put their devices back, sources are killed.
    /// Their ends are not reported (the nap is over).
    func finish() async {
        let instances = self
        await BoundedCall.start(named: "snoozefuse-finish") {
            for stream in [instances.stream, instances.sleepStream].compactMap({ $0 }) {
                stream.close()
                stream.child.finish(waitingAtMost: .zero)
            }
            for emitter in instances.emitters { emitter.finish(waitingAtMost: PluginChildProcess.emitterEndLimit) }
        }.value()
    }

    /// Starts each plugin instance of `configuration` in a supervised child. Unknown ids and plugins
    /// of the wrong kind are refused before the nap begins (exit 66, 64); a configuration a plugin
    /// refuses as invalid exits 78 (each plugin judges its own, in a short-lived child); an
    /// unknown id lists the files the scan could not read (one may be it). Impostors of the ids
    /// named, and a plugin whose child cannot start or whose check ended or hung, are notices:
    /// the nap goes on, and the alarm never depends on a plugin.
    ///
    /// What the children write to standard error goes to `errorLog` (`plugins.log`), capped per
    /// instance; their host program's warnings become notices too (at most a few per instance).
    static func start(_ configuration: NapConfiguration, errorLog: PluginErrorLog, logger: Logger,
                      notice: @escaping @Sendable (String) -> Void) throws(NapSetupError) -> NapPluginInstances {
        guard let (host, found) = try check(configuration, logger: logger, notice: notice) else {
            return NapPluginInstances(stream: nil, sleepStream: nil, emitters: [])
        }
        return start(configuration, found: found, host: host, errorLog: errorLog, notice: notice)
    }

    /// What ``start(_:errorLog:logger:notice:)`` refuses before it starts anything: each plugin
    /// named is found, of its kind, with a configuration it accepts (`nap --dry-run` asks this
    /// alone). Returns the host program and the plugins by what named them; nil when none is named.
    static func check(_ configuration: NapConfiguration, logger: Logger, notice: @escaping @Sendable (String) -> Void)
        throws(NapSetupError) -> (host: String, found: [String: (PluginInfo, PluginSpec)])? {
        let requested = (configuration.source.map { [("--source", $0, PluginHostProgram.Kind.source)] } ?? [])
            + (configuration.sleepSound.map { [("--sleep-sound", $0, PluginHostProgram.Kind.source)] } ?? [])
            + configuration.emitters.map { ("--emitter", $0, PluginHostProgram.Kind.emitter) }
        guard !requested.isEmpty else { return nil }
        guard let host = PluginHostProgram.locate() else {
            throw NapSetupError(.internalError, [PluginHostProgram.missing(PluginSearchPath.currentExecutable()).reasonText])
        }
        let registry = PluginCatalog.scan(logger: logger)
        // Every instance named, found, of the right kind, with a configuration its plugin accepts.
        var found: [String: (PluginInfo, PluginSpec)] = [:]
        for (option, text, kind) in requested {
            guard let spec = PluginSpec(parsing: text) else {
                throw NapSetupError(.usage, ["\"\(text)\" is not a plugin: expected ID or ID:key=value,..."])
            }
            guard let plugin = registry.plugin(id: spec.id) else {
                // A file that claims the id, or one the scan refused before it could read an id
                // (it may be the plugin named), is said here: when it matters, and once. A nap
                // that names no such plugin says nothing of them (`plugins list` and `doctor` do).
                let claims = registry.problems.filter { problem in
                    problem.id.map { $0 == spec.id || $0.hasSuffix("." + spec.id) } ?? true
                }
                throw NapSetupError(.missingInput, [PluginError(path: spec.id, reason: .unknownPlugin(spec.id)).reasonText]
                    + claims.map { "\(option) \(spec.id): \($0.id == nil ? "a plugin file that could not be read may be it: " : "")\($0.error)" })
            }
            let wanted: PluginKinds = kind == .emitter ? .pulseEmitter : .soundSource
            guard plugin.kinds.contains(wanted) else {
                throw NapSetupError(.usage, ["\(PluginError(path: plugin.path, reason: .wrongKind(id: plugin.id, wanted: kind == .emitter ? "pulse emitter" : "sound source")))"])
            }
            // Impostors and shadowed copies of the id named are said at the start of every nap that names it.
            for problem in registry.problems(claiming: plugin.id) {
                notice("\(option) \(spec.id) is \(plugin.id) from \(plugin.path); another file claims that id: \(problem.error)")
            }
            found[text] = (plugin, spec)
        }
        try checkConfigurations(requested.compactMap { option, text, kind in
            found[text].map { (option, $0.1, $0.0, kind) }
        }, host: host, notice: notice)
        return (host, found)
    }

    private static func start(_ configuration: NapConfiguration, found: [String: (PluginInfo, PluginSpec)], host: String,
                              errorLog: PluginErrorLog, notice: @escaping @Sendable (String) -> Void) -> NapPluginInstances {
        /// A source plugin's stream from a child process; `role` names it in the notices, `instead`
        /// says what plays when it fails, `unstarted` when its process cannot be started.
        func sourceStream(_ text: String, role: String, instead: String, unstarted: String,
                          underrunFill: SourceFailureFallback) -> PluginAudioStream? {
            guard let (plugin, spec) = found[text] else { return nil }
            do {
                let child = try PluginChildProcess(
                    executable: host,
                    arguments: PluginHostProgram.serveArguments(kind: .source, path: plugin.path, config: spec.config, expectID: plugin.id),
                    info: plugin, role: .readsFromChild, errorLog: errorLog, warn: notice) { info, how in
                        notice("\(role) plugin \(info.id) stopped (\(how)); \(instead) (\(info.path))")
                    }
                return PluginAudioStream(child: child, sampleRate: PluginServer.sourceRate, channels: PluginServer.sourceChannels,
                                         underrunFill: underrunFill, role: role, report: notice)
            } catch {
                notice("\(role): \(error); \(unstarted)")
                return nil
            }
        }
        let stream = configuration.source.flatMap {
            sourceStream($0, role: "sound-source", instead: "the alarm plays the built-in tone instead",
                         unstarted: "the alarm plays --sound (or the built-in sound) instead", underrunFill: .builtInTone)
        }
        let sleepStream = configuration.sleepSound.flatMap {
            sourceStream($0, role: "sleep-sound", instead: "napping in silence", unstarted: "napping in silence", underrunFill: .silence)
        }
        var emitters: [PluginProcessEmitter] = []
        for text in configuration.emitters {
            guard let (plugin, spec) = found[text] else { continue }
            do {
                let child = try PluginChildProcess(
                    executable: host,
                    arguments: PluginHostProgram.serveArguments(kind: .emitter, path: plugin.path, config: spec.config, expectID: plugin.id),
                    info: plugin, role: .writesToChild, pipeCapacity: 4096, errorLog: errorLog, warn: notice) { info, how in
                        notice("plugin \(info.id) stopped: \(how) (\(info.path)); its pulses are dropped, the alarm goes on")
                    }
                emitters.append(PluginProcessEmitter(child: child))
            } catch {
                notice("\(error)")
            }
        }
        return NapPluginInstances(stream: stream, sleepStream: sleepStream, emitters: emitters)
    }

    /// Checks every configuration at once, each in a short-lived child. A configuration the plugin
    /// refuses as invalid is reported (the plugin, its message naming the key, and the keys it
    /// accepts) and ends the command (exit 78). A check whose child ended or hung is a notice; any
    /// other refusal is left to the plugin's own process, which reports it when the nap starts.
    private static func checkConfigurations(_ requested: [(String, PluginSpec, PluginInfo, PluginHostProgram.Kind)],
                                            host: String, notice: @Sendable (String) -> Void) throws(NapSetupError) {
        var checks: [PluginConfigCheck] = []
        for (option, spec, info, kind) in requested {
            do {
                checks.append(try PluginConfigCheck(option: option, spec: spec, info: info, kind: kind, host: host))
            } catch {
                throw NapSetupError(.internalError, ["cannot start \(host) to check \(option) \(spec): \(error)"])
            }
        }
        var lines: [String] = []
        for check in checks {
            switch check.wait() {
            case .starts:
                continue
            case .refused(let refusal):
                if refusal.isBadConfiguration { lines += check.describe(refusal) }
            case .noAnswer(let how):
                notice("\(check.option) \(check.spec): checking plugin \(check.info.id) with this configuration failed: \(how); the nap goes on without depending on it (\(check.info.path))")
            }
        }
        if !lines.isEmpty { throw NapSetupError(.badConfiguration, lines) }
    }
}

/// An emitter's child as a place pulses go.
struct EmitterSink: PulseSink {
    let emitter: PluginProcessEmitter

    func emit(intensity: Double, duration: Duration) {
        emitter.emit(intensity: intensity, duration: duration)
    }

    func cancel() {
        emitter.cancel()
    }
}

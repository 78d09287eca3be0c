import Foundation
import SnoozeFusePluginHost

/// Why a plugin instance would not start, as `plugins serve --check-only` prints it (one JSON object).
struct PluginStartRefusal: Codable {
    /// The plugin's `SNOOZEFUSE_STATUS_*` (1 is INVALID_CONFIG), or nil when it failed before the
    /// plugin answered (permissions, loading).
    var status: Int32?
    /// The plugin's own message, or what went wrong.
    var message: String

    init(_ error: PluginError) {
        if case .callFailed(_, let status, let message) = error.reason {
            self.status = status
            self.message = message
        } else {
            status = nil
            message = error.reasonText
        }
    }

    var isBadConfiguration: Bool { status == 1 }
}

/// One `plugins serve --check-only` child: the plugin's own verdict on a configuration, given in
/// `activate` (a source) or `create_pulse_emitter` (an emitter), in a process of its own so a
/// plugin that crashes or hangs there cannot take the nap with it.
struct PluginConfigCheck {
    /// How long a plugin may take to create (and activate) an instance before the check gives up.
    static let deadline: DispatchTimeInterval = .seconds(10)

    let option: String
    let spec: PluginSpec
    let info: PluginInfo
    private let process = Process()
    private let output = Pipe()
    private let ended = DispatchSemaphore(value: 0)

    init(option: String, spec: PluginSpec, info: PluginInfo, emitter: Bool, executable: String) throws {
        self.option = option
        self.spec = spec
        self.info = info
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["plugins", "serve", "--check-only", "--kind", emitter ? "emitter" : "source",
                             "--path", info.path, "--config", spec.config]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let ended = ended
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
    }

    /// The refusal, or nil when the instance starts or the check could not tell (it crashed or
    /// hung: the plugin's own process reports that when the nap starts it).
    func wait() -> PluginStartRefusal? {
        if ended.wait(timeout: .now() + Self.deadline) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationReason == .exit, process.terminationStatus == 0,
              let line = data.split(separator: UInt8(ascii: "\n")).first else { return nil }
        return try? JSONDecoder().decode(PluginStartRefusal.self, from: Data(line))
    }

    /// `snoozefuse: --emitter terminal:bell=yes: plugin org.snoozefuse.terminal refuses this
    /// configuration: bell=yes: expected 0 or 1`, then the keys it accepts (its `config_help`).
    func describe(_ refusal: PluginStartRefusal) -> [String] {
        let reason = refusal.message.isEmpty ? "it gives no reason" : refusal.message
        var lines = ["snoozefuse: \(option) \(spec): plugin \(info.id) refuses this configuration: \(reason)"]
        if let help = info.configHelp {
            lines.append("snoozefuse: \(info.id) accepts (\(option) ID:key=value,...):")
            lines += help.split(separator: "\n").map { "  \($0)" }
        } else {
            lines.append("snoozefuse: see `snoozefuse plugins info \(info.id)`")
        }
        return lines
    }
}

extension PluginNapOptions {
    /// Checks the configuration of `--source`, `--sleep-sound` and each `--emitter` before the nap begins, all at
    /// once, each in a short-lived child. A configuration the plugin refuses as invalid is
    /// reported (the plugin, its message naming the key, and the keys it accepts) and ends the
    /// command with exit 78 (EX_CONFIG). Any other failure is left to the plugin's own process,
    /// which reports it when the nap starts (the alarm never depends on a plugin). Unknown ids
    /// and plugins of the wrong kind are skipped here and reported by `start`.
    func checkConfigurations(executable: String, registry: PluginRegistry) throws {
        let requested = (source.map { [("--source", $0, false)] } ?? []) + (sleepSound.map { [("--sleep-sound", $0, false)] } ?? [])
            + emitters.map { ("--emitter", $0, true) }
        var checks: [PluginConfigCheck] = []
        for (option, text, emitter) in requested {
            guard let spec = PluginSpec(parsing: text), let plugin = registry.plugin(id: spec.id),
                  plugin.info.kinds.contains(emitter ? .pulseEmitter : .soundSource) else { continue }
            checks.append(try PluginConfigCheck(option: option, spec: spec, info: plugin.info, emitter: emitter, executable: executable))
        }
        var refused = false
        for check in checks {
            guard let refusal = check.wait(), refusal.isBadConfiguration else { continue }
            check.describe(refusal).forEach { writeLine($0, to: STDERR_FILENO) }
            refused = true
        }
        if refused { throw ExitStatus.badConfig }
    }
}

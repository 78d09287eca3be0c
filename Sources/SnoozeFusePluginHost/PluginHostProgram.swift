import Foundation
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The plugin host program, `snoozefuse-plugin-host`: the only process that loads a plugin. A nap
/// runs each plugin instance in a child running it (`serve`), and `plugins check` validates a
/// plugin file in one (`check`). It is installed in `PREFIX/lib/snoozefuse/` and sits next to
/// `snoozefuse` in a build folder.
///
/// A plugin's configuration reaches it as data, after `--`, never as an option of its own.
public enum PluginHostProgram {
    public static let name = "snoozefuse-plugin-host"

    /// What a serving child runs.
    public enum Kind: String, Sendable, Hashable {
        case source, emitter
    }

    /// Where the host program is for the executable at `executablePath` (the running one when nil),
    /// or `nil` when it is not installed.
    public static func locate(executablePath: String? = PluginSearchPath.currentExecutable()) -> String? {
        candidates(executablePath: executablePath).first { access($0, X_OK) == 0 }
    }

    /// Where it is looked for: next to the executable (a build folder, or a test's), then in
    /// `PREFIX/lib/snoozefuse/` for an executable in `PREFIX/bin/`.
    public static func candidates(executablePath: String?) -> [String] {
        guard let executablePath else { return [] }
        let folder = PluginSearchPath.parent(of: executablePath)
        var found = [folder + "/" + name]
        if PluginSearchPath.lastComponent(of: folder) == "bin" {
            found.append(PluginSearchPath.parent(of: folder) + "/lib/snoozefuse/" + name)
        }
        return found
    }

    /// The arguments of a child that serves one instance of the plugin at `path` configured by
    /// `config`; with `checkOnly`, it only starts the instance, frees it and prints why it would not
    /// start (one ``PluginStartRefusal`` in JSON), if it would not.
    public static func serveArguments(kind: Kind, path: String, config: String, checkOnly: Bool = false) -> [String] {
        ["serve", kind.rawValue, path] + (checkOnly ? ["--check-only"] : []) + ["--", config]
    }

    /// The arguments of a child that validates the plugin at `path` with `config`.
    public static func checkArguments(path: String, config: String) -> [String] {
        ["check", path, "--", config]
    }

    public static func missing(_ executablePath: String?) -> PluginError {
        PluginError(path: name, reason: .processEnded(
            "the plugin host program is not installed (looked in \(candidates(executablePath: executablePath).joined(separator: ", "))); reinstall snoozefuse (`make install`) or build it (`swift build --product \(name)`)"))
    }
}

/// Why a plugin instance would not start, as `snoozefuse-plugin-host serve --check-only` prints it
/// (one JSON object).
public struct PluginStartRefusal: Codable, Sendable, Hashable {
    /// The plugin's `SNOOZEFUSE_STATUS_*` (1 is INVALID_CONFIG), or nil when it failed before the
    /// plugin answered (permissions, loading).
    public var status: Int32?
    /// The plugin's own message, or what went wrong.
    public var message: String

    public init(_ error: PluginError) {
        if case .callFailed(_, let status, let message) = error.reason {
            self.status = status
            self.message = message
        } else {
            status = nil
            message = error.reasonText
        }
    }

    public var isBadConfiguration: Bool { status == 1 }
}

/// One `serve --check-only` child: the plugin's own verdict on a configuration, given in `activate`
/// (a source) or `create_pulse_emitter` (an emitter), in a process of its own so a plugin that
/// crashes or hangs there cannot take the nap with it.
public struct PluginConfigCheck: Sendable {
    /// How long a plugin may take to create (and activate) an instance before the check gives up.
    public static let deadline = Duration.seconds(10)

    /// The option that named it (`--emitter`).
    public let option: String
    public let spec: PluginSpec
    public let info: PluginInfo
    private let process: ProcessBox
    private let output: Pipe

    /// `@unchecked Sendable`: the process is started in `init` and afterwards only waited for.
    private final class ProcessBox: @unchecked Sendable {
        let process = Process()
    }

    /// Starts the check in a child of the host program at `host`.
    public init(option: String, spec: PluginSpec, info: PluginInfo, kind: PluginHostProgram.Kind, host: String) throws {
        self.option = option
        self.spec = spec
        self.info = info
        process = ProcessBox()
        output = Pipe()
        let process = process.process
        process.executableURL = URL(fileURLWithPath: host)
        process.arguments = PluginHostProgram.serveArguments(kind: kind, path: info.path, config: spec.config, checkOnly: true)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// The refusal, or nil when the instance starts or the check could not tell (it crashed or
    /// hung: the plugin's own process reports that when the nap starts it).
    public func wait() -> PluginStartRefusal? {
        let process = process.process
        // The child's output ends when it exits (or is killed); read it on a thread of its own with
        // the check's time limit.
        let handle = output.fileHandleForReading
        let reading = BoundedCall.start(named: "snoozefuse-check") { handle.readDataToEndOfFile() }
        guard let data = reading.wait(atMost: Self.deadline) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0,
              let line = data.split(separator: UInt8(ascii: "\n")).first else { return nil }
        return try? JSONDecoder().decode(PluginStartRefusal.self, from: Data(line))
    }

    /// `--emitter terminal:bell=yes: plugin org.snoozefuse.terminal refuses this configuration:
    /// bell=yes: expected 0 or 1`, then the keys it accepts (its `config_help`).
    public func describe(_ refusal: PluginStartRefusal) -> [String] {
        let reason = refusal.message.isEmpty ? "it gives no reason" : refusal.message
        var lines = ["\(option) \(spec): plugin \(info.id) refuses this configuration: \(reason)"]
        if let help = info.configHelp {
            lines.append("\(info.id) accepts (\(option) ID:key=value,...):")
            lines += help.split(separator: "\n").map { "  \($0)" }
        } else {
            lines.append("see `snoozefuse plugins info \(info.id)`")
        }
        return lines
    }
}

/// The parent's side of `plugins check`: runs the validator in a child of the host program, so a
/// plugin that crashes is reported, not fatal.
public enum PluginValidation {
    /// The findings for the plugin at `path` (absolute), ending with a problem when the checking
    /// process crashed or failed.
    public static func run(path: String, config: String) throws(PluginError) -> [PluginCheckFinding] {
        guard let host = PluginHostProgram.locate() else { throw PluginHostProgram.missing(PluginSearchPath.currentExecutable()) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: host)
        process.arguments = PluginHostProgram.checkArguments(path: path, config: config)
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw PluginError(path: path, reason: .processEnded("cannot start \(host): \(error)"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var findings: [PluginCheckFinding] = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONDecoder().decode(PluginCheckFinding.self, from: Data($0.utf8))
        }
        if process.terminationReason == .uncaughtSignal {
            let name = strsignal(process.terminationStatus).map { String(cString: $0) } ?? "signal \(process.terminationStatus)"
            findings.append(PluginCheckFinding(.problem, "the plugin crashed the checking process",
                                               "killed by signal \(process.terminationStatus) (\(name)) after the last check above"))
        } else if process.terminationStatus != 0 {
            findings.append(PluginCheckFinding(.problem, "the checking process", "exited with status \(process.terminationStatus)"))
        }
        return findings
    }
}

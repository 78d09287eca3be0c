import ArgumentParser
import Foundation
import Logging
import SnoozeFusePluginHost

struct Plugins: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, inspect and check sound-source and pulse-emitter plugins.",
        discussion: """
        Plugins are shared libraries (*.so) found, first id wins, in: each folder of \
        SNOOZEFUSE_PLUGIN_PATH (colon-separated), $XDG_DATA_HOME/snoozefuse/plugins, \
        PREFIX/lib/snoozefuse/plugins, and the build folder when run from a checkout. Files or \
        folders writable by other users are refused. See PLUGINS.md to write one.
        """,
        subcommands: [PluginsList.self, PluginsInfo.self, PluginsCheck.self, PluginsCheckChild.self, PluginsServe.self]
    )
}

/// Log lines from the plugin layer go to standard error as `snoozefuse: …` (never standard output).
struct StandardErrorLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var prefix: String

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let plugin = (event.metadata?["plugin"] ?? metadata["plugin"]).map { "plugin \($0): " } ?? ""
        let level = event.level >= .error ? "error: " : event.level >= .warning ? "warning: " : ""
        writeLine("\(prefix)\(level)\(plugin)\(event.message)", to: STDERR_FILENO)
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        log(event: LogEvent(level: level, message: message, metadata: metadata, source: source, file: file, function: function, line: line))
    }
}

func pluginLogger(level: Logger.Level = .warning) -> Logger {
    Logger(label: "snoozefuse.plugins") { _ in StandardErrorLogHandler(logLevel: level, prefix: "snoozefuse: ") }
}

/// Scans the standard search path. Problems are logged (as warnings/errors) on standard error.
func scanPlugins(logger: Logger) -> PluginRegistry {
    let path = PluginSearchPath.standard(environment: ProcessInfo.processInfo.environment,
                                         executablePath: PluginSearchPath.currentExecutable())
    return PluginDiscovery(searchPath: path, logger: logger).scan()
}

struct PluginsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the plugins found.")

    @Flag(help: "One JSON object: plugins and problems.")
    var json = false

    func run() async throws {
        let registry = scanPlugins(logger: pluginLogger(level: json ? .critical : .warning))
        if json {
            struct Listing: Encodable {
                var plugins: [PluginJSON]
                var problems: [Problem]
                struct Problem: Encodable { var severity: String; var path: String; var message: String }
            }
            let listing = Listing(plugins: registry.plugins.map { PluginJSON($0.info) }, problems: registry.problems.map {
                .init(severity: $0.severity.rawValue, path: $0.error.path, message: $0.error.reasonText)
            })
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            writeLine(String(decoding: try encoder.encode(listing), as: UTF8.self), to: STDOUT_FILENO)
            return
        }
        if registry.plugins.isEmpty {
            writeLine("snoozefuse: no plugins found", to: STDERR_FILENO)
            return
        }
        let width = registry.plugins.map(\.info.id.count).max() ?? 0
        for plugin in registry.plugins {
            let info = plugin.info
            let id = info.id.padding(toLength: width, withPad: " ", startingAt: 0)
            writeLine("\(id)  \(info.version)  \(info.kinds.names.joined(separator: ","))  \(info.name)", to: STDOUT_FILENO)
        }
    }
}

struct PluginsInfo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "info", abstract: "Show one plugin's descriptor and configuration keys.")

    @Argument(help: ArgumentHelp("The plugin's id (or its last part, e.g. tone).", valueName: "id"))
    var id: String

    @Flag(help: "Print the descriptor as JSON.")
    var json = false

    func run() async throws {
        let registry = scanPlugins(logger: pluginLogger(level: .error))
        guard let plugin = registry.plugin(id: id) else {
            writeLine("snoozefuse: \(PluginError(path: id, reason: .unknownPlugin(id)).reasonText)", to: STDERR_FILENO)
            throw ExitStatus.missingInput
        }
        let info = plugin.info
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            writeLine(String(decoding: try encoder.encode(PluginJSON(info)), as: UTF8.self), to: STDOUT_FILENO)
            return
        }
        var lines = [
            "id:       \(info.id)", "name:     \(info.name)", "version:  \(info.version)",
            "vendor:   \(info.vendor)", "kinds:    \(info.kinds.names.joined(separator: ", "))",
            "features: \(info.featureNames.isEmpty ? "none" : info.featureNames.joined(separator: ", "))",
            "ABI:      \(info.abiMajor).\(info.abiMinor)", "file:     \(info.path)",
        ]
        if let summary = info.summary { lines.insert("about:    \(summary)", at: 2) }
        if let help = info.configHelp {
            lines.append("config keys (ID:key=value,...):")
            lines += help.split(separator: "\n").map { "  \($0)" }
        }
        lines.forEach { writeLine($0, to: STDOUT_FILENO) }
    }
}

struct PluginsCheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a plugin file in a separate process: ABI, instances, render, emit.",
        discussion: "Exit status 0 when every check passes, 65 when any problem is found (a crash included)."
    )

    @Argument(help: ArgumentHelp("The plugin file (*.so).", valueName: "path"))
    var path: String

    @Option(help: ArgumentHelp("Configuration handed to the instances (key=value,...).", valueName: "config"))
    var config: String = ""

    @Flag(help: "One JSON object per finding.")
    var json = false

    func run() async throws {
        guard let executable = PluginSearchPath.currentExecutable() else { throw ExitStatus.internalError }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["plugins", "check-child", absolute, "--config", config]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if !json { writeLine("checking \(absolute)", to: STDOUT_FILENO) }
        for finding in findings {
            writeLine(json ? String(decoding: try encoder.encode(finding), as: UTF8.self) : finding.description, to: STDOUT_FILENO)
        }
        let problems = findings.filter { $0.verdict == .problem }.count
        if !json {
            writeLine(problems == 0 ? "\(absolute): all \(findings.count) checks passed"
                                    : "\(absolute): \(problems) problem\(problems == 1 ? "" : "s")", to: STDOUT_FILENO)
        }
        if problems > 0 { throw ExitStatus.badData }
    }
}

/// The child half of `plugins check`: prints one JSON finding per line, flushed as it goes, so a
/// crash keeps the findings before it.
struct PluginsCheckChild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check-child", shouldDisplay: false)

    @Argument var path: String
    @Option var config: String = ""

    func run() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        PluginCheck.run(path: path, config: config, logger: pluginLogger(level: .error)) { finding in
            if let data = try? encoder.encode(finding) {
                writeLine(String(decoding: data, as: UTF8.self), to: STDOUT_FILENO)
            }
        }
        // The plugin's threads may be stuck (a blocking emitter): end without waiting for them.
        Foundation.exit(0)
    }
}

/// The child half of a supervised plugin instance (see `PluginChildProcess`).
struct PluginsServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", shouldDisplay: false)

    enum Kind: String, ExpressibleByArgument { case source, emitter }

    @Option var kind: Kind
    @Option var path: String
    @Option var config: String = ""
    /// Only create (and activate) the instance, free it, and print why it would not start, if it
    /// would not (one `PluginStartRefusal` in JSON); see `PluginConfigCheck`.
    @Flag(name: .customLong("check-only")) var checkOnly = false

    func run() async throws {
        if checkOnly {
            let logger = pluginLogger(level: .critical)
            if let error = PluginServer.checkStart(emitter: kind == .emitter, path: path, config: config, logger: logger),
               let data = try? JSONEncoder().encode(PluginStartRefusal(error)) {
                writeLine(String(decoding: data, as: UTF8.self), to: STDOUT_FILENO)
            }
            Foundation.exit(0)
        }
        let logger = pluginLogger(level: .warning)
        let status = switch kind {
        case .source: PluginServer.serveSource(path: path, config: config, logger: logger)
        case .emitter: PluginServer.serveEmitter(path: path, config: config, logger: logger)
        }
        Foundation.exit(status.rawValue)
    }
}

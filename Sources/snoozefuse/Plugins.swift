import ArgumentParser
import Foundation
import SnoozeFuseRuntime

struct Plugins: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, inspect and check sound-source and pulse-emitter plugins.",
        discussion: """
        Plugins are shared libraries (*.so) found, first id wins, in: each folder of \
        SNOOZEFUSE_PLUGIN_PATH (colon-separated), $XDG_DATA_HOME/snoozefuse/plugins, \
        PREFIX/lib/snoozefuse/plugins, and the build folder when run from a checkout. Files or \
        folders writable by other users are refused. See PLUGINS.md to write one.
        """,
        subcommands: [PluginsList.self, PluginsInfo.self, PluginsCheck.self]
    )
}

/// The plugins on the search path; the problems `verbosity` asks for are said on standard error.
func scanPlugins(_ verbosity: PluginCatalog.Verbosity) -> PluginCatalog {
    PluginCatalog(verbosity: verbosity) { writeLine("snoozefuse: \($0)", to: STDERR_FILENO) }
}

struct PluginsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the plugins found.")

    @Flag(help: "One JSON object: plugins and problems.")
    var json = false

    func run() async throws {
        let registry = scanPlugins(json ? .none : .warnings)
        if json {
            struct Listing: Encodable {
                var plugins: [PluginJSON]
                var problems: [Problem]
                struct Problem: Encodable { var severity: String; var path: String; var message: String }
            }
            let listing = Listing(plugins: registry.plugins.map(PluginJSON.init), problems: registry.problems.map {
                .init(severity: $0.severity, path: $0.path, message: $0.message)
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
        let width = registry.plugins.map(\.id.count).max() ?? 0
        for info in registry.plugins {
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
        let registry = scanPlugins(.errors)
        guard let info = registry.plugin(id: id) else {
            writeLine("snoozefuse: \(PluginCatalog.unknownPluginMessage(id))", to: STDERR_FILENO)
            throw ExitStatus.missingInput
        }
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
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let findings: [PluginCheckFinding]
        do throws(NapSetupError) {
            findings = try PluginCatalog.check(path: absolute, config: config)
        } catch {
            throw ExitStatus.reporting(error)
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

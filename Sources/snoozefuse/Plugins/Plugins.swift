import ArgumentParser
import Foundation
import SnoozeFuseRuntime

struct Plugins: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List, inspect and check sound-source and pulse-emitter plugins.",
        discussion: """
        Plugins are shared libraries (*.so) found, first id wins, in: each folder of \
        SNOOZEFUSE_PLUGIN_PATH (colon-separated), $XDG_DATA_HOME/snoozefuse/plugins, \
        PREFIX/lib/snoozefuse/plugins, and the build folder when run from a checkout. A file is \
        refused when it or a folder above it may be written by other users or belongs to someone \
        else than you or root, when loading it crashes, ends or hangs its scanner process, or when \
        it takes an id of the reserved prefix org.snoozefuse. outside the install. Files are loaded \
        in a scanner process, never in snoozefuse, and what it found is cached in \
        $XDG_CACHE_HOME/snoozefuse/plugins.json until a file changes. See PLUGINS.md to write one.
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
                struct Problem: Encodable { var severity: String; var path: String; var message: String; var id: String? }
            }
            let listing = Listing(plugins: registry.plugins.map(PluginJSON.init), problems: registry.problems.map {
                .init(severity: $0.severity, path: $0.path, message: $0.message, id: $0.id)
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
            let id = padded(info.id, to: width)
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
        abstract: "Validate a plugin file: every check in a process of its own, each step with a time limit.",
        discussion: """
        The checks: file (permissions and owners up to /), load (2 s), id, then for a sound source \
        source-create (create and activate, 1 s), source-render-48000-stereo and \
        source-render-44100-mono (10 s of audio within 1 s), source-realtime (every system call and \
        malloc of render), and for a pulse emitter emitter-create (1 s) and emitter-emit (each pulse \
        within 1 s). A check whose process crashes, ends or overruns its time limit fails. Time the \
        check waited for a CPU (a busy machine) is not counted against the render checks or the limit \
        at which a step is killed (up to 8 times the limit); each pulse is still timed on the clock. \
        A plugin \
        that needs a configuration (or a device missing here) is skipped, saying what it needs: give \
        it with --config. The id check fails an id the nap would refuse (the reserved \
        org.snoozefuse. prefix outside the plugins installed with snoozefuse).

        Exit status: 0 when every check ran and passed (warnings allowed), 65 when a check \
        failed, 3 when none failed but some were skipped (with --allow-skips: 0).
        """
    )

    @Argument(help: ArgumentHelp("The plugin file (*.so).", valueName: "path"))
    var path: String

    @Option(help: ArgumentHelp("Configuration handed to the instances (key=value,...).", valueName: "config"))
    var config: String = ""

    @Flag(help: "One JSON object: every check with its verdict, and the counts.")
    var json = false

    @Flag(help: "Exit 0 when no check failed, even if some were skipped (they need a --config or a device missing here).")
    var allowSkips = false

    func run() async throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let report: PluginCheckReport
        do throws(NapSetupError) {
            report = try PluginCatalog.check(path: absolute, config: config)
        } catch {
            throw ExitStatus.reporting(error)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            writeLine(String(decoding: try encoder.encode(report.json), as: UTF8.self), to: STDOUT_FILENO)
        } else {
            writeLine("checking \(absolute)", to: STDOUT_FILENO)
            for check in report.checks { writeLine(check.description, to: STDOUT_FILENO) }
            writeLine("\(absolute): \(Self.summary(report, allowSkips: allowSkips))", to: STDOUT_FILENO)
        }
        if !report.passed { throw ExitStatus.badData }
        if !report.complete && !allowSkips { throw ExitStatus.checksSkipped }
    }

    /// The last line: a skipped check is never counted as passed ("all 5 checks passed (2
    /// skipped)" said of a plugin two checks never ran on).
    static func summary(_ report: PluginCheckReport, allowSkips: Bool) -> String {
        let failed = report.count(.fail), skipped = report.count(.skip), warnings = report.count(.warning)
        let ran = report.checks.count - skipped
        let warned = warnings > 0 ? ", \(warnings) with a warning" : ""
        if failed > 0 {
            return "\(failed) problem\(failed == 1 ? "" : "s") in \(ran) check\(ran == 1 ? "" : "s") run"
                + (skipped > 0 ? ", \(skipped) not run" : "") + warned
        }
        guard skipped > 0 else { return "all \(ran) checks passed\(warned)" }
        return "\(ran) of \(report.checks.count) checks passed\(warned); \(skipped) not run (they need --config or a device"
            + (allowSkips ? "; --allow-skips accepts that)" : "): exit 3, or 0 with --allow-skips)")
    }
}

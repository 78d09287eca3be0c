import Foundation
import Logging
public import SnoozeFusePluginHost
import SnoozeFuseSystem

/// A plugin's descriptor as the catalog lists it.
public typealias PluginInfo = SnoozeFusePluginHost.PluginInfo
/// What `plugins check` found: every named check with its verdict.
public typealias PluginCheckReport = SnoozeFusePluginHost.PluginCheckReport

/// The plugins found on the standard search path (SPEC §6), for `plugins list|info|check` and for
/// a nap that names plugins. Found without loading any plugin here: the files are loaded and
/// described by a scanner child of the plugin host program, and its results are cached (see
/// ``PluginDiscovery``).
public struct PluginCatalog: Sendable {
    /// A refused or skipped file.
    public struct Problem: Sendable, Hashable {
        /// `warning` or `error`.
        public var severity: String
        public var path: String
        public var message: String
        /// The id the file claims, when the scan got that far.
        public var id: String?
    }

    public let plugins: [PluginInfo]
    public let problems: [Problem]
    private let registry: PluginRegistry

    /// Which problems of a scan are said as they are found.
    public enum Verbosity: Sendable, Hashable {
        case none, errors, warnings

        var level: Logger.Level {
            switch self {
            case .none: .critical
            case .errors: .error
            case .warnings: .warning
            }
        }
    }

    /// Scans the standard search path; the problems `verbosity` asks for are also said through
    /// `log` (as `warning: plugin ID: …`).
    public init(verbosity: Verbosity = .warnings, log: @escaping @Sendable (String) -> Void) {
        self.init(registry: Self.scan(logger: lineLogger(verbosity.level, log)))
    }

    private init(registry: PluginRegistry) {
        self.registry = registry
        plugins = registry.plugins
        problems = registry.problems.map {
            Problem(severity: $0.severity.rawValue, path: $0.error.path, message: $0.error.reasonText + $0.cacheNote, id: $0.id)
        }
    }

    /// The plugin with this id (or its last part, e.g. `tone`).
    public func plugin(id: String) -> PluginInfo? {
        registry.plugin(id: id)
    }

    /// Whether `text` names a plugin instance: `ID` or `ID:key=value,...`.
    public static func isSpec(_ text: String) -> Bool {
        PluginSpec(parsing: text) != nil
    }

    /// Why `id` is not in the catalog, for people.
    public static func unknownPluginMessage(_ id: String) -> String {
        PluginError(path: id, reason: .unknownPlugin(id)).reasonText
    }

    /// Validates the plugin file at `path`, each check in a child of the plugin host program.
    /// Makes this process adopt what the checked plugin detaches (a child subreaper), so that a
    /// process it leaves behind is found, ended and named: call it from a program of its own.
    public static func check(path: String, config: String) throws(NapSetupError) -> PluginCheckReport {
        _ = AdoptedProcesses.adoptOrphans()
        guard let host = PluginHostProgram.locate() else {
            throw NapSetupError(.internalError, [PluginHostProgram.missing(PluginSearchPath.currentExecutable()).reasonText])
        }
        return PluginValidation.run(path: path, config: config, host: host)
    }

    /// The registry for the standard search path, from the scan cache of this user
    /// (`$XDG_CACHE_HOME/snoozefuse/plugins.json`) and a scanner child for what it does not know.
    static func scan(logger: Logger) -> PluginRegistry {
        let environment = ProcessInfo.processInfo.environment
        let executable = PluginSearchPath.currentExecutable()
        return PluginDiscovery(searchPath: PluginSearchPath.standard(environment: environment, executablePath: executable),
                               host: PluginHostProgram.locate(executablePath: executable),
                               cache: PluginScanCache.standard(environment: environment), logger: logger).scan()
    }
}

import Foundation
import Logging
public import SnoozeFusePluginHost

/// A plugin's descriptor as the catalog lists it.
public typealias PluginInfo = SnoozeFusePluginHost.PluginInfo
/// One result of validating a plugin (`plugins check`).
public typealias PluginCheckFinding = SnoozeFusePluginHost.PluginCheckFinding

/// The plugins found on the standard search path (SPEC §6), for `plugins list|info|check` and for
/// a nap that names plugins.
public struct PluginCatalog: Sendable {
    /// A refused or skipped file.
    public struct Problem: Sendable, Hashable {
        /// `warning` or `error`.
        public var severity: String
        public var path: String
        public var message: String
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
        plugins = registry.plugins.map(\.info)
        problems = registry.problems.map {
            Problem(severity: $0.severity.rawValue, path: $0.error.path, message: $0.error.reasonText)
        }
    }

    /// The plugin with this id (or its last part, e.g. `tone`).
    public func plugin(id: String) -> PluginInfo? {
        registry.plugin(id: id)?.info
    }

    /// Whether `text` names a plugin instance: `ID` or `ID:key=value,...`.
    public static func isSpec(_ text: String) -> Bool {
        PluginSpec(parsing: text) != nil
    }

    /// Why `id` is not in the catalog, for people.
    public static func unknownPluginMessage(_ id: String) -> String {
        PluginError(path: id, reason: .unknownPlugin(id)).reasonText
    }

    /// Validates the plugin file at `path` in a child of the plugin host program.
    public static func check(path: String, config: String) throws(NapSetupError) -> [PluginCheckFinding] {
        do {
            return try PluginValidation.run(path: path, config: config)
        } catch {
            throw NapSetupError(.internalError, [error.reasonText])
        }
    }

    /// The registry for the standard search path.
    static func scan(logger: Logger) -> PluginRegistry {
        let path = PluginSearchPath.standard(environment: ProcessInfo.processInfo.environment,
                                             executablePath: PluginSearchPath.currentExecutable())
        return PluginDiscovery(searchPath: path, logger: logger).scan()
    }
}

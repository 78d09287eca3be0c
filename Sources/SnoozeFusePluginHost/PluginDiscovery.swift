public import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where plugins are looked for, in order (the first plugin found with an id wins):
///
/// 1. each folder of `SNOOZEFUSE_PLUGIN_PATH` (colon-separated),
/// 2. `$XDG_DATA_HOME/snoozefuse/plugins` (default `~/.local/share/snoozefuse/plugins`),
/// 3. `PREFIX/lib/snoozefuse/plugins`, where the executable is `PREFIX/bin/snoozefuse`,
/// 4. the executable's own folder when it is a build folder of a checkout (it holds
///    `libsnoozefuse-*.so` next to the binary): only those files are considered there.
public struct PluginSearchPath: Sendable, Hashable {
    public enum Origin: String, Sendable, Hashable, Codable {
        case environment = "SNOOZEFUSE_PLUGIN_PATH"
        case userData = "XDG_DATA_HOME"
        case installPrefix = "PREFIX"
        case buildFolder = "build folder"
    }

    public var folder: String
    public var origin: Origin
    /// Only file names starting with this are considered (the build folder holds other libraries).
    public var namePrefix: String

    public init(folder: String, origin: Origin, namePrefix: String = "") {
        self.folder = folder
        self.origin = origin
        self.namePrefix = namePrefix
    }

    /// The search path for `environment` and the running executable's path.
    public static func standard(environment: [String: String], executablePath: String?) -> [PluginSearchPath] {
        var paths: [PluginSearchPath] = []
        if let list = environment["SNOOZEFUSE_PLUGIN_PATH"] {
            for folder in list.split(separator: ":") where !folder.isEmpty {
                paths.append(PluginSearchPath(folder: String(folder), origin: .environment))
            }
        }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            paths.append(PluginSearchPath(folder: data + "/snoozefuse/plugins", origin: .userData))
        } else if let home = environment["HOME"], !home.isEmpty {
            paths.append(PluginSearchPath(folder: home + "/.local/share/snoozefuse/plugins", origin: .userData))
        }
        if let executablePath {
            let binFolder = parent(of: executablePath)
            if lastComponent(of: binFolder) == "bin" {
                paths.append(PluginSearchPath(folder: parent(of: binFolder) + "/lib/snoozefuse/plugins", origin: .installPrefix))
            } else {
                paths.append(PluginSearchPath(folder: binFolder, origin: .buildFolder, namePrefix: "libsnoozefuse-"))
            }
        }
        return paths
    }

    /// The running program's path (`/proc/self/exe`).
    public static func currentExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0 ..< count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func lastComponent(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// A note from a scan: a refused or skipped file, with its error.
public struct PluginProblem: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Codable {
        case warning, error
    }

    public var severity: Severity
    public var error: PluginError

    public var description: String { "\(severity): \(error)" }
}

/// Safety of plugin files: neither the file nor the folder holding it may be writable by group or
/// others, and the file must be a regular file (symbolic links are followed and the target checked).
public enum PluginPermissions {
    /// Throws `writableByOthers` when `path` (resolved) or its folder is group/other-writable.
    public static func check(path: String) throws(PluginError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw PluginError(path: path, reason: .unreadable(String(cString: strerror(errno))))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PluginError(path: path, reason: .unreadable("not a regular file"))
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            throw PluginError(path: path, reason: .writableByOthers(path: path, mode: info.st_mode))
        }
        let resolved = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        try checkFolder(PluginSearchPath.parent(of: resolved), reportedAs: path)
    }

    /// Throws when `folder` is writable by group or others (sticky folders such as /tmp included:
    /// anyone may add a file there).
    public static func checkFolder(_ folder: String, reportedAs path: String) throws(PluginError) {
        var info = stat()
        guard stat(folder, &info) == 0 else {
            throw PluginError(path: path, reason: .unreadable("folder \(folder): \(String(cString: strerror(errno)))"))
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            throw PluginError(path: path, reason: .writableByOthers(path: folder, mode: info.st_mode))
        }
    }
}

/// Finds and loads plugins.
public struct PluginDiscovery: Sendable {
    public var searchPath: [PluginSearchPath]
    public var logger: Logger

    public init(searchPath: [PluginSearchPath], logger: Logger) {
        self.searchPath = searchPath
        self.logger = logger
    }

    /// The `*.so` files of `path`'s folder, sorted by name (empty when the folder does not exist).
    public static func candidates(in path: PluginSearchPath) -> [String] {
        guard let directory = opendir(path.folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            guard name.hasSuffix(".so"), name.hasPrefix(path.namePrefix), !name.hasPrefix(".") else { continue }
            names.append(name)
        }
        return names.sorted().map { path.folder.hasSuffix("/") ? path.folder + $0 : path.folder + "/" + $0 }
    }

    /// Scans every folder and loads every plugin; bad ones become `problems` and are skipped.
    public func scan() -> PluginRegistry {
        var registry = PluginRegistry()
        for path in searchPath {
            let files = Self.candidates(in: path)
            guard !files.isEmpty else { continue }
            do {
                try PluginPermissions.checkFolder(path.folder, reportedAs: path.folder)
            } catch {
                registry.report(.error, error, logger: logger)
                continue
            }
            for file in files {
                registry.load(path: file, logger: logger)
            }
        }
        return registry
    }
}

/// The plugins found, in search order, and the problems met. A value: build one per scan (no
/// global registry); tests make their own.
public struct PluginRegistry: Sendable {
    public private(set) var plugins: [LoadedPlugin] = []
    public private(set) var problems: [PluginProblem] = []

    public init() {}

    /// The plugin with exactly this id, or else the only one whose id ends in `.id` (so `tone`
    /// finds `org.snoozefuse.tone`).
    public func plugin(id: String) -> LoadedPlugin? {
        if let exact = plugins.first(where: { $0.info.id == id }) { return exact }
        guard !id.contains(".") else { return nil }
        let matches = plugins.filter { $0.info.id.hasSuffix("." + id) }
        return matches.count == 1 ? matches[0] : nil
    }

    /// The plugin with `id`, or `unknownPlugin`.
    public func require(id: String) throws(PluginError) -> LoadedPlugin {
        guard let plugin = plugin(id: id) else { throw PluginError(path: id, reason: .unknownPlugin(id)) }
        return plugin
    }

    /// Checks permissions, loads `path` and adds it unless its id is taken (first wins; warned).
    public mutating func load(path: String, logger: Logger) {
        do {
            try PluginPermissions.check(path: path)
            let plugin = try PluginLoader.load(path: path, logger: logger)
            try add(plugin)
        } catch {
            report(error.reason.isDuplicate ? .warning : .error, error, logger: logger)
        }
    }

    /// Adds a loaded plugin. - Throws: `duplicateID` when the id is taken.
    public mutating func add(_ plugin: LoadedPlugin) throws(PluginError) {
        if let first = plugins.first(where: { $0.info.id == plugin.info.id }) {
            throw PluginError(path: plugin.info.path, reason: .duplicateID(id: plugin.info.id, firstPath: first.info.path))
        }
        plugins.append(plugin)
    }

    mutating func report(_ severity: PluginProblem.Severity, _ error: PluginError, logger: Logger) {
        problems.append(PluginProblem(severity: severity, error: error))
        switch severity {
        case .warning: logger.warning("plugin \(error)")
        case .error: logger.error("plugin \(error)")
        }
    }
}

extension PluginError.Reason {
    var isDuplicate: Bool {
        if case .duplicateID = self { return true }
        return false
    }
}

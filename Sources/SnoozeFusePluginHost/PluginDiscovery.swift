public import Logging
import SnoozeFuseSystem
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

    static func parent(of path: String) -> String { CompanionProgram.parent(of: path) }

    static func lastComponent(of path: String) -> String { CompanionProgram.lastComponent(of: path) }
}

/// A note from a scan: a refused or skipped file, with its error.
public struct PluginProblem: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Codable {
        case warning, error
    }

    public var severity: Severity
    public var error: PluginError
    /// The id the file claims, when the scan got that far.
    public var id: String?
    /// The scan cache this verdict was kept in (an earlier scan found it; the file has not changed
    /// since); nil when this scan found it.
    public var cachedIn: String?

    public init(severity: Severity, error: PluginError, id: String? = nil, cachedIn: String? = nil) {
        self.severity = severity
        self.error = error
        self.id = id
        self.cachedIn = cachedIn
    }

    public var description: String { "\(severity): \(error)\(cacheNote)" }

    /// Where the verdict came from, when an earlier scan found it: said after the reason.
    public var cacheNote: String {
        cachedIn.map { " (as an earlier scan found it, kept in \($0) until the file changes)" } ?? ""
    }
}

/// Safety of plugin files, as sudo and ssh judge theirs: the file is a regular file (links are
/// followed), and it and every folder up to `/` pass ``TrustedPlaces`` (the rule hooks are judged
/// by too), said as plugin errors.
public enum PluginPermissions {
    /// Throws `unreadable`, `writableByOthers` or `ownedByOtherUser`, naming the file or folder.
    public static func check(path: String, user: UInt32? = nil) throws(PluginError) {
        let user = user ?? geteuid()
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw PluginError(path: path, reason: .unreadable(String(cString: strerror(errno))))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PluginError(path: path, reason: .unreadable("not a regular file"))
        }
        try judge(info, at: path, reportedAs: path, user: user, stickyAllowed: false)
        let resolved = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        if let (folder, problem) = TrustedPlaces.firstProblem(inFoldersAbove: resolved, user: user) {
            throw error(problem, at: folder, reportedAs: path, user: user)
        }
    }

    /// Throws when `folder` (a folder plugins are looked for in) is writable by group or others,
    /// sticky ones such as /tmp included (anyone may add a file there), or belongs to another user.
    public static func checkFolder(_ folder: String, reportedAs path: String, user: UInt32? = nil) throws(PluginError) {
        let user = user ?? geteuid()
        var info = stat()
        guard stat(folder, &info) == 0 else {
            throw PluginError(path: path, reason: .unreadable("folder \(folder): \(String(cString: strerror(errno)))"))
        }
        try judge(info, at: folder, reportedAs: path, user: user, stickyAllowed: false)
    }

    private static func judge(_ info: stat, at place: String, reportedAs path: String, user: UInt32,
                              stickyAllowed: Bool) throws(PluginError) {
        if let problem = TrustedPlaces.problem(owner: info.st_uid, mode: info.st_mode, user: user, stickyAllowed: stickyAllowed) {
            throw error(problem, at: place, reportedAs: path, user: user)
        }
    }

    private static func error(_ problem: TrustedPlaces.Problem, at place: String, reportedAs path: String, user: UInt32) -> PluginError {
        switch problem {
        case .ownedBy(let owner): PluginError(path: path, reason: .ownedByOtherUser(path: place, owner: owner, user: user))
        case .writableByOthers(let mode): PluginError(path: path, reason: .writableByOthers(path: place, mode: mode))
        case .unexaminable(let reason): PluginError(path: path, reason: .unreadable("folder \(place): \(reason)"))
        }
    }
}

/// One plugin file found on the search path, and where.
public struct PluginFile: Sendable, Hashable {
    public var path: String
    public var origin: PluginSearchPath.Origin

    public init(path: String, origin: PluginSearchPath.Origin) {
        self.path = path
        self.origin = origin
    }

    /// Whether the file was installed with snoozefuse (its plugins folder, or the build folder).
    public var isInstalledWithProgram: Bool { origin == .installPrefix || origin == .buildFolder }
}

/// What loading one file in the scanner told: the plugin's descriptor, or why it was refused.
public enum PluginScanVerdict: Sendable, Hashable, Codable {
    case plugin(PluginInfo)
    case refused(PluginError)

    /// Whether the scan cache may keep this verdict for as long as the file is unchanged: not a
    /// refusal whose cause may lie outside the file, which can go away while the file stays as it
    /// is (a library it needs installed, a folder made readable, a busy machine): `dlopen`'s
    /// failures (the libraries the file needs), a file that could not be examined, a load that
    /// ran out of time or ended (a loaded machine, the OOM killer), a scanner that ended without
    /// an answer. A plugin and what its descriptor is refused for are kept.
    public var isKeptInTheCache: Bool {
        guard case .refused(let error) = self else { return true }
        switch error.reason {
        case .openFailed, .unreadable, .processEnded, .hungWhileLoading, .endedWhileLoading: return false
        default: return true
        }
    }
}

/// Finds plugins without loading any into this process: the files of every folder of the search
/// path are checked here (permissions and owners, with `stat` only), then loaded and described in
/// a child of the plugin host program (``PluginScanner``), each with a time limit, and the results
/// are kept in a cache (``PluginScanCache``) so that the next scan loads only what changed.
public struct PluginDiscovery: Sendable {
    public var searchPath: [PluginSearchPath]
    /// The plugin host program (`snoozefuse-plugin-host`); nil when it is not installed: every
    /// file is then refused, saying so.
    public var host: String?
    /// Where scan results are kept between runs; nil for none.
    public var cache: PluginScanCache?
    public var logger: Logger
    /// How long one file may take to load (constructors, entry function, descriptor).
    public var loadLimit: Duration = PluginScanner.loadLimit

    public init(searchPath: [PluginSearchPath], host: String?, cache: PluginScanCache?, logger: Logger) {
        self.searchPath = searchPath
        self.host = host
        self.cache = cache
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

    /// Scans every folder: files that fail the checks here or in the scanner become problems; the
    /// rest become the registry's plugins (see ``PluginRegistry/init(scanned:folderProblems:logger:)``).
    public func scan() -> PluginRegistry {
        var folderProblems: [PluginProblem] = []
        var files: [(PluginFile, PluginError?)] = []
        for path in searchPath {
            let found = Self.candidates(in: path)
            guard !found.isEmpty else { continue }
            do {
                try PluginPermissions.checkFolder(path.folder, reportedAs: path.folder)
            } catch {
                folderProblems.append(PluginProblem(severity: .error, error: error))
                continue
            }
            for file in found {
                do {
                    try PluginPermissions.check(path: file)
                    files.append((PluginFile(path: file, origin: path.origin), nil))
                } catch {
                    files.append((PluginFile(path: file, origin: path.origin), error))
                }
            }
        }
        let loadable = files.filter { $0.1 == nil }.map(\.0.path)
        let (verdicts, fromCache) = describe(loadable)
        let scanned = files.map { file, refusal in
            (file, refusal.map(PluginScanVerdict.refused) ?? verdicts[file.path]
                ?? .refused(PluginError(path: file.path, reason: .processEnded("the scanner gave no answer for it"))))
        }
        return PluginRegistry(scanned: scanned, folderProblems: folderProblems, logger: logger,
                              cached: cache.map { cache in (fromCache, cache.file) })
    }

    /// The scanner's verdict on each file: from the cache when the file (and the host program) are
    /// unchanged, else from a scanner child; the cache is updated with what was learnt (not a
    /// refusal whose cause may lie outside the file: ``PluginScanVerdict/isKeptInTheCache``).
    /// Also says which paths the cache answered.
    func describe(_ paths: [String]) -> (verdicts: [String: PluginScanVerdict], fromCache: Set<String>) {
        guard !paths.isEmpty else { return ([:], []) }
        guard let host else {
            let missing = PluginHostProgram.missing(PluginSearchPath.currentExecutable())
            return (Dictionary(uniqueKeysWithValues: paths.map {
                ($0, .refused(PluginError(path: $0, reason: missing.reason)))
            }), [])
        }
        let hostIdentity = PluginScanCache.FileIdentity(path: host)
        var known = hostIdentity.flatMap { cache?.load(host: $0) } ?? [:]
        var verdicts: [String: PluginScanVerdict] = [:]
        var unknown: [String] = []
        var identities: [String: PluginScanCache.FileIdentity] = [:]
        for path in paths {
            let identity = PluginScanCache.FileIdentity(path: path)
            identities[path] = identity
            if let identity, let entry = known[path], entry.identity == identity, entry.verdict.isKeptInTheCache {
                verdicts[path] = entry.verdict
            } else {
                unknown.append(path)
            }
        }
        let fromCache = Set(verdicts.keys)
        guard !unknown.isEmpty else { return (verdicts, fromCache) }
        let scanned = PluginScanner(host: host, loadLimit: loadLimit).scan(unknown)
        for (path, verdict) in scanned {
            verdicts[path] = verdict
            if let identity = identities[path], verdict.isKeptInTheCache {
                known[path] = PluginScanCache.Entry(identity: identity, verdict: verdict)
            } else {
                known[path] = nil
            }
        }
        if let cache, let hostIdentity {
            do {
                try cache.save(known, host: hostIdentity)
            } catch {
                logger.debug("\(error)")
            }
        }
        return (verdicts, fromCache)
    }
}

/// The plugins found, in search order, and the problems met. A value: build one per scan (no
/// global registry); tests make their own.
public struct PluginRegistry: Sendable {
    public private(set) var plugins: [PluginInfo] = []
    public private(set) var problems: [PluginProblem] = []

    public init() {}

    /// The registry of files scanned in search order: refused files and folders are errors; a
    /// plugin outside the install folder whose id has the reserved prefix (``PluginInfo/reservedPrefix``)
    /// is refused; a plugin whose id an earlier one took is skipped with a warning (the first one
    /// found wins). Each problem is also logged (`warning` or `error`).
    /// `cached`: the files whose verdict came from the scan cache, and that cache's file.
    public init(scanned: [(PluginFile, PluginScanVerdict)], folderProblems: [PluginProblem] = [], logger: Logger? = nil,
                cached: (paths: Set<String>, file: String)? = nil) {
        for problem in folderProblems { report(problem, logger: logger) }
        for (file, verdict) in scanned {
            switch verdict {
            case .refused(let error):
                let cachedIn = cached.flatMap { $0.paths.contains(file.path) ? $0.file : nil }
                report(PluginProblem(severity: .error, error: error, cachedIn: cachedIn), logger: logger)
            case .plugin(let info):
                if info.usesReservedPrefix && !file.isInstalledWithProgram {
                    report(PluginProblem(severity: .error, error: PluginError(path: info.path, reason: .reservedID(info.id)), id: info.id),
                           logger: logger)
                } else if let first = plugins.first(where: { $0.id == info.id }) {
                    report(PluginProblem(severity: .warning, error: PluginError(path: info.path, reason: .duplicateID(id: info.id, firstPath: first.path)),
                                         id: info.id), logger: logger)
                } else {
                    plugins.append(info)
                }
            }
        }
    }

    /// The plugin with exactly this id, or else the only one whose id ends in `.id` (so `tone`
    /// finds `org.snoozefuse.tone`).
    public func plugin(id: String) -> PluginInfo? {
        if let exact = plugins.first(where: { $0.id == id }) { return exact }
        guard !id.contains(".") else { return nil }
        let matches = plugins.filter { $0.id.hasSuffix("." + id) }
        return matches.count == 1 ? matches[0] : nil
    }

    /// The plugin with `id`, or `unknownPlugin`.
    public func require(id: String) throws(PluginError) -> PluginInfo {
        guard let plugin = plugin(id: id) else { throw PluginError(path: id, reason: .unknownPlugin(id)) }
        return plugin
    }

    /// The problems about files that claim `id`: impostors refused for the reserved prefix and
    /// files skipped because another plugin has the id.
    public func problems(claiming id: String) -> [PluginProblem] {
        problems.filter { $0.id == id }
    }

    private mutating func report(_ problem: PluginProblem, logger: Logger?) {
        problems.append(problem)
        switch problem.severity {
        case .warning: logger?.warning("plugin \(problem.error)\(problem.cacheNote)")
        case .error: logger?.error("plugin \(problem.error)\(problem.cacheNote)")
        }
    }
}

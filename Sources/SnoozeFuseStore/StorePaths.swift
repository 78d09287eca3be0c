public import Foundation
import Glibc

/// Where snoozefuse keeps its files (SPEC §4, XDG base directories):
///
/// - config: `$XDG_CONFIG_HOME/snoozefuse/` (default `~/.config/snoozefuse/`)
/// - data: `$XDG_DATA_HOME/snoozefuse/` (default `~/.local/share/snoozefuse/`): the imported
///   sounds (`sounds/`) and the database (`library.sqlite`: the sound index, presets, settings and
///   the history of naps)
/// - state: `$XDG_STATE_HOME/snoozefuse/` (default `~/.local/state/snoozefuse/`)
///
/// An XDG variable that is empty or not an absolute path is ignored, as the XDG specification says.
/// Folders are created on first use with mode 0700 and files that hold user state with mode 0600.
public struct StorePaths: Sendable, Hashable {
    /// The folders as file-system paths. The short commands (`status`, `stop`, `add`…) use these:
    /// a `URL`'s first `path` or append builds a set whose first use scans every protocol
    /// conformance record of the binary (issue 23). The `URL`s below are made from them.
    public let configPath: String
    public let dataPath: String
    public let statePath: String

    public var config: URL { URL(fileURLWithPath: configPath, isDirectory: true) }
    public var data: URL { URL(fileURLWithPath: dataPath, isDirectory: true) }
    public var state: URL { URL(fileURLWithPath: statePath, isDirectory: true) }

    public init(config: URL, data: URL, state: URL) {
        configPath = config.path
        dataPath = data.path
        statePath = state.path
    }

    /// The variables the paths are found by: ``init(environment:)``'s and
    /// ``controlSocketPath(environment:)``'s.
    public static let environmentVariables = ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"]

    /// The paths for `environment` (normally the process environment).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) {
        func base(_ variable: String, _ fallback: String) throws(StoreError) -> String {
            if let value = environment[variable], value.hasPrefix("/") {
                return value
            }
            guard let home = environment["HOME"], home.hasPrefix("/") else {
                throw StoreError(.badConfiguration, subject: variable,
                                 message: "neither \(variable) nor HOME is set to an absolute path; set one of them")
            }
            return Self.path(home, fallback)
        }
        configPath = Self.path(try base("XDG_CONFIG_HOME", ".config"), "snoozefuse")
        dataPath = Self.path(try base("XDG_DATA_HOME", ".local/share"), "snoozefuse")
        statePath = Self.path(try base("XDG_STATE_HOME", ".local/state"), "snoozefuse")
    }

    /// `name` in the folder `folder` (an absolute path; trailing slashes do not double).
    public static func path(_ folder: String, _ name: String) -> String {
        var folder = folder
        while folder.utf8.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        // Strings only: `Substring + String` runs unspecialised and its first use scans every
        // conformance record (issue 23).
        return folder == "/" ? "/" + name : folder + "/" + name
    }

    /// The imported sounds.
    public var soundsFolder: URL { data.appendingPathComponent("sounds", isDirectory: true) }
    /// The SQLite database: the index of the imported sounds, presets, settings, nap history.
    public var database: URL { URL(fileURLWithPath: databasePath) }
    public var databasePath: String { Self.path(dataPath, "library.sqlite") }
}

/// File-system helpers shared by the store's types.
enum PrivateFiles {
    /// Creates `folder` and any missing parents, each with mode 0700. A folder that exists already
    /// keeps its mode, whatever it is (the user may have chosen it): it is only checked, and one this
    /// process cannot write into is reported (`EACCES`/`EROFS`) with the folder's name and the fix.
    static func ensureFolder(_ folder: URL) throws(StoreError) {
        var missing: [String] = []
        var current = folder.standardizedFileURL
        while current.path != "/" && !exists(current.path) {
            missing.append(current.path)
            current.deleteLastPathComponent()
        }
        for component in missing.reversed() {
            if mkdir(component, 0o700) != 0 {
                if errno == EEXIST { continue }
                throw fileError(errno, component, "cannot create the folder; check the permissions of its parent")
            }
            // mkdir applies the umask; a folder created here is private whatever the umask says.
            if chmod(component, 0o700) != 0 {
                throw fileError(errno, component, "cannot make the new folder private (mode 0700)")
            }
        }
        try checkWritableFolder(folder.path)
    }

    /// Throws unless `path` is a folder this process can create and delete files in.
    static func checkWritableFolder(_ path: String) throws(StoreError) {
        var status = stat()
        if stat(path, &status) != 0 { throw fileError(errno, path, "cannot use the folder") }
        guard (status.st_mode & S_IFMT) == S_IFDIR else {
            throw StoreError(.fileSystem(errno: ENOTDIR), subject: path,
                             message: "this is not a folder; snoozefuse keeps its sounds and database in a folder here. Move the file away")
        }
        if faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) != 0 {
            let code = errno
            let mode = String(status.st_mode & 0o777, radix: 8)
            let fix = code == EROFS ? "the file system is mounted read-only; remount it read-write"
                : "make it writable for your user: chmod u+wx '\(path)'"
            throw StoreError(.fileSystem(errno: code), subject: path,
                             message: "the folder is read-only (mode \(mode), \(errnoName(code)): \(reason(code))); snoozefuse cannot store or change anything there (sounds, presets, settings, nap history) and leaves it as it is (what is in it is kept). To fix: \(fix)")
        }
    }

    /// Creates `file` empty with mode 0600 if it does not exist. An existing file keeps its mode; one
    /// that cannot be opened for writing is reported with the real cause (a read-only file or file
    /// system, a missing permission).
    static func ensurePrivateFile(_ file: URL, what: String) throws(StoreError) {
        let path = file.path
        var fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 && errno == ENOENT {
            fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
            if fd >= 0, fchmod(fd, 0o600) != 0 {
                let code = errno
                close(fd)
                throw fileError(code, path, "cannot make the new \(what) private (mode 0600)")
            }
            if fd < 0 && errno != EEXIST { throw fileError(errno, path, "cannot create the \(what)") }
            if fd < 0 { fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }
        }
        if fd < 0 {
            let code = errno
            switch code {
            case EACCES, EPERM, EROFS:
                let fix = code == EROFS ? "the file system is mounted read-only; remount it read-write"
                    : "make it writable for your user: chmod u+w '\(path)'"
                throw StoreError(.fileSystem(errno: code), subject: path,
                                 message: "the \(what) is read-only (\(errnoName(code)): \(reason(code))); snoozefuse needs to write it to change your sounds, presets, settings or nap history, and leaves it as it is (what it holds is kept). To fix: \(fix)")
            default:
                throw fileError(code, path, "cannot open the \(what) for writing")
            }
        }
        close(fd)
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// The folder of `path` (`.` for a bare name).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func fileError(_ code: Int32, _ path: String, _ what: String) -> StoreError {
        StoreError(.fileSystem(errno: code), subject: path, message: "\(what) (\(errnoName(code)): \(reason(code)))")
    }

    static func reason(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }

    /// The C constant's name for the common codes (`EACCES`), else `errno N`.
    static func errnoName(_ code: Int32) -> String {
        let names: [Int32: String] = [
            EACCES: "EACCES", EPERM: "EPERM", EROFS: "EROFS", ENOENT: "ENOENT", ENOSPC: "ENOSPC", EEXIST: "EEXIST",
            ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EIO: "EIO", EDQUOT: "EDQUOT", ELOOP: "ELOOP", EBUSY: "EBUSY",
            EWOULDBLOCK: "EWOULDBLOCK", EINTR: "EINTR", EXDEV: "EXDEV", ENAMETOOLONG: "ENAMETOOLONG",
        ]
        return names[code] ?? "errno \(code)"
    }

    /// The names in the folder at `path`, `.` and `..` left out, in the order the folder gives
    /// them; nil when it cannot be opened (its errno in `failure`).
    static func entryNames(inFolder path: String, failure: inout Int32) -> [String]? {
        guard let directory = opendir(path) else {
            failure = errno
            return nil
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}

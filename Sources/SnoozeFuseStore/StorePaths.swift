public import Foundation
import Glibc

/// Where snoozefuse keeps its files (SPEC §4, XDG base directories):
///
/// - config: `$XDG_CONFIG_HOME/snoozefuse/` (default `~/.config/snoozefuse/`)
/// - data: `$XDG_DATA_HOME/snoozefuse/` (default `~/.local/share/snoozefuse/`): the imported
///   sounds (`sounds/`) and their index (`library.sqlite`)
/// - state: `$XDG_STATE_HOME/snoozefuse/` (default `~/.local/state/snoozefuse/`)
///
/// An XDG variable that is empty or not an absolute path is ignored, as the XDG specification says.
/// Folders are created on first use with mode 0700 and files that hold user state with mode 0600.
public struct StorePaths: Sendable, Hashable {
    public var config: URL
    public var data: URL
    public var state: URL

    public init(config: URL, data: URL, state: URL) {
        self.config = config
        self.data = data
        self.state = state
    }

    /// The paths for `environment` (normally the process environment).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) {
        func base(_ variable: String, _ fallback: String) throws(StoreError) -> URL {
            if let value = environment[variable], value.hasPrefix("/") {
                return URL(fileURLWithPath: value, isDirectory: true)
            }
            guard let home = environment["HOME"], home.hasPrefix("/") else {
                throw StoreError(.badConfiguration, subject: variable,
                                 message: "neither \(variable) nor HOME is set to an absolute path; set one of them")
            }
            return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(fallback, isDirectory: true)
        }
        config = try base("XDG_CONFIG_HOME", ".config").appendingPathComponent("snoozefuse", isDirectory: true)
        data = try base("XDG_DATA_HOME", ".local/share").appendingPathComponent("snoozefuse", isDirectory: true)
        state = try base("XDG_STATE_HOME", ".local/state").appendingPathComponent("snoozefuse", isDirectory: true)
    }

    /// The imported sounds.
    public var soundsFolder: URL { data.appendingPathComponent("sounds", isDirectory: true) }
    /// The SQLite index of the imported sounds.
    public var database: URL { data.appendingPathComponent("library.sqlite") }
}

/// File-system helpers shared by the store's types.
enum PrivateFiles {
    /// Creates `folder` and any missing parents with mode 0700; an existing `folder` itself is set to
    /// 0700 (parents that already exist are left alone: they may be shared, like `~/.local/share`).
    static func ensureFolder(_ folder: URL) throws(StoreError) {
        let path = folder.path
        var components: [String] = []
        var current = folder.standardizedFileURL
        while current.path != "/" && !FileManager.default.fileExists(atPath: current.path) {
            components.append(current.path)
            current.deleteLastPathComponent()
        }
        for component in components.reversed() where mkdir(component, 0o700) != 0 && errno != EEXIST {
            throw fileError(errno, component, "cannot create the folder; check the permissions of its parent")
        }
        if chmod(path, 0o700) != 0 {
            throw fileError(errno, path, "cannot make the folder private (mode 0700)")
        }
    }

    /// Creates `file` empty with mode 0600 if it does not exist, and sets an existing one to 0600.
    static func ensurePrivateFile(_ file: URL) throws(StoreError) {
        let fd = open(file.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 { throw fileError(errno, file.path, "cannot create the file") }
        defer { close(fd) }
        if fchmod(fd, 0o600) != 0 { throw fileError(errno, file.path, "cannot make the file private (mode 0600)") }
    }

    static func fileError(_ code: Int32, _ path: String, _ what: String) -> StoreError {
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return StoreError(.fileSystem(errno: code), subject: path, message: "\(what) (\(reason))")
    }
}

import Glibc

/// A log file that programs the nap starts write into (`hooks.log`, `plugins.log` in the state
/// folder): appended to, never read back by the nap, and never growing without end. A log past
/// its rotation size is moved to `NAME.1` (replacing the one before) when it is opened.
public struct AppendOnlyLog: Sendable, Hashable {
    public let path: String
    /// The size past which the log is moved aside when it is next opened.
    public let rotationSize: Int

    public init(path: String, rotationSize: Int = 1024 * 1024) {
        self.path = path
        self.rotationSize = rotationSize
    }

    /// Opens the log for appending (created 0600, its folder 0700 when missing), moving it aside
    /// first when it is past ``rotationSize``. Returns -1 when it cannot be opened: whoever writes
    /// to it goes on without a log.
    public func open() -> Int32 {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let folder = String(path[..<slash])
            if access(folder, F_OK) != 0 { _ = mkdir(folder, 0o700) }
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_size > rotationSize {
            _ = rename(path, path + ".1")
        }
        return Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    }

    /// Appends `text` and a newline to the log open at `descriptor`, in one write (lines of
    /// several writers do not mix); nothing when it is not open.
    public static func append(line text: String, to descriptor: Int32) {
        guard descriptor >= 0 else { return }
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

/// How much of one writer's output (a hook's run, a plugin's child) a log keeps: the first
/// `limit` bytes, the rest counted and dropped, so one writer cannot fill the disk.
public struct OutputAllowance: Sendable, Hashable {
    public let limit: Int
    public private(set) var kept = 0
    public private(set) var dropped = 0

    public init(limit: Int) {
        self.limit = limit
    }

    /// How many of `count` bytes arriving now may be kept; the rest are counted as dropped.
    public mutating func take(_ count: Int) -> Int {
        let keep = max(min(count, limit - kept), 0)
        kept += keep
        dropped += count - keep
        return keep
    }

    /// The line a log gets when something was dropped (nil when nothing was): `writer` wrote so
    /// many bytes more than the limit `each` (`a run`, `an instance`) keeps.
    public func droppedLine(_ writer: String, each: String) -> String? {
        guard dropped > 0 else { return nil }
        return "\(writer) wrote \(dropped) bytes more than the \(limit / 1024) KiB \(each) keeps in this log; they were dropped"
    }
}

import Glibc

/// Whether the file system that holds a file has room left for an ordinary user: what tells a full
/// disk apart from another I/O error when SQLite says only "disk I/O error".
enum DiskRoom {
    /// Less than this many bytes free for an unprivileged user counts as full: SQLite's smallest
    /// growth of a database's shared-memory file is 32 KiB.
    static let least = 64 * 1024

    /// Whether the file system of `path`'s folder has less than ``least`` bytes free (for a user
    /// without root's reserve). False when it cannot be asked.
    static func isFull(folderOf path: String) -> Bool {
        var info = statvfs()
        guard statvfs(PrivateFiles.folder(of: path), &info) == 0 else { return false }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize) < UInt64(least)
    }
}

import Glibc

/// Whether a file the program runs or loads (a hook, a plugin) can be trusted, as sudo and ssh
/// judge theirs: neither it nor any folder from it up to `/` may belong to anyone but this user or
/// root, or be writable by group or others. One exception: a sticky folder above the file's own
/// (`/tmp`), where others may add files but not rename or remove ours. Each caller words the
/// problem in its own errors.
public enum TrustedPlaces {
    /// What is wrong with one place.
    public enum Problem: Sendable, Hashable {
        /// It belongs to `owner`, neither this user nor root.
        case ownedBy(owner: UInt32)
        /// Group or others may write it (its `mode`).
        case writableByOthers(mode: UInt32)
        /// It cannot be examined (`stat` failed: `errno`'s words).
        case unexaminable(String)
    }

    /// What is wrong with a place that `owner` owns with `mode` (`stat`'s `st_uid`, `st_mode`), for
    /// `user`; `stickyAllowed` accepts a sticky folder that others may write.
    public static func problem(owner: UInt32, mode: UInt32, user: UInt32, stickyAllowed: Bool) -> Problem? {
        if owner != user && owner != 0 { return .ownedBy(owner: owner) }
        if mode & (S_IWGRP | S_IWOTH) != 0 && !(stickyAllowed && mode & S_ISVTX != 0) {
            return .writableByOthers(mode: mode)
        }
        return nil
    }

    /// The first folder from `file`'s own (the file resolved: links followed) up to `/` that is
    /// not to be trusted, and what is wrong with it; nil when every one is. The file's own folder
    /// may not be a shared sticky one; the folders above it may.
    public static func firstProblem(inFoldersAbove file: String, user: UInt32) -> (folder: String, problem: Problem)? {
        var folder = parent(of: file)
        var own = true
        while true {
            var info = stat()
            guard stat(folder, &info) == 0 else { return (folder, .unexaminable(String(cString: strerror(errno)))) }
            if let problem = problem(owner: info.st_uid, mode: info.st_mode, user: user, stickyAllowed: !own) { return (folder, problem) }
            guard folder != "/", folder.hasPrefix("/") else { return nil }
            folder = parent(of: folder)
            own = false
        }
    }

    /// `/a/b` → `/a`, `/a` → `/`.
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

import CLinux
import Glibc

/// Room kept on disk for one small file that must stay writable when its file system is full (the
/// nap's live state, SPEC §9). A spare file beside it holds real blocks, written with spaces. When
/// no new block can be had, the new contents go into the spare in place, padded with spaces to the
/// size it already has, and the spare trades names with the file in one step (`renameat2` with
/// RENAME_EXCHANGE): the file has its new contents whole, and the spare now holds the old ones,
/// ready for the next time. Nothing is allocated on the way on file systems that write in place
/// (ext4, XFS, tmpfs); a copy-on-write one (Btrfs) may still refuse.
///
/// Only for contents whose readers skip trailing white space (JSON).
public struct DiskReserve: Sendable, Hashable {
    /// The spare file.
    public let spare: String
    /// What ``ensure()`` keeps in the spare.
    public let size: Int

    public init(spare: String, size: Int = 16 * 1024) {
        self.spare = spare
        self.size = size
    }

    /// What failed, where, and the system's reason.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public let path: String
        public let what: String
        public let code: Int32

        public var description: String {
            "\(what) \(path): \(String(cString: strerror(code)))"
        }
    }

    /// Whether `code` says the file system (or the user's quota) has no room.
    public static func isNoRoom(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT
    }

    /// Makes sure the spare holds at least ``size`` bytes of real blocks: a missing or smaller one
    /// is made again (written beside it, flushed, renamed into place). Call it while there is room.
    public func ensure() throws(Failure) {
        var info = stat()
        if lstat(spare, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) >= size { return }
        let temporary = spare + ".\(getpid()).tmp"
        let fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Failure(path: temporary, what: "cannot create", code: errno) }
        let spaces = [UInt8](repeating: 0x20, count: size - 1) + [0x0a]
        var code: Int32 = 0
        if !spaces.withUnsafeBytes({ writeAll($0, to: fd) }) || fsync(fd) != 0 { code = errno }
        close(fd)
        if code == 0, rename(temporary, spare) != 0 { code = errno }
        if code != 0 {
            unlink(temporary)
            throw Failure(path: spare, what: "cannot keep room in", code: code)
        }
    }

    /// Puts `bytes` in place of the file at `path` through the spare, without a new block: written
    /// into the spare (padded with spaces to its size), flushed, then traded for the file (renamed
    /// over it where the file system cannot trade; the spare is used up then). The file is whole
    /// before and after; on failure it is as it was.
    public func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        let fd = open(spare, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw Failure(path: spare, what: "no room was kept in", code: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw Failure(path: spare, what: "cannot read", code: code)
        }
        // What the spare holds without a new block: its size, or the blocks it has when more.
        let room = max(Int(info.st_size), Int(info.st_blocks) * 512)
        guard bytes.count <= room else {
            close(fd)
            throw Failure(path: spare, what: "\(bytes.count) bytes do not fit the \(room) kept in", code: ENOSPC)
        }
        var padded = bytes
        if room > bytes.count {
            padded += [UInt8](repeating: 0x20, count: room - bytes.count - 1) + [0x0a]
        }
        var code: Int32 = 0
        if !padded.withUnsafeBytes({ writeAll($0, at: 0, to: fd) }) || fsync(fd) != 0 { code = errno }
        close(fd)
        guard code == 0 else { throw Failure(path: spare, what: "cannot write", code: code) }
        if snoozefuse_exchange_names(spare, path) != 0 {
            // No file to trade with yet, or a file system that cannot trade: the spare is renamed.
            guard [ENOENT, EINVAL, ENOSYS].contains(errno) else { throw Failure(path: path, what: "cannot trade names with", code: errno) }
            guard rename(spare, path) == 0 else { throw Failure(path: path, what: "cannot rename the spare over", code: errno) }
        }
        let parent = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let folder = open(parent.isEmpty ? "/" : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}

/// Writes every byte of `bytes` at `offset` of `fileDescriptor` (`pwrite`), retrying partial
/// writes and EINTR; false on the first other error (`errno` says which).
func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int, to fileDescriptor: Int32) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var done = 0
    while done < bytes.count {
        let written = pwrite(fileDescriptor, base + done, bytes.count - done, off_t(offset + done))
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        done += written
    }
    return true
}

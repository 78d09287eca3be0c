public import Foundation
import Glibc

/// The folder of imported sound files, and the file protocol that keeps it consistent with the
/// index through crashes and `kill -9`:
///
/// 1. An import writes into a temporary file in this folder (`.import-<random>.tmp`, mode 0600),
///    created with `O_EXCL` and held under an exclusive `flock` for as long as its writer lives.
/// 2. With the folder's lock (`.lock`) held, the writer `fsync`s the file, renames it to its final
///    name, `fsync`s the folder, and only then adds the index row.
/// 3. Removal deletes the index row first, then the file.
///
/// So a crash leaves at most a temporary file nobody holds, or a stored file without a row (a crash
/// between rename and insert, or between delete and unlink). Only the first is ever deleted
/// (``removeDeadTemporaryFiles()``, with the folder's lock held); a temporary file whose writer is
/// still running is locked and left alone. A stored file the index does not list is never deleted:
/// it carries its own name and metadata, and the sound library adopts it back into the index.
public struct SoundsFolder: Sendable {
    public let url: URL

    static let temporaryPrefix = ".import-"
    static let temporarySuffix = ".tmp"
    static let lockName = ".lock"
    /// The extension of stored sound files.
    public static let storedExtension = "caf"

    /// How long ``withLock(_:)`` waits for another process to let go of the folder.
    public static let lockWait: Duration = .seconds(10)

    /// Uses (and creates, mode 0700) `url`; an existing folder must be writable.
    public init(url: URL) throws(StoreError) {
        self.url = url
        try PrivateFiles.ensureFolder(url)
    }

    /// Uses `url` as it is, for reading only: nothing is created or checked.
    public init(readingAt url: URL) {
        self.url = url
    }

    public func path(of storedFileName: String) -> String { url.appendingPathComponent(storedFileName).path }

    /// Whether the folder holds an entry called `storedFileName` (of any kind).
    public func contains(_ storedFileName: String) -> Bool { PrivateFiles.exists(path(of: storedFileName)) }

    /// Runs `body` holding the folder's exclusive lock, waiting at most ``lockWait`` for another
    /// process to let go (then ``StoreError/Kind/busy``).
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(StoreError) -> Result<R, E> {
        let lock = try openLock()
        defer { close(lock) }
        let deadline = ContinuousClock.now.advanced(by: Self.lockWait)
        while !(try tryLock(lock)) {
            guard ContinuousClock.now < deadline else {
                throw StoreError(.busy, subject: url.appendingPathComponent(Self.lockName).path,
                                 message: "another snoozefuse process has held the sounds folder's lock for more than \(Self.lockWait.components.seconds) s (an import still running?); nothing was changed. Try again when it is done")
            }
            usleep(20_000)
        }
        defer { flock(lock, LOCK_UN) }
        do throws(E) { return .success(try body()) } catch { return .failure(error) }
    }

    /// Runs `body` holding the folder's exclusive lock if no other process holds it; returns nil at
    /// once, without running `body`, if one does.
    public func withLockIfFree<R, E: Error>(_ body: () throws(E) -> R) throws(StoreError) -> Result<R, E>? {
        let lock = try openLock()
        defer { close(lock) }
        guard try tryLock(lock) else { return nil }
        defer { flock(lock, LOCK_UN) }
        do throws(E) { return .success(try body()) } catch { return .failure(error) }
    }

    private func openLock() throws(StoreError) -> Int32 {
        let lockPath = url.appendingPathComponent(Self.lockName).path
        let fd = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 { throw PrivateFiles.fileError(errno, lockPath, "cannot open the sounds folder's lock file") }
        return fd
    }

    /// `flock(LOCK_EX | LOCK_NB)`: true when taken, false when another process holds it.
    private func tryLock(_ fd: Int32) throws(StoreError) -> Bool {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw PrivateFiles.fileError(errno, url.appendingPathComponent(Self.lockName).path, "cannot lock the sounds folder")
        }
        return true
    }

    /// A new temporary file in this folder, locked for this process until it is committed or dropped.
    public func makeTemporaryFile() throws(StoreError) -> TemporaryStoreFile {
        for _ in 0..<16 {
            let name = Self.temporaryPrefix + UUID().uuidString.lowercased() + Self.temporarySuffix
            let path = url.appendingPathComponent(name).path
            let fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw PrivateFiles.fileError(errno, path, "cannot create a temporary file in the sounds folder; check its permissions and free space")
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                close(fd)
                unlink(path)
                throw PrivateFiles.fileError(code, path, "cannot lock the temporary file")
            }
            return TemporaryStoreFile(path: path, fileDescriptor: fd)
        }
        throw StoreError(.fileSystem(errno: EEXIST), subject: url.path, message: "cannot pick a free temporary file name")
    }

    /// Makes `file` durable under `storedFileName`: `fsync` the file, rename it, `fsync` the folder.
    /// Call with the folder's lock held. Refuses to replace an existing file.
    public func commit(_ file: TemporaryStoreFile, as storedFileName: String) throws(StoreError) {
        let target = path(of: storedFileName)
        if fsync(file.fileDescriptor) != 0 {
            throw PrivateFiles.fileError(errno, file.path, "cannot flush the imported sound to disk")
        }
        if access(target, F_OK) == 0 {
            throw StoreError(.fileSystem(errno: EEXIST), subject: target, message: "a stored sound file with this name exists already")
        }
        if rename(file.path, target) != 0 {
            throw PrivateFiles.fileError(errno, target, "cannot move the imported sound into place")
        }
        file.markCommitted()
        try syncFolder()
    }

    /// Deletes a stored file and flushes the folder; a file that is already gone is fine.
    public func removeFile(_ storedFileName: String) throws(StoreError) {
        let target = path(of: storedFileName)
        if unlink(target) != 0 && errno != ENOENT {
            throw PrivateFiles.fileError(errno, target, "cannot delete the stored sound file")
        }
        try syncFolder()
    }

    /// Replaces the stored file `storedFileName` with `file` (a new version of the same sound):
    /// `fsync` the file, rename it over the old one (atomic: a reader sees the old file or the new
    /// one, never a mixture), `fsync` the folder. Call with the folder's lock held.
    public func replace(_ storedFileName: String, with file: TemporaryStoreFile) throws(StoreError) {
        let target = path(of: storedFileName)
        if fsync(file.fileDescriptor) != 0 {
            throw PrivateFiles.fileError(errno, file.path, "cannot flush the new version of the sound file to disk")
        }
        if rename(file.path, target) != 0 {
            throw PrivateFiles.fileError(errno, target, "cannot move the new version of the sound file into place")
        }
        file.markCommitted()
        try syncFolder()
    }

    /// The stored sound files in the folder (`*.caf`, not hidden), sorted. Empty if the folder does
    /// not exist.
    public func storedFileNames() throws(StoreError) -> [String] {
        var failure: Int32 = 0
        guard let names = PrivateFiles.entryNames(inFolder: url.path, failure: &failure) else {
            if failure == ENOENT { return [] }
            throw PrivateFiles.fileError(failure, url.path, "cannot list the sounds folder")
        }
        return names.filter { !$0.hasPrefix(".") && $0.hasSuffix("." + Self.storedExtension) }.sorted()
    }

    /// Deletes the temporary files of imports whose writer is gone (nobody holds their lock), and
    /// nothing else. Call with the folder's lock held. Returns the names it deleted.
    @discardableResult
    public func removeDeadTemporaryFiles() throws(StoreError) -> [String] {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
        } catch {
            throw StoreError(.fileSystem(errno: EIO), subject: url.path, message: "cannot list the sounds folder: \(error)")
        }
        var removed: [String] = []
        for entry in entries where entry.hasPrefix(Self.temporaryPrefix) && entry.hasSuffix(Self.temporarySuffix) {
            let path = url.appendingPathComponent(entry).path
            // A live writer holds its lock; a dead one's lock went with its process.
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            var status = stat()
            let regular = fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
            let free = regular && flock(fd, LOCK_EX | LOCK_NB) == 0
            if free, unlink(path) == 0 { removed.append(entry) }
            close(fd)
        }
        if !removed.isEmpty { try syncFolder() }
        return removed
    }

    private func syncFolder() throws(StoreError) {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw PrivateFiles.fileError(errno, url.path, "cannot open the sounds folder") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw PrivateFiles.fileError(errno, url.path, "cannot flush the sounds folder to disk") }
    }
}

/// A temporary file in the sounds folder, exclusively locked while this value lives. Unless it was
/// committed, it is deleted when the value goes away.
public final class TemporaryStoreFile {
    public let path: String
    public let fileDescriptor: Int32
    private var committed = false

    init(path: String, fileDescriptor: Int32) {
        self.path = path
        self.fileDescriptor = fileDescriptor
    }

    func markCommitted() { committed = true }

    deinit {
        if !committed { unlink(path) }
        close(fileDescriptor)
    }
}

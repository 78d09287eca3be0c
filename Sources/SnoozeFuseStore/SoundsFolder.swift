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
/// So a crash leaves at most a temporary file nobody holds, or a final file without a row (a crash
/// between rename and insert, or between delete and unlink). ``removeStaleFiles(keeping:)``, run
/// with the folder's lock held when the library opens, deletes both; a temporary file whose writer
/// is still running is locked and left alone.
public struct SoundsFolder: Sendable {
    public let url: URL

    static let temporaryPrefix = ".import-"
    static let temporarySuffix = ".tmp"
    static let lockName = ".lock"

    /// Uses (and creates, mode 0700) `url`.
    public init(url: URL) throws(StoreError) {
        self.url = url
        try PrivateFiles.ensureFolder(url)
    }

    public func path(of storedFileName: String) -> String { url.appendingPathComponent(storedFileName).path }

    /// Runs `body` holding the folder's exclusive lock (blocking until other processes let go).
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(StoreError) -> Result<R, E> {
        let lockPath = url.appendingPathComponent(Self.lockName).path
        let fd = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 { throw PrivateFiles.fileError(errno, lockPath, "cannot open the sounds folder's lock file") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw PrivateFiles.fileError(errno, lockPath, "cannot lock the sounds folder") }
        }
        defer { flock(fd, LOCK_UN) }
        do throws(E) { return .success(try body()) } catch { return .failure(error) }
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

    /// Deletes temporary files left by dead imports and stored files the index does not list.
    /// Call with the folder's lock held. Returns the names it deleted.
    @discardableResult
    public func removeStaleFiles(keeping storedFileNames: Set<String>) throws(StoreError) -> [String] {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
        } catch {
            throw StoreError(.fileSystem(errno: EIO), subject: url.path, message: "cannot list the sounds folder: \(error)")
        }
        var removed: [String] = []
        for entry in entries where entry != Self.lockName && !storedFileNames.contains(entry) {
            let path = url.appendingPathComponent(entry).path
            if entry.hasPrefix(Self.temporaryPrefix) && entry.hasSuffix(Self.temporarySuffix) {
                // A live writer holds its lock; a dead one's lock went with its process.
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { continue }
                let free = flock(fd, LOCK_EX | LOCK_NB) == 0
                if free, unlink(path) == 0 { removed.append(entry) }
                close(fd)
            } else if entry.hasSuffix(".caf"), !entry.hasPrefix(".") {
                if unlink(path) == 0 { removed.append(entry) }
            }
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

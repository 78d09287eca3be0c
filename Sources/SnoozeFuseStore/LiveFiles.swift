public import Foundation
import Glibc

/// The files of a running nap (SPEC §9), in the state folder (`$XDG_STATE_HOME/snoozefuse/`, 0700):
/// its live state, rewritten atomically at every change; the lock only the nap that runs (or its
/// guardian) holds; and the events its guardian writes. The control socket goes in the runtime
/// folder (`$XDG_RUNTIME_DIR/snoozefuse/`, 0700).
extension StorePaths {
    /// The live state of the running nap (JSON, 0600).
    public var liveSession: URL { URL(fileURLWithPath: liveSessionPath) }
    public var liveSessionPath: String { Self.path(statePath, "session.json") }
    /// A copy of the last good live state, written after it: what a damaged `session.json` falls
    /// back to.
    public var liveSessionCopy: URL { URL(fileURLWithPath: liveSessionCopyPath) }
    public var liveSessionCopyPath: String { Self.path(statePath, "session.previous.json") }
    /// Room kept on disk for the live state (16 KiB of spaces, or the state before the last one
    /// written into it): where the live state is written when the disk is full. Kept between naps.
    public var liveSessionSpare: URL { URL(fileURLWithPath: liveSessionSparePath) }
    public var liveSessionSparePath: String { Self.path(statePath, "session.spare") }
    /// Held (`flock`) by the nap that runs, then by its guardian.
    public var napLock: URL { URL(fileURLWithPath: napLockPath) }
    public var napLockPath: String { Self.path(statePath, "nap.lock") }
    /// One JSON event per line from guardians that took a nap over.
    public var guardianLog: URL { state.appendingPathComponent("guardian.jsonl") }
    /// Held (a shared `flock`) by every guardian for its whole life: a guardian is alive while
    /// the kernel says so, reaped or not.
    public var guardianLock: URL { URL(fileURLWithPath: guardianLockPath) }
    public var guardianLockPath: String { Self.path(statePath, "guardian.lock") }
    /// Naps ended but not yet in the history (the database was busy or failed): one JSON file
    /// each, written before the database is tried and removed once the nap is in it.
    public var pendingHistory: URL { URL(fileURLWithPath: pendingHistoryPath, isDirectory: true) }
    public var pendingHistoryPath: String { Self.path(statePath, "history-pending") }

    /// The folder of the control socket: `$XDG_RUNTIME_DIR/snoozefuse/`, or the state folder where
    /// there is no runtime folder (a session without a login manager).
    public func runtimeFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        URL(fileURLWithPath: runtimeFolderPath(environment: environment), isDirectory: true)
    }

    public func runtimeFolderPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return Self.path(runtime, "snoozefuse")
        }
        return statePath
    }

    /// The control socket of the running nap.
    public func controlSocket(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        URL(fileURLWithPath: controlSocketPath(environment: environment))
    }

    public func controlSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        Self.path(runtimeFolderPath(environment: environment), "control.sock")
    }
}

/// Files replaced whole: a reader sees the old contents or the new, never a part.
public enum AtomicFile {
    /// Replaces `url` with `data`: written to a temporary file beside it (0600), flushed to disk,
    /// renamed over it, and the folder flushed. The folder is created (0700) when missing.
    public static func write(_ data: Data, to url: URL) throws(StoreError) {
        try write([UInt8](data), toPath: url.path)
    }

    /// Replaces the file at `path` with `bytes`, as ``write(_:to:)`` does. Plain strings, no
    /// `URL` or `Data`: a nap writes its live state at every change while its alarm rings, and
    /// every page of Foundation it runs then is mapped back into it (issue 23).
    public static func write(_ bytes: [UInt8], toPath path: String) throws(StoreError) {
        let folder = PrivateFiles.folder(of: path)
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        if PrivateFiles.exists(folder) {
            try PrivateFiles.checkWritableFolder(folder)
        } else {
            try PrivateFiles.ensureFolder(URL(fileURLWithPath: folder, isDirectory: true))
        }
        let temporary = "\(folder == "/" ? "" : folder)/.\(name).\(getpid()).tmp"
        let fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFiles.fileError(errno, temporary, "cannot create the file") }
        var failure: StoreError?
        let written = bytes.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        if !written { failure = PrivateFiles.fileError(errno, temporary, "cannot write the file") }
        if failure == nil, fsync(fd) != 0 { failure = PrivateFiles.fileError(errno, temporary, "cannot flush the file to disk") }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = PrivateFiles.fileError(errno, path, "cannot move the new file into place") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        syncFolder(path: folder)
    }

    /// The contents of `url`, or nil when it does not exist.
    public static func read(_ url: URL) throws(StoreError) -> Data? {
        try read(path: url.path)
    }

    /// The contents of the file at `path`, or nil when there is none.
    public static func read(path: String) throws(StoreError) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw PrivateFiles.fileError(errno, path, "cannot open the file")
        }
        defer { close(fd) }
        var failure: Int32 = 0
        guard let bytes = readAll(fd, failure: &failure) else { throw PrivateFiles.fileError(failure, path, "cannot read the file") }
        return Data(bytes)
    }

    /// The contents of the file at `path` as snoozefuse wrote it, or nil when there is none; read
    /// only where it is what snoozefuse writes there: a regular file, not reached through a
    /// symbolic link (O_NOFOLLOW), of at most `limit` bytes. A link, a device (`/dev/zero` never
    /// ends), a FIFO (never answers) or a folder in its place, or a file larger than `limit` (a
    /// sparse file of gigabytes), is not read: ``StoreError/Kind/damaged``, saying which.
    public static func read(path: String, atMost limit: Int) throws(StoreError) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP {
                throw StoreError(.damaged, subject: path, message: "it is a symbolic link, which snoozefuse never writes there (ELOOP)")
            }
            throw PrivateFiles.fileError(code, path, "cannot open the file")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PrivateFiles.fileError(errno, path, "cannot read the file's kind and size") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError(.damaged, subject: path, message: "it is \(fileKind(info.st_mode)), not a file snoozefuse wrote")
        }
        guard info.st_size <= limit else {
            throw StoreError(.damaged, subject: path, message: "it is \(info.st_size) bytes, more than such a file ever is (at most \(limit))")
        }
        var failure: Int32 = 0
        guard let bytes = readAll(fd, failure: &failure, atMost: limit, size: Int(info.st_size)) else {
            if failure == EFBIG {
                throw StoreError(.damaged, subject: path, message: "it grew past \(limit) bytes while it was read, more than such a file ever is")
            }
            throw PrivateFiles.fileError(failure, path, "cannot read the file")
        }
        return Data(bytes)
    }

    /// What a file of kind `mode` is, for messages.
    static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a folder"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a regular file"
        }
    }

    /// Everything `fd` reads until its end; nil when a read fails (its errno in `failure`), or
    /// when it reads more than `limit` bytes (`failure` EFBIG).
    ///
    /// Read into room sized by the file (`fstat`; 4 KiB for one without a size, as in /proc), not
    /// zeroed first: the zeroed 64 KiB buffer this replaced, to read a live state of about 1 KiB,
    /// was a twentieth of `status`'s instructions and 16 page faults (issue 23).
    /// `size`: the file's size when the caller has it from its own `fstat` (asked here otherwise).
    static func readAll(_ fd: Int32, failure: inout Int32, atMost limit: Int = .max, size known: Int? = nil) -> [UInt8]? {
        var info = stat()
        let size = known ?? (fstat(fd, &info) == 0 && info.st_size > 0 ? Int(info.st_size) : 0)
        // Room for the whole file in one read; a second read, which returns 0, says it has ended.
        let room = max(min(size, limit) + 1, 4_096)
        var bytes: [UInt8] = []
        while true {
            var error: Int32 = 0
            let chunk = [UInt8](unsafeUninitializedCapacity: room) { buffer, initialized in
                var count: Int
                repeat { count = Glibc.read(fd, buffer.baseAddress, room) } while count < 0 && errno == EINTR
                if count < 0 { error = errno }
                initialized = max(count, 0)
            }
            if error != 0 {
                failure = error
                return nil
            }
            if chunk.isEmpty { return bytes }
            if bytes.isEmpty { bytes = chunk } else { bytes += chunk }
            if bytes.count > limit {
                failure = EFBIG
                return nil
            }
        }
    }

    /// Moves the file at `path` aside, never replacing anything: to `path` + `suffix` + `-` + the
    /// UTC time to the nanosecond (`session.json.damaged-20261129T091502.123456789Z`), with `-2`,
    /// `-3`… after it when that name is taken. A hard link made, then the old name removed: a
    /// link fails (EEXIST) where a rename would replace. What cannot be linked (a folder) is
    /// renamed to a name that does not exist. Returns the new path, or nil with its `errno` in
    /// `failure`.
    public static func moveAside(_ path: String, suffix: String, failure: inout Int32) -> String? {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var time = now.tv_sec
        var parts = tm()
        gmtime_r(&time, &parts)
        func digits(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(width - text.count, 0)) + text
        }
        let stamp = digits(Int(parts.tm_year) + 1900, 4) + digits(Int(parts.tm_mon) + 1, 2) + digits(Int(parts.tm_mday), 2) + "T"
            + digits(Int(parts.tm_hour), 2) + digits(Int(parts.tm_min), 2) + digits(Int(parts.tm_sec), 2) + "." + digits(Int(now.tv_nsec), 9) + "Z"
        for attempt in 1 ... 1_000 {
            let target = path + suffix + "-" + stamp + (attempt == 1 ? "" : "-\(attempt)")
            if link(path, target) == 0 {
                guard unlink(path) == 0 else {
                    failure = errno
                    unlink(target)
                    return nil
                }
                syncFolder(path: PrivateFiles.folder(of: path))
                return target
            }
            switch errno {
            case EEXIST:
                continue
            case EPERM, EMLINK, EXDEV, ENOTSUP:
                // Not linkable here (a folder, a file system without hard links): a name nothing has.
                var info = stat()
                if lstat(target, &info) == 0 { continue } // taken: the next name
                guard errno == ENOENT else {
                    failure = errno
                    return nil
                }
                guard rename(path, target) == 0 else {
                    failure = errno
                    return nil
                }
                syncFolder(path: PrivateFiles.folder(of: path))
                return target
            default:
                failure = errno
                return nil
            }
        }
        failure = EEXIST
        return nil
    }

    /// Removes `url` (a file already gone is fine) and flushes its folder.
    public static func remove(_ url: URL) throws(StoreError) {
        if unlink(url.path) != 0 && errno != ENOENT {
            throw PrivateFiles.fileError(errno, url.path, "cannot remove the file")
        }
        syncFolder(path: url.deletingLastPathComponent().path)
    }

    private static func syncFolder(path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

/// The lock of the nap that runs: an exclusive `flock` on a file in the state folder, held for as
/// long as this value lives, and by the kernel until the holder's process ends (a `kill -9`
/// included, so a dead nap never blocks the next one).
public final class NapLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Takes the lock at `url` (`shared`: one that others may hold too), or returns nil when
    /// another process holds it. The descriptor is closed on exec, so no child keeps the lock.
    public static func acquire(_ url: URL, shared: Bool = false) throws(StoreError) -> NapLock? {
        try PrivateFiles.ensureFolder(url.deletingLastPathComponent())
        let fd = open(url.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFiles.fileError(errno, url.path, "cannot open the nap's lock file") }
        while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw PrivateFiles.fileError(code, url.path, "cannot lock the nap's lock file")
        }
        return NapLock(descriptor: fd)
    }

    /// Whether process `pid` holds a `flock` on the file at `path`, from the kernel's view of that
    /// process's open files: each entry of `/proc/PID/fd` that is this file (the same device and
    /// inode, as `stat` gives both), and the locks the kernel lists in its `fdinfo`. A lock goes
    /// when its holder dies, before the process is reaped: a zombie has no open files. Read only:
    /// it never takes the lock (a nap starting meanwhile is not refused).
    ///
    /// Not the kernel's list of every lock, `/proc/locks`: reading it takes the kernel's lock of
    /// all file locks for writing, which waits for an RCU grace period, 6-8 ms here whenever the
    /// list was not read in the moments before. A `status` that a status bar starts every second
    /// took 11-45 ms for it, while a benchmark that runs `status` back to back never waits (issue 23).
    ///
    /// False when the file does not exist or `pid` is no process; nil when the process's open
    /// files cannot be read (another user's, or `/proc` mounted with `hidepid`): the caller then
    /// asks whether the process runs.
    public static func isHeld(path: String, by pid: Int32) -> Bool? {
        var file = stat()
        guard pid > 0, stat(path, &file) == 0 else { return false }
        let folder = "/proc/\(pid)/fd"
        var failure: Int32 = 0
        guard let descriptors = PrivateFiles.entryNames(inFolder: folder, failure: &failure) else {
            return failure == ENOENT ? false : nil
        }
        return descriptors.contains { name in
            var opened = stat()
            guard stat("\(folder)/\(name)", &opened) == 0, opened.st_dev == file.st_dev, opened.st_ino == file.st_ino,
                  let info = (try? AtomicFile.read(path: "/proc/\(pid)/fdinfo/\(name)")) ?? nil else { return false }
            return holdsFlock(fdinfo: [UInt8](info))
        }
    }

    /// Whether one open file's `fdinfo` (as the kernel writes it) lists a `flock` held through it:
    /// a `lock:` line such as `lock:\t1: FLOCK  ADVISORY  WRITE 4242 00:2e:123456 0 EOF`. POSIX
    /// and open-file-description locks are not the nap's, and a waiter (`->`) holds nothing.
    public static func holdsFlock(fdinfo: [UInt8]) -> Bool {
        fdinfo.split(separator: UInt8(ascii: "\n")).contains { line in
            guard line.starts(with: "lock:".utf8) else { return false }
            let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            // `lock:`, the lock's number, then its kind (after `->` for a waiter).
            return fields.count >= 3 && fields[2].elementsEqual("FLOCK".utf8)
        }
    }
}

/// Folders that hold one user's files.
public enum PrivateFolder {
    /// Creates `folder` (and missing parents) with mode 0700.
    public static func ensure(_ folder: URL) throws(StoreError) {
        try PrivateFiles.ensureFolder(folder)
    }
}

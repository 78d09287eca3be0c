import SnoozeFuseCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the scanner learnt about each plugin file, kept between runs in
/// `$XDG_CACHE_HOME/snoozefuse/plugins.json` (default `~/.cache/snoozefuse/plugins.json`; the file
/// 0600, the folders 0700), so a warm `plugins list` or a nap's start loads nothing.
///
/// An entry is used only while its file is the same file: same device and inode, size, and
/// modification and change times to the nanosecond (the change time cannot be set back by the
/// file's owner, `touch` can only set the others), and only while the plugin host program that
/// scanned it is unchanged (a new snoozefuse rescans everything). The cache decides nothing about
/// safety: the permission and owner checks run on every scan, and the child that serves a plugin
/// checks that the file still holds the plugin the scan found (`--expect-id`). A cache that is
/// missing, unreadable, damaged, or writable by others is ignored and replaced.
public struct PluginScanCache: Sendable, Hashable {
    /// The cache file.
    public let file: String

    public init(file: String) {
        self.file = file
    }

    /// The cache of `environment`'s user: `$XDG_CACHE_HOME/snoozefuse/plugins.json`, or
    /// `$HOME/.cache/snoozefuse/plugins.json`; nil without either.
    public static func standard(environment: [String: String]) -> PluginScanCache? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return PluginScanCache(file: cache + "/snoozefuse/plugins.json")
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return PluginScanCache(file: home + "/.cache/snoozefuse/plugins.json")
        }
        return nil
    }

    /// Which file a path named when it was scanned (from `stat`).
    public struct FileIdentity: Sendable, Hashable, Codable {
        public var device: UInt64
        public var inode: UInt64
        public var size: Int64
        public var modified: Int64
        public var changed: Int64

        /// The identity of the file at `path` (links followed); nil when it cannot be examined.
        public init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            // Compared, never computed with: wrapping arithmetic, so a time after 2262 (`touch -d
            // 2300-01-01`, which ext4, xfs, btrfs and tmpfs keep) is an identity, not a trap.
            modified = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
        }
    }

    /// One file's verdict, and the file it is about.
    public struct Entry: Sendable, Hashable, Codable {
        public var identity: FileIdentity
        public var verdict: PluginScanVerdict
    }

    /// The file's contents: the format, the host program and ABI that scanned, and the entries by path.
    struct Contents: Codable {
        static let currentFormat = 1
        var format: Int
        var host: FileIdentity
        var abi: String
        var entries: [String: Entry]
    }

    static var abi: String { "\(PluginABI.major).\(PluginABI.minor)" }

    /// The entries kept by the scan of the host program `host`; empty when there is no usable cache.
    public func load(host: FileIdentity) -> [String: Entry] {
        // Only a private file of this user's: anything else may have been written by someone else.
        var info = stat()
        guard stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
              info.st_mode & (S_IWGRP | S_IWOTH) == 0,
              let bytes = Self.contents(of: file),
              let contents = try? JSONValueDecoder().decode(Contents.self, from: bytes),
              contents.format == Contents.currentFormat, contents.host == host, contents.abi == Self.abi else { return [:] }
        return contents.entries
    }

    /// Writes `entries` (those whose files still exist), atomically: a new private file renamed
    /// over the old one. Creates the folders (0700) when they are missing.
    /// - Throws: ``PluginScanCacheError`` naming the file and the cause.
    public func save(_ entries: [String: Entry], host: FileIdentity) throws(PluginScanCacheError) {
        let kept = entries.filter { access($0.key, F_OK) == 0 }
        let contents = Contents(format: Contents.currentFormat, host: host, abi: Self.abi, entries: kept)
        var text: String
        do {
            // What JSONEncoder wrote with `.sortedKeys` and `.withoutEscapingSlashes`.
            text = try JSONValueEncoder().encode(contents)
        } catch {
            throw PluginScanCacheError(file: file, reason: "cannot encode the scan results: \(error)")
        }
        let folder = PluginSearchPath.parent(of: file)
        try makeFolder(folder)
        var template = Array("\(folder)/.plugins-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw PluginScanCacheError(file: file, reason: "cannot create a file in \(folder): \(String(cString: strerror(errno)))")
        }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let written = text.withUTF8 { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let why = String(cString: strerror(errno))
        close(descriptor)
        guard written, rename(temporary, file) == 0 else {
            unlink(temporary)
            throw PluginScanCacheError(file: file, reason: written ? "cannot rename \(temporary) to it: \(String(cString: strerror(errno)))" : "cannot write: \(why)")
        }
    }

    /// The most the cache may hold (a line of a few hundred bytes a plugin): a larger file is
    /// not read, and the scan starts afresh.
    static let largestFile = 16 << 20

    /// The whole of the file at `path`; nil when it cannot be opened or read, or is not what the
    /// cache writes there: a regular file, not a symbolic link (a device or FIFO would never end
    /// or never answer), of at most ``largestFile`` bytes.
    private static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= largestFile else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > largestFile { return nil }
        }
    }

    /// Creates `folder` and its missing parents, each 0700 (existing ones are left as they are).
    private func makeFolder(_ folder: String) throws(PluginScanCacheError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        let parent = PluginSearchPath.parent(of: folder)
        if parent != folder { try makeFolder(parent) }
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
            throw PluginScanCacheError(file: file, reason: "cannot create the folder \(folder): \(String(cString: strerror(errno)))")
        }
    }
}

/// The scan cache could not be written (the scan's results still hold; the next scan loads again).
public struct PluginScanCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var description: String { "plugin scan cache \(file): \(reason)" }
}

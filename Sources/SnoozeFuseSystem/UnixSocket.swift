import CLinux
import Glibc

/// A local stream socket (`AF_UNIX`) for one line of request and one line of reply, as the control
/// socket of a running nap uses it. Every call is bounded: reads and writes have time limits, so a
/// peer that stops answering never holds anyone up.
public enum UnixSocket {
    /// The longest path a socket address holds (`sun_path`, less the terminating NUL).
    public static let longestPath = 107

    /// Listens at `path`: a stale socket file there is replaced; the socket is made 0600 (its
    /// folder must be the owner's alone). Returns the listening descriptor (close-on-exec).
    public static func listen(at path: String) throws(UnixSocketError) -> Int32 {
        guard path.utf8.count <= longestPath else { throw UnixSocketError(path: path, operation: "bind", code: ENAMETOOLONG) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError(path: path, operation: "socket", code: errno) }
        unlink(path)
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw UnixSocketError(path: path, operation: "bind", code: code)
        }
        return fd
    }

    /// The next connection waiting on `listener` (made non-blocking with ``setNonBlocking(_:)``),
    /// non-blocking itself and close-on-exec; nil when none waits now or the listener failed.
    public static func acceptWaiting(_ listener: Int32) -> Int32? {
        while true {
            // Both flags in the call itself: three fewer system calls per connection than setting
            // them after it (issue 23).
            let fd = snoozefuse_accept_nonblocking(listener)
            if fd >= 0 { return fd }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// Makes reads, writes and accepts on `fd` return at once instead of waiting (or wait again).
    public static func setNonBlocking(_ fd: Int32, _ nonBlocking: Bool = true) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return }
        _ = fcntl(fd, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    /// Connects to the socket at `path`; reads and writes on it give up after `limit`, and so does
    /// the connect itself while the listener's backlog is full.
    public static func connect(to path: String, limit: Duration) throws(UnixSocketError) -> Int32 {
        guard path.utf8.count <= longestPath else { throw UnixSocketError(path: path, operation: "connect", code: ENAMETOOLONG) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError(path: path, operation: "socket", code: errno) }
        var address = Self.address(path)
        let deadline = BootInstant.now.advanced(by: limit)
        while true {
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if connected == 0 { break }
            let code = errno
            // A full backlog: the listener is busy; try again until the limit.
            if code == EINTR || (code == EAGAIN && BootInstant.now < deadline) {
                if code == EAGAIN { usleep(10_000) }
                continue
            }
            close(fd)
            throw UnixSocketError(path: path, operation: "connect", code: code == EAGAIN ? ETIMEDOUT : code)
        }
        setNonBlocking(fd, false)
        setTimeLimit(fd, limit)
        return fd
    }

    /// The uid of the process at the other end of `fd`.
    public static func peerUID(_ fd: Int32) -> UInt32? {
        var uid: UInt32 = 0
        return snoozefuse_peer_uid(fd, &uid) == 0 ? uid : nil
    }

    /// Reads and writes on `fd` give up after `limit` (`SO_RCVTIMEO`, `SO_SNDTIMEO`).
    public static func setTimeLimit(_ fd: Int32, _ limit: Duration) {
        let parts = limit.components
        var value = timeval(tv_sec: Int(parts.seconds), tv_usec: Int(parts.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads up to the first newline (or the end), at most `limit` bytes; nil when nothing came in
    /// time or the line is too long.
    public static func readLine(_ fd: Int32, limit: Int = 65_536) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            if let newline = chunk[0 ..< count].firstIndex(of: UInt8(ascii: "\n")) {
                bytes += chunk[0 ..< newline]
                return String(decoding: bytes, as: UTF8.self)
            }
            bytes += chunk[0 ..< count]
        }
        return bytes.isEmpty || bytes.count > limit ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `line` and a newline.
    @discardableResult
    public static func writeLine(_ fd: Int32, _ line: String) -> Bool {
        var text = line + "\n"
        return text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: fd) }
    }

    /// Writes `line` and a newline on the non-blocking `fd`: at once when the socket has room (a
    /// reply to a fresh connection always fits its buffer), else waiting for room up to `limit`
    /// in all. False when it could not all be written in time.
    @discardableResult
    public static func writeLine(_ fd: Int32, _ line: String, waitingAtMost limit: Duration) -> Bool {
        var text = line + "\n"
        let deadline = BootInstant.now.advanced(by: limit)
        return text.withUTF8 { bytes -> Bool in
            var done = 0
            while done < bytes.count {
                let written = write(fd, bytes.baseAddress! + done, bytes.count - done)
                if written >= 0 {
                    done += written
                    continue
                }
                guard errno == EINTR || errno == EAGAIN else { return false }
                if errno == EAGAIN {
                    let left = BootInstant.now.duration(to: deadline)
                    guard left > .zero else { return false }
                    var watched = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&watched, 1, left.pollMilliseconds) < 0, errno != EINTR { return false }
                }
            }
            return true
        }
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(longestPath).enumerated() { raw[index] = byte }
        }
        return address
    }
}

/// A socket call failed.
public struct UnixSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var code: Int32

    /// Nobody listens there (no socket, or a stale one).
    public var isNobodyListening: Bool { code == ENOENT || code == ECONNREFUSED }

    public var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}

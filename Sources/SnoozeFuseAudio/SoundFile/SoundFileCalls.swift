import SnoozeFuseSystem
import CSndFile
import Glibc

// Thin calls into libsndfile, one place each, in the style of swift-system's `Syscalls.swift`. The
// public types above them only ever see Swift values and `SoundFileError`.

/// libsndfile keeps the error number, message and parse log of the last failed open in process-wide
/// variables (`sf_errno`, `sf_parselog`, `sf_syserr`). Every open, and every `sf_command(NULL, …)`,
/// goes through this lock, so that the log read after a failed open is the log of that open.
/// (Code outside this wrapper that calls libsndfile directly is not covered.)
enum SoundFileGlobalState {
    private static let lock = Locked(())

    static func withLock<R>(_ body: () throws(SoundFileError) -> R) throws(SoundFileError) -> R {
        try lock.withLock { _ throws(SoundFileError) -> R in try body() }
    }

    static func withLock<R>(_ body: () -> R) -> R {
        lock.withLock { _ in body() }
    }
}

enum SoundFileCalls {
    /// `sf_open`/`sf_open_virtual` and, if it fails, everything libsndfile says about why, read
    /// while the global state still belongs to this open.
    static func open(
        path: String,
        operation: SoundFileError.Operation,
        info: inout SF_INFO,
        _ opener: (inout SF_INFO) -> OpaquePointer?
    ) throws(SoundFileError) -> OpaquePointer {
        try SoundFileGlobalState.withLock { () throws(SoundFileError) -> OpaquePointer in
            if let handle = opener(&info) { return handle }
            let code = SoundFileError.Code(rawValue: sf_error(nil))
            throw SoundFileError(
                operation: operation,
                path: path,
                code: code,
                message: lastGlobalMessage(),
                parseLog: lastGlobalLog()
            )
        }
    }

    /// The message of the last failed open (`sf_strerror(NULL)`). Call with the lock held.
    private static func lastGlobalMessage() -> String {
        guard let text = sf_strerror(nil) else { return "unknown libsndfile error" }
        return String(cString: text)
    }

    /// The parse log of the last failed open (`SFC_GET_LOG_INFO` on no file). Call with the lock held.
    private static func lastGlobalLog() -> String {
        logText { buffer in sf_command(nil, Int32(SFC_GET_LOG_INFO), buffer.baseAddress, Int32(buffer.count)) }
    }

    /// The parse log of an open file.
    static func log(of handle: OpaquePointer) -> String {
        logText { buffer in sf_command(handle, Int32(SFC_GET_LOG_INFO), buffer.baseAddress, Int32(buffer.count)) }
    }

    private static func logText(_ fill: (UnsafeMutableBufferPointer<CChar>) -> Int32) -> String {
        // libsndfile's log buffer (SF_BUFFER_LEN) is 8192 bytes; it truncates to the size given.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 8192) { buffer -> String in
            buffer.initialize(repeating: 0)
            let length = Int(fill(buffer))
            guard length > 0 else { return "" }
            buffer[min(length, buffer.count - 1)] = 0
            return String(cString: buffer.baseAddress!)
        }
    }

    /// An error about an open handle (`sf_error`/`sf_strerror` on that handle; not global).
    static func error(
        of handle: OpaquePointer,
        operation: SoundFileError.Operation,
        path: String,
        fallback: String
    ) -> SoundFileError {
        let code = SoundFileError.Code(rawValue: sf_error(handle))
        var message = fallback
        if code != .noError, let text = sf_strerror(handle) {
            message = String(cString: text)
        }
        return SoundFileError(operation: operation, path: path, code: code, message: message)
    }

    /// Opens a path the user named for reading without ever blocking: `O_NONBLOCK` (so a FIFO with
    /// no writer, or a device, cannot hold up the open), then `fstat`, and only a regular file is
    /// accepted; the non-blocking flag is then cleared (it means nothing for a regular file). The
    /// caller owns the returned descriptor.
    ///
    /// - Throws: ``SoundFileError`` (`.open`, ``SoundFileError/isMissingInput``): the `errno` of a
    ///   failed `open`, or the kind of file the path is when it is not a regular one.
    static func openRegularFile(_ path: String) throws(SoundFileError) -> Int32 {
        var fd: Int32
        repeat { fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) } while fd < 0 && errno == EINTR
        if fd < 0 {
            let code = errno
            throw SoundFileError(operation: .open, path: path, code: .system, message: systemMessage(code), systemErrno: code)
        }
        var status = stat()
        if fstat(fd, &status) != 0 {
            let code = errno
            _ = Glibc.close(fd)
            throw SoundFileError(operation: .open, path: path, code: .system, message: systemMessage(code), systemErrno: code)
        }
        let type = SoundFileError.FileType(mode: status.st_mode)
        guard type == .regular else {
            _ = Glibc.close(fd)
            throw SoundFileError(operation: .open, path: path, code: .system,
                                 message: "it is \(type.withArticle), not a regular file",
                                 systemErrno: type == .directory ? EISDIR : nil, fileType: type)
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}

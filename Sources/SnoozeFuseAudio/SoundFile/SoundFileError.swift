import CSndFile
import Glibc

/// A failure reported by libsndfile (or by the operating system underneath it), with everything a
/// person needs to act on it: what was attempted, on which file, libsndfile's own code and message,
/// and the parse log libsndfile wrote while it looked at the file.
///
/// The command line maps ``isMissingInput`` to exit status 66 and ``isBadData`` to 65.
public struct SoundFileError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// What the wrapper was doing when libsndfile failed.
    public enum Operation: String, Sendable, Hashable, CustomStringConvertible {
        case open
        case read
        case seek
        case create
        case write
        case close

        public var description: String { rawValue }
    }

    /// An error number as libsndfile reports it from `sf_error`.
    ///
    /// Like swift-system's `Errno`, this is an open set: the static members name the public
    /// `SF_ERR_*` constants of `sndfile.h`, but `sf_error` also returns libsndfile's finer,
    /// internal numbers (for example 71, "Error in WAV file. No 'data' chunk marker."). Those are
    /// kept as they are; ``description`` always gives libsndfile's text for the number.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int32

        public init(rawValue: Int32) { self.rawValue = rawValue }

        init(_ value: Int) { self.rawValue = Int32(truncatingIfNeeded: value) }

        /// `SF_ERR_NO_ERROR` (0): no error.
        public static var noError: Code { Code(SF_ERR_NO_ERROR) }

        /// `SF_ERR_UNRECOGNISED_FORMAT` (1): the data is not in a format libsndfile recognises
        /// (a text file, an empty file, a directory, AAC/M4A, …).
        public static var unrecognisedFormat: Code { Code(SF_ERR_UNRECOGNISED_FORMAT) }

        /// `SF_ERR_SYSTEM` (2): the operating system refused (missing file, permissions, disk full).
        public static var system: Code { Code(SF_ERR_SYSTEM) }

        /// `SF_ERR_MALFORMED_FILE` (3): a recognised format whose structure is broken.
        public static var malformedFile: Code { Code(SF_ERR_MALFORMED_FILE) }

        /// `SF_ERR_UNSUPPORTED_ENCODING` (4): a known container with an encoding libsndfile cannot
        /// decode or write (for example IMA4 or AAC inside CAF).
        public static var unsupportedEncoding: Code { Code(SF_ERR_UNSUPPORTED_ENCODING) }

        /// libsndfile's text for this number (`sf_error_number`).
        public var description: String {
            guard let text = sf_error_number(rawValue) else { return "libsndfile error \(rawValue)" }
            return String(cString: text)
        }
    }

    /// What a path names, from `fstat`: sounds are read only from regular files, because opening or
    /// reading anything else (a FIFO without a writer, a terminal, `/dev/zero`) can wait or run for ever.
    public enum FileType: String, Sendable, Hashable, CustomStringConvertible {
        case regular
        case directory
        case fifo
        case characterDevice
        case blockDevice
        case socket
        case symbolicLink
        case unknown

        /// The type of `mode` (`st_mode`).
        public init(mode: UInt32) {
            switch mode & S_IFMT {
            case S_IFREG: self = .regular
            case S_IFDIR: self = .directory
            case S_IFIFO: self = .fifo
            case S_IFCHR: self = .characterDevice
            case S_IFBLK: self = .blockDevice
            case S_IFSOCK: self = .socket
            case S_IFLNK: self = .symbolicLink
            default: self = .unknown
            }
        }

        public var description: String {
            switch self {
            case .regular: "regular file"
            case .directory: "folder"
            case .fifo: "FIFO (named pipe)"
            case .characterDevice: "character device"
            case .blockDevice: "block device"
            case .socket: "socket"
            case .symbolicLink: "symbolic link"
            case .unknown: "special file"
            }
        }

        /// `a folder`, `a FIFO (named pipe)` ….
        public var withArticle: String { "a \(description)" }
    }

    /// What was being done.
    public var operation: Operation
    /// The file's path, or the name given to an in-memory source.
    public var path: String
    /// libsndfile's error number.
    public var code: Code
    /// libsndfile's message (`sf_strerror`), or a message of this wrapper where libsndfile has none.
    public var message: String
    /// The parse log libsndfile wrote while opening the file (`SFC_GET_LOG_INFO`); may be empty.
    public var parseLog: String
    /// The `errno` the operating system gave when the file itself could not be opened, if any.
    public var systemErrno: Int32?
    /// An error thrown by a ``SoundFileByteSource`` while libsndfile was reading from it.
    public var underlyingError: (any Error)?
    /// What the path is when it was refused for not being a regular file (a folder, a FIFO, a device).
    public var fileType: FileType?

    public init(
        operation: Operation,
        path: String,
        code: Code,
        message: String,
        parseLog: String = "",
        systemErrno: Int32? = nil,
        underlyingError: (any Error)? = nil,
        fileType: FileType? = nil
    ) {
        self.operation = operation
        self.path = path
        self.code = code
        self.message = message
        self.parseLog = parseLog
        self.systemErrno = systemErrno
        self.underlyingError = underlyingError
        self.fileType = fileType
    }

    /// The input does not exist, cannot be opened for reading (no such file, no permission) or is
    /// not a regular file (a folder, a FIFO, a device): the command line exits with 66 (`EX_NOINPUT`).
    public var isMissingInput: Bool {
        operation == .open && (systemErrno != nil || fileType != nil)
    }

    /// The input exists but is not sound libsndfile can decode: empty, truncated headers, not audio,
    /// an unsupported encoding, or a decoding failure mid-stream. The command line exits with 65
    /// (`EX_DATAERR`).
    public var isBadData: Bool {
        switch operation {
        case .open, .read, .seek:
            return !isMissingInput && code != .system
        case .create, .write, .close:
            return false
        }
    }

    public var description: String {
        var text = "Cannot \(verb) '\(path)': \(message)"
        if let underlyingError {
            text += " (the byte source failed: \(underlyingError))"
        }
        // The operating system's refusals (our own open and fstat) are not libsndfile's.
        if code != .noError && !(operation == .open && (systemErrno != nil || fileType != nil)) {
            text += " [libsndfile error \(code.rawValue)]"
        }
        text += ". " + advice
        return text
    }

    public var debugDescription: String {
        let log = parseLog.trimmingTrailingNewlines()
        guard !log.isEmpty else { return description }
        return description + "\nlibsndfile log:\n" + log
    }

    private var verb: String {
        switch operation {
        case .open: "open sound file"
        case .read: "read sound file"
        case .seek: "seek in sound file"
        case .create: "create sound file"
        case .write: "write sound file"
        case .close: "finish writing sound file"
        }
    }

    private var advice: String {
        if let fileType, operation == .open, fileType != .directory {
            return "Reading \(fileType.withArticle) could wait or run for ever, so it is refused; give the path of a sound file."
        }
        if let systemErrno, operation == .open {
            switch systemErrno {
            case ENOENT, ENOTDIR: return "Check the path: there is no such file."
            case EACCES, EPERM: return "Check the file's permissions: it is not readable."
            case EISDIR: return "The path is a folder; give the path of a sound file."
            default: return "Check that the path names a readable sound file."
            }
        }
        switch operation {
        case .create, .write, .close:
            if code == .unsupportedEncoding {
                return "Choose a format and encoding libsndfile can write (for example CAF with 16-bit PCM)."
            }
            return "Check that the destination folder exists, is writable and has free space."
        case .open, .read, .seek:
            switch code {
            case .unrecognisedFormat:
                return "The data is not in an audio format libsndfile reads (WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3); convert it, for example with ffmpeg or sox."
            case .unsupportedEncoding:
                return "The container is readable but its encoding is not (for example IMA4 or AAC in CAF); convert it to linear PCM."
            case .system:
                return "The operating system reported an error; check the file and the disk."
            default:
                return "The file is damaged or incomplete; export it again from its source."
            }
        }
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline || last == " " { text = text.dropLast() }
        return String(text)
    }
}

import CALSA

/// One message alsa-lib reported through its error handler (instead of printing it to stderr),
/// e.g. `cannot find card '0'` from `parse_card` in `confmisc.c`.
public struct ALSAMessage: Sendable, Hashable, CustomStringConvertible {
    /// alsa-lib source file that reported it, e.g. `confmisc.c`.
    public var file: String
    /// Line in `file`.
    public var line: Int
    /// alsa-lib function that reported it, e.g. `parse_card`.
    public var function: String
    /// The errno alsa-lib attached to the message (often 0, meaning none).
    public var errno: Int32
    /// The formatted message text.
    public var text: String

    public init(file: String, line: Int, function: String, errno: Int32, text: String) {
        self.file = file
        self.line = line
        self.function = function
        self.errno = errno
        self.text = text
    }

    /// The text, plus the errno's meaning when alsa-lib attached one (as alsa-lib itself would print it).
    public var description: String {
        errno == 0 ? text : "\(text): \(ALSAErrno(rawValue: abs(errno)).message)"
    }
}

/// The one place that talks to the shim's thread-local message capture.
///
/// alsa-lib's error handler is process-wide; the shim routes every message to a buffer owned by the
/// thread that made the call, so concurrent ALSA calls on different threads never mix their messages.
enum ALSAMessageCapture {
    /// Installs the shim's handler exactly once per process (a Swift global is initialised once,
    /// thread-safely). From then on alsa-lib never writes its messages to stderr.
    private static let installed: Int32 = snoozefuse_alsa_install_capture()

    static func install() {
        _ = installed
    }

    /// Runs `body` with a capture open on the current thread and returns what alsa-lib said meanwhile.
    static func capturing<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> (R, [ALSAMessage]) {
        install()
        snoozefuse_alsa_capture_begin()
        defer { snoozefuse_alsa_capture_end() }
        let result = try body()
        return (result, collect())
    }

    /// Parses the records captured on this thread since the outermost `begin`.
    static func collect() -> [ALSAMessage] {
        guard let raw = snoozefuse_alsa_capture_text(), raw.pointee != 0 else { return [] }
        var messages: [ALSAMessage] = []
        for record in String(cString: raw).split(separator: "\u{1E}", omittingEmptySubsequences: true) {
            let fields = record.split(separator: "\u{1F}", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5 else { continue }
            messages.append(ALSAMessage(
                file: String(fields[0]),
                line: Int(fields[1]) ?? 0,
                function: String(fields[2]),
                errno: Int32(fields[3]) ?? 0,
                text: String(fields[4])))
        }
        let truncated = snoozefuse_alsa_capture_truncated()
        if truncated > 0 {
            messages.append(ALSAMessage(
                file: "", line: 0, function: "", errno: 0,
                text: "(\(truncated) more message(s) not kept)"))
        }
        return messages
    }
}

import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// The one place that talks to the shim's message handler.
///
/// alsa-lib's error handler is process-wide and called synchronously on the thread whose call failed.
/// The shim forwards every message to `sink`, which files it in a buffer owned by the calling thread
/// (a pthread-specific value), so concurrent ALSA calls on different threads never mix their messages.
/// Messages on a thread with no capture open are dropped: alsa-lib never writes to stderr.
enum ALSAMessageCapture {
    /// Per-thread capture state. Only ever touched by its own thread (it is found through a
    /// pthread key), so it needs no locking and is not `Sendable`.
    private final class ThreadMessages {
        var depth = 0
        var messages: [ALSAMessage] = []
        var dropped = 0
    }

    /// How many messages one capture keeps (alsa-lib says a handful per failure).
    private static let limit = 64

    /// The pthread key of each thread's `ThreadMessages`; its destructor releases the buffer when the
    /// thread exits. `nil` if the system has no key left: messages are then dropped, never printed.
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            if let raw {
                Unmanaged<ThreadMessages>.fromOpaque(raw).release()
            }
        }
        return status == 0 ? key : nil
    }()

    /// Installs the shim's handler once per process (a Swift global is initialised exactly once,
    /// thread-safely). From then on alsa-lib never writes its messages to stderr.
    private static let installed: Int32 = snoozefuse_alsa_set_message_sink { file, line, function, errno, text in
        guard let state = ALSAMessageCapture.current(creating: false), state.depth > 0 else { return }
        guard state.messages.count < ALSAMessageCapture.limit else {
            state.dropped += 1
            return
        }
        state.messages.append(ALSAMessage(
            file: file.map { String(cString: $0) } ?? "",
            line: Int(line),
            function: function.map { String(cString: $0) } ?? "",
            errno: errno,
            text: text.map { String(cString: $0) }.map(ALSAMessageCapture.trimmed) ?? ""))
    }

    /// alsa-lib's plugins sometimes end a message with a newline of their own.
    private static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last.isWhitespace {
            text = text.dropLast()
        }
        return String(text)
    }

    static func install() {
        _ = installed
    }

    private static func current(creating: Bool) -> ThreadMessages? {
        guard let key else { return nil }
        if let raw = pthread_getspecific(key) {
            return Unmanaged<ThreadMessages>.fromOpaque(raw).takeUnretainedValue()
        }
        guard creating else { return nil }
        let state = ThreadMessages()
        let raw = Unmanaged.passRetained(state).toOpaque()
        guard pthread_setspecific(key, raw) == 0 else {
            Unmanaged<ThreadMessages>.fromOpaque(raw).release()
            return nil
        }
        return state
    }

    /// Opens a capture on the calling thread (nestable). The outermost one starts empty.
    static func begin() {
        install()
        guard let state = current(creating: true) else { return }
        if state.depth == 0 {
            state.messages.removeAll(keepingCapacity: true)
            state.dropped = 0
        }
        state.depth += 1
    }

    /// Closes one level of capture on the calling thread.
    static func end() {
        guard let state = current(creating: false), state.depth > 0 else { return }
        state.depth -= 1
    }

    /// What alsa-lib said on this thread since the outermost `begin()`.
    static func collect() -> [ALSAMessage] {
        guard let state = current(creating: false) else { return [] }
        var messages = state.messages
        if state.dropped > 0 {
            messages.append(ALSAMessage(file: "", line: 0, function: "", errno: 0,
                                        text: "(\(state.dropped) more message(s) not kept)"))
        }
        return messages
    }

    /// Runs `body` with a capture open on the current thread and returns what alsa-lib said meanwhile.
    static func capturing<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> (R, [ALSAMessage]) {
        begin()
        defer { end() }
        let result = try body()
        return (result, collect())
    }
}

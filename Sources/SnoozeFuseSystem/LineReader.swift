import Glibc

/// Reads a child's protocol line by line from a descriptor, each wait with a deadline on
/// CLOCK_BOOTTIME: the parent's side of a child that may crash, hang or end at any moment.
public struct LineReader {
    /// What came next.
    public enum Next: Sendable, Hashable {
        /// One line, without its newline.
        case line(String)
        /// The writer closed its end (it ended); a partial last line is dropped.
        case end
        /// The deadline passed first.
        case timedOut
    }

    public let descriptor: Int32
    private var buffer: [UInt8] = []
    private var ended = false

    /// Reads from `descriptor` (which the caller keeps and closes).
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line, the end, or `timedOut` when `deadline` passes first (never, when nil).
    public mutating func next(until deadline: BootInstant?) -> Next {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return .line(line)
            }
            if ended { return .end }
            guard waitReadable(descriptor, until: deadline) else { return .timedOut }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0 ..< count])
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                ended = true
            }
        }
    }
}

/// Random-access bytes the inspector reads from; offsets are absolute from the start of the file.
///
/// The inspector only reads chunk headers and the bodies of the small metadata chunks (`desc`,
/// `pakt` in bounded blocks, `kuki`, `chan`, `info`); it never reads `data`, `free` or unknown
/// chunks. A conformer backed by a file descriptor (`pread`) therefore inspects a file of any
/// size without loading it. This module stays free of I/O, so such a conformer lives in the
/// layer that owns files; the in-memory conformers below serve tests, fuzzing and callers that
/// already hold the bytes.
public protocol CAFByteSource {
    /// The total length of the file in bytes (never negative).
    var byteCount: Int64 { get }

    /// Returns up to `count` bytes starting at `offset` (`0 <= offset <= byteCount`). Returning
    /// fewer bytes than asked means the end of the file; throw when the read itself fails.
    func read(at offset: Int64, count: Int) throws -> [UInt8]
}

/// A `CAFByteSource` over bytes already in memory.
public struct CAFMemorySource: CAFByteSource, Sendable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var byteCount: Int64 { Int64(bytes.count) }

    public func read(at offset: Int64, count: Int) -> [UInt8] {
        guard offset >= 0, offset < Int64(bytes.count), count > 0 else { return [] }
        let start = Int(offset)
        let end = start + min(count, bytes.count - start)
        return Array(bytes[start..<end])
    }
}

/// A `CAFByteSource` over borrowed raw memory; valid only while that memory is.
struct CAFRawBufferSource: CAFByteSource {
    let buffer: UnsafeRawBufferPointer

    var byteCount: Int64 { Int64(buffer.count) }

    func read(at offset: Int64, count: Int) -> [UInt8] {
        guard offset >= 0, offset < Int64(buffer.count), count > 0 else { return [] }
        let start = Int(offset)
        let end = start + min(count, buffer.count - start)
        return Array(buffer[start..<end])
    }
}

import CSndFile
import Glibc

/// Bytes libsndfile can decode without a file: anything that knows its length and can copy a range.
///
/// ``SoundFile`` keeps the current position itself, so a source only answers positioned reads
/// (like `pread`). A source is used by one ``SoundFile`` on one thread at a time.
public protocol SoundFileByteSource {
    /// The total length in bytes.
    var byteCount: Int64 { get }

    /// Copies up to `buffer.count` bytes starting at byte `offset` into `buffer` and returns how many
    /// were copied: fewer than asked only at the end of the data, 0 at or past the end.
    /// A thrown error makes the read look short to libsndfile; ``SoundFileError/underlyingError``
    /// carries it.
    mutating func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A ``SoundFileByteSource`` over bytes already in memory (for example a file re-wrapped in a
/// different container).
public struct InMemorySoundBytes: SoundFileByteSource, Sendable {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var byteCount: Int64 { Int64(bytes.count) }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        let start = Int(offset)
        let count = min(buffer.count, bytes.count - start)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: count)
        }
        return count
    }
}

/// The `user_data` behind libsndfile's virtual I/O callbacks: the source, the position, and the first
/// error the source threw. A ``SoundFile`` owns it (a strong reference) for as long as the libsndfile
/// handle lives, and hands libsndfile only an unretained pointer, so nothing is retained or released
/// across the C boundary.
final class SoundFileVirtualIO {
    var source: any SoundFileByteSource
    var position: Int64 = 0
    var firstError: (any Error)?

    init(source: any SoundFileByteSource) { self.source = source }

    /// The callback table. libsndfile copies it during `sf_open_virtual`; `write` is absent because
    /// virtual sources are read-only.
    static var callbacks: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { userData in
                SoundFileVirtualIO.from(userData).source.byteCount
            },
            seek: { offset, whence, userData in
                SoundFileVirtualIO.from(userData).seek(offset, whence: whence)
            },
            read: { pointer, count, userData in
                guard let pointer, count > 0 else { return 0 }
                let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: Int(count))
                return SoundFileVirtualIO.from(userData).read(into: buffer)
            },
            write: nil,
            tell: { userData in
                SoundFileVirtualIO.from(userData).position
            }
        )
    }

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userData: UnsafeMutableRawPointer?) -> SoundFileVirtualIO {
        // libsndfile passes back exactly the pointer given to `sf_open_virtual`, which is never nil.
        Unmanaged<SoundFileVirtualIO>.fromOpaque(userData!).takeUnretainedValue()
    }

    private func seek(_ offset: sf_count_t, whence: Int32) -> sf_count_t {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = source.byteCount
        default: return -1
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return -1 }
        position = target
        return position
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer) -> sf_count_t {
        do {
            let count = try source.read(at: position, into: buffer)
            let copied = max(0, min(count, buffer.count))
            position += Int64(copied)
            return sf_count_t(copied)
        } catch {
            if firstError == nil { firstError = error }
            return 0
        }
    }
}

import Glibc
import SnoozeFuseAudio
import SnoozeFuseCAF

/// A read-only file descriptor, closed when the last reference goes.
final class OpenInputFile {
    let path: String
    let fileDescriptor: Int32
    let byteCount: Int64

    /// Opens `path` for reading without blocking (`O_NONBLOCK`: a FIFO or a device cannot hold up
    /// the open); a missing or unreadable file, or anything but a regular file (a folder, a FIFO, a
    /// device), is ``SoundLibraryError/Kind/missingInput``.
    init(path: String) throws(SoundLibraryError) {
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) } while fd < 0 && errno == EINTR
        if fd < 0 {
            let code = errno
            throw SoundLibraryError(.missingInput, "Cannot open '\(path)': \(String(cString: strerror(code))). Check the path and its permissions.")
        }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            let type = SoundFileError.FileType(mode: status.st_mode)
            throw SoundLibraryError(.missingInput, "Cannot open '\(path)': it is \(type.withArticle), not a regular file; reading it could wait or run for ever, so it is refused. Give the path of a sound file.")
        }
        self.path = path
        fileDescriptor = fd
        byteCount = Int64(status.st_size)
    }

    deinit { close(fileDescriptor) }

    /// Reads up to `buffer.count` bytes at `offset` (retrying interrupted and short reads).
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(SoundLibraryError) -> Int {
        let (done, failure) = transferAll(buffer.count, at: offset) { done, position in
            pread(fileDescriptor, buffer.baseAddress! + done, buffer.count - done, position)
        }
        if let failure {
            throw SoundLibraryError(.badData, "Cannot read '\(path)' at byte \(offset + Int64(done)): \(String(cString: strerror(failure))).")
        }
        return done
    }

    func read(at offset: Int64, count: Int) throws(SoundLibraryError) -> [UInt8] {
        guard count > 0, offset < byteCount else { return [] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(min(Int64(count), byteCount - offset)), alignment: 1)
        defer { buffer.deallocate() }
        let got = try read(at: offset, into: buffer)
        return Array(buffer.prefix(got))
    }
}

/// Repeats a positioned read or write (`pread`, `pwrite`) until `count` bytes are done, retrying
/// `EINTR`; stops early when a call moves no bytes (the end of the file). Returns the bytes done and
/// the `errno` of a call that failed.
func transferAll(_ count: Int, at offset: Int64, _ call: (_ done: Int, _ position: off_t) -> Int) -> (done: Int, errno: Int32?) {
    var done = 0
    while done < count {
        let moved = call(done, off_t(offset) + off_t(done))
        if moved < 0 {
            if errno == EINTR { continue }
            return (done, errno)
        }
        if moved == 0 { break }
        done += moved
    }
    return (done, nil)
}

/// The CAF inspector's view of an open file: positioned reads, so only headers are read.
struct FileCAFSource: CAFByteSource {
    let file: OpenInputFile
    var byteCount: Int64 { file.byteCount }
    func read(at offset: Int64, count: Int) throws -> [UInt8] { try file.read(at: offset, count: count) }
}

/// Bytes libsndfile decodes that are a file with some ranges replaced or re-framed: small pieces
/// made in memory (a patched `desc`, a measured `data` size, an AIFF-C header) spliced between
/// ranges read from the file on demand. A repaired file is therefore never loaded whole.
struct SplicedFileBytes: SoundFileByteSource {
    enum Piece {
        case bytes([UInt8])
        /// `count` bytes of the file from `offset`.
        case file(offset: Int64, count: Int64)

        var count: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .file(_, let count): count
            }
        }
    }

    let file: OpenInputFile
    let pieces: [Piece]
    /// Where each piece starts in the spliced stream.
    let starts: [Int64]
    let byteCount: Int64

    init(file: OpenInputFile, pieces: [Piece]) {
        self.file = file
        self.pieces = pieces
        var starts: [Int64] = []
        var total: Int64 = 0
        for piece in pieces {
            starts.append(total)
            total += piece.count
        }
        self.starts = starts
        byteCount = total
    }

    /// The file with `replacements` (offset → bytes) written over it.
    static func patching(_ file: OpenInputFile, _ replacements: [(offset: Int64, bytes: [UInt8])]) -> SplicedFileBytes {
        var pieces: [Piece] = []
        var position: Int64 = 0
        for replacement in replacements.sorted(by: { $0.offset < $1.offset }) {
            if replacement.offset > position { pieces.append(.file(offset: position, count: replacement.offset - position)) }
            pieces.append(.bytes(replacement.bytes))
            position = replacement.offset + Int64(replacement.bytes.count)
        }
        if position < file.byteCount { pieces.append(.file(offset: position, count: file.byteCount - position)) }
        return SplicedFileBytes(file: file, pieces: pieces)
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < byteCount, !buffer.isEmpty else { return 0 }
        // The last piece starting at or before `offset`.
        var index = 0
        var low = 0, high = starts.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if starts[middle] <= offset { index = middle; low = middle + 1 } else { high = middle - 1 }
        }
        var copied = 0
        var position = offset
        while copied < buffer.count, index < pieces.count {
            let within = position - starts[index]
            let available = pieces[index].count - within
            if available <= 0 { index += 1; continue }
            let want = Int(min(Int64(buffer.count - copied), available))
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[copied..<(copied + want)])
            let got: Int
            switch pieces[index] {
            case .bytes(let bytes):
                bytes.withUnsafeBytes { source in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(within)..<(Int(within) + want)]))
                }
                got = want
            case .file(let fileOffset, _):
                got = try file.read(at: fileOffset + within, into: target)
            }
            copied += got
            position += Int64(got)
            if got < want { break }
            index += 1
        }
        return copied
    }
}

// The file descriptor is only read with `pread` (no shared offset) and closed once, in `deinit`;
// the other properties are constants. Concurrent positioned reads of one descriptor are safe.
extension OpenInputFile: @unchecked Sendable {}

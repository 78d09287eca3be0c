import CSndFile
import Glibc

/// A sound file open for reading through libsndfile: WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3, …
///
/// Reads stream interleaved `Float` frames (normalised to -1…1) into a buffer the caller owns; the
/// file is never loaded whole. The handle is closed when the value goes away.
///
/// ```swift
/// var file = try SoundFile(readingAtPath: path)
/// var samples = [Float](repeating: 0, count: 4096 * file.info.channels)
/// while try samples.withUnsafeMutableBufferPointer({ try file.read(into: $0) }) > 0 { … }
/// ```
public struct SoundFile: ~Copyable {
    /// The path it was opened from, or the name given to an in-memory source.
    public let path: String
    /// Frames, rate, channels and format, as libsndfile reported them when the file was opened.
    public let info: SoundFileInfo

    let handle: OpaquePointer
    /// Keeps the virtual I/O source alive exactly as long as the handle that reads from it.
    let virtualIO: SoundFileVirtualIO?

    /// Opens the file at `path`. The path is opened without blocking and must name a regular file
    /// (a FIFO, a device or a folder is refused at once: reading one could wait or run for ever);
    /// libsndfile then reads that descriptor (`sf_open_fd`).
    ///
    /// - Throws: ``SoundFileError`` with ``SoundFileError/isMissingInput`` when the file cannot be
    ///   opened at all or is not a regular file (``SoundFileError/fileType`` says what it is),
    ///   ``SoundFileError/isBadData`` when libsndfile cannot decode it.
    public init(readingAtPath path: String) throws(SoundFileError) {
        let fd = try SoundFileCalls.openRegularFile(path)
        var sfInfo = SF_INFO()
        // libsndfile owns the descriptor from here (close_desc 1): `sf_close` closes it, and so does
        // a failed open. (With close_desc 0, libsndfile 1.2.0 still closes it when the open fails,
        // so closing it here too would close whatever another thread opened under the same number.)
        handle = try SoundFileCalls.open(path: path, operation: .open, info: &sfInfo) { info in
            sf_open_fd(fd, Int32(SFM_READ), &info, 1)
        }
        self.path = path
        self.info = SoundFileInfo(sfInfo)
        self.virtualIO = nil
    }

    /// Opens sound data held in memory, through libsndfile's virtual I/O. `name` stands in for a path
    /// in errors.
    public init(readingFrom bytes: [UInt8], name: String = "<memory>") throws(SoundFileError) {
        try self.init(readingFrom: InMemorySoundBytes(bytes), name: name)
    }

    /// Opens sound data from any byte source, through libsndfile's virtual I/O (`SF_VIRTUAL_IO`). The
    /// source is handed over (`sending`): this value owns it from now on.
    public init(readingFrom source: sending some SoundFileByteSource, name: String = "<memory>") throws(SoundFileError) {
        let virtualIO = SoundFileVirtualIO(source: source)
        var callbacks = SoundFileVirtualIO.callbacks
        var sfInfo = SF_INFO()
        do {
            handle = try SoundFileCalls.open(path: name, operation: .open, info: &sfInfo) { info in
                sf_open_virtual(&callbacks, Int32(SFM_READ), &info, virtualIO.userData)
            }
        } catch var error {
            error.underlyingError = virtualIO.firstError
            throw error
        }
        self.path = name
        self.info = SoundFileInfo(sfInfo)
        self.virtualIO = virtualIO
    }

    deinit {
        sf_close(handle)
    }

    /// Reads as many whole frames as fit in `buffer` (interleaved, ``SoundFileInfo/channels`` samples
    /// per frame) and returns how many frames it read: fewer at the end of the file, 0 after it.
    /// Samples past `frames × channels` are left as they were.
    ///
    /// - Precondition: `buffer` holds at least one frame.
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(SoundFileError) -> Int {
        let channels = info.channels
        precondition(buffer.count >= channels, "a read buffer must hold at least one frame (\(channels) samples)")
        guard let base = buffer.baseAddress else { return 0 }
        let frames = sf_readf_float(handle, base, sf_count_t(buffer.count / channels))
        if frames < 0 || (frames == 0 && sf_error(handle) != 0) {
            var error = SoundFileCalls.error(of: handle, operation: .read, path: path, fallback: "reading failed")
            error.underlyingError = virtualIO?.firstError
            throw error
        }
        return Int(frames)
    }

    /// Moves to `frame` (0-based, ≤ ``SoundFileInfo/frames``); the next read starts there.
    public mutating func seek(toFrame frame: Int64) throws(SoundFileError) {
        let position = sf_seek(handle, sf_count_t(frame), SEEK_SET)
        if position < 0 {
            var error = SoundFileCalls.error(
                of: handle, operation: .seek, path: path,
                fallback: "cannot seek to frame \(frame) of \(info.frames)"
            )
            if error.code == .noError {
                error.code = .malformedFile
            }
            error.message += " (frame \(frame) of \(info.frames))"
            throw error
        }
    }

    /// libsndfile's parse log for this file (what it found in the header, and any complaints, such as
    /// a data chunk that claims more bytes than the file holds).
    public mutating func parseLog() -> String {
        SoundFileCalls.log(of: handle)
    }
}

// A libsndfile handle is not thread-safe: no two calls may use it at once. `SoundFile` is
// non-copyable, and every method that touches the handle is `mutating` (or runs in `deinit`), so
// the compiler's exclusivity rules allow only one access at a time, from whichever thread owns the
// value; `path` and `info` are immutable values. The virtual I/O source was handed over with
// `sending`, so nothing outside can reach it. Moving the value to another thread is therefore safe.
extension SoundFile: @unchecked Sendable {}

import CSndFile

// Reads and writes in the sample types libsndfile converts to and from natively. Floats normalised
// to -1…1 (`read(into: …Float)`) suit playback; copying a file losslessly needs the integer and
// double forms, which libsndfile passes through without scaling: `Int16` for 8- and 16-bit data,
// `Int32` (left-justified) for 24- and 32-bit data, `Double` for 64-bit floats.

extension SoundFile {
    /// Reads whole frames of 16-bit samples (`sf_readf_short`); returns the frames read, 0 at the end.
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(SoundFileError) -> Int {
        try readFrames(buffer) { handle, base, frames in sf_readf_short(handle, base, frames) }
    }

    /// Reads whole frames of left-justified 32-bit samples (`sf_readf_int`).
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Int32>) throws(SoundFileError) -> Int {
        try readFrames(buffer) { handle, base, frames in sf_readf_int(handle, base, frames) }
    }

    /// Reads whole frames of 64-bit float samples (`sf_readf_double`).
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Double>) throws(SoundFileError) -> Int {
        try readFrames(buffer) { handle, base, frames in sf_readf_double(handle, base, frames) }
    }

    private mutating func readFrames<Sample>(
        _ buffer: UnsafeMutableBufferPointer<Sample>,
        _ call: (OpaquePointer, UnsafeMutablePointer<Sample>, sf_count_t) -> sf_count_t
    ) throws(SoundFileError) -> Int {
        let channels = info.channels
        precondition(buffer.count >= channels, "a read buffer must hold at least one frame (\(channels) samples)")
        guard let base = buffer.baseAddress else { return 0 }
        let frames = call(handle, base, sf_count_t(buffer.count / channels))
        if frames < 0 || (frames == 0 && sf_error(handle) != 0) {
            var error = SoundFileCalls.error(of: handle, operation: .read, path: path, fallback: "reading failed")
            error.underlyingError = virtualIO?.firstError
            throw error
        }
        return Int(frames)
    }
}

/// A sample type `SoundFile` reads, for code generic over it (`LoopingSoundFileSource`).
protocol SoundFileSample {
    static func read(from file: inout SoundFile, into buffer: UnsafeMutableBufferPointer<Self>) throws(SoundFileError) -> Int
}

extension Float: SoundFileSample {
    static func read(from file: inout SoundFile, into buffer: UnsafeMutableBufferPointer<Float>) throws(SoundFileError) -> Int {
        try file.read(into: buffer)
    }
}

extension Int16: SoundFileSample {
    static func read(from file: inout SoundFile, into buffer: UnsafeMutableBufferPointer<Int16>) throws(SoundFileError) -> Int {
        try file.read(into: buffer)
    }
}

extension SoundFileWriter {
    /// Writes interleaved 16-bit frames (`sf_writef_short`).
    public mutating func write(_ samples: UnsafeBufferPointer<Int16>) throws(SoundFileError) {
        try writeFrames(samples) { handle, base, frames in sf_writef_short(handle, base, frames) }
    }

    /// Writes interleaved left-justified 32-bit frames (`sf_writef_int`).
    public mutating func write(_ samples: UnsafeBufferPointer<Int32>) throws(SoundFileError) {
        try writeFrames(samples) { handle, base, frames in sf_writef_int(handle, base, frames) }
    }

    /// Writes interleaved 64-bit float frames (`sf_writef_double`).
    public mutating func write(_ samples: UnsafeBufferPointer<Double>) throws(SoundFileError) {
        try writeFrames(samples) { handle, base, frames in sf_writef_double(handle, base, frames) }
    }

    /// The one write path for every sample type: checks whole frames, writes, counts, throws with
    /// libsndfile's reason when it wrote fewer frames than given.
    mutating func writeFrames<Sample>(
        _ samples: UnsafeBufferPointer<Sample>,
        _ call: (OpaquePointer, UnsafePointer<Sample>, sf_count_t) -> sf_count_t
    ) throws(SoundFileError) {
        let channels = info.channels
        precondition(samples.count % channels == 0, "write \(channels) samples per frame; got \(samples.count) samples")
        guard let handle else {
            throw SoundFileError(operation: .write, path: path, code: .noError, message: "the file is already closed")
        }
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        let frames = sf_count_t(samples.count / channels)
        let written = call(handle, base, frames)
        if written > 0 { framesWritten += Int64(written) }
        if written != frames {
            throw SoundFileCalls.error(
                of: handle, operation: .write, path: path,
                fallback: "wrote \(max(written, 0)) of \(frames) frames"
            )
        }
    }
}

extension SoundFileFormat {
    /// The same container and encoding with little-endian samples (`SF_ENDIAN_LITTLE`). For CAF,
    /// linear PCM with format flag bit 1, which Apple's tools read too; on little-endian machines
    /// libsndfile then copies samples without swapping bytes.
    public var littleEndian: SoundFileFormat {
        SoundFileFormat(rawValue: (rawValue & ~Int32(SF_FORMAT_ENDMASK)) | Int32(SF_ENDIAN_LITTLE))
    }
}

import CSndFile

/// A sound file being written through libsndfile, from interleaved `Float` frames (-1…1).
///
/// Samples outside -1…1 are clipped (`SFC_SET_CLIPPING`) rather than wrapped around when the
/// encoding is integer. Call ``close()`` to finish the header and learn whether that worked; if the
/// value just goes away, the file is closed too, but a failure then goes unreported.
public struct SoundFileWriter: ~Copyable {
    /// Where the file is written.
    public let path: String
    /// The format, rate and channels it was created with (frames: as created, 0).
    public let info: SoundFileInfo
    /// Frames written so far.
    public internal(set) var framesWritten: Int64 = 0

    var handle: OpaquePointer?

    /// Creates (or truncates) the file at `path`.
    ///
    /// - Throws: ``SoundFileError`` with ``SoundFileError/Code/unsupportedEncoding`` when libsndfile
    ///   cannot write this combination (checked with `sf_format_check` first), or when it cannot
    ///   create the file.
    public init(
        creatingAtPath path: String,
        format: SoundFileFormat,
        sampleRate: Int,
        channels: Int
    ) throws(SoundFileError) {
        var sfInfo = SF_INFO()
        sfInfo.samplerate = Int32(clamping: sampleRate)
        sfInfo.channels = Int32(clamping: channels)
        sfInfo.format = format.rawValue
        guard sampleRate > 0, channels > 0, sf_format_check(&sfInfo) != 0 else {
            throw SoundFileError(
                operation: .create,
                path: path,
                code: .unsupportedEncoding,
                message: "libsndfile cannot write \(format) at \(sampleRate) Hz with \(channels) channel(s)"
            )
        }
        let handle = try SoundFileCalls.open(path: path, operation: .create, info: &sfInfo) { info in
            sf_open(path, Int32(SFM_WRITE), &info)
        }
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        self.handle = handle
        self.path = path
        self.info = SoundFileInfo(
            frames: 0, sampleRate: sampleRate, channels: channels, format: format, isSeekable: true
        )
    }

    deinit {
        if let handle { sf_close(handle) }
    }

    /// Writes interleaved frames: `samples.count` must be a multiple of the channel count.
    public mutating func write(_ samples: UnsafeBufferPointer<Float>) throws(SoundFileError) {
        try writeFrames(samples) { handle, base, frames in sf_writef_float(handle, base, frames) }
    }

    /// Writes interleaved frames from an array.
    public mutating func write(_ samples: [Float]) throws(SoundFileError) {
        try samples.withUnsafeBufferPointer { buffer throws(SoundFileError) in try write(buffer) }
    }

    /// Finishes the header and closes the file.
    public consuming func close() throws(SoundFileError) {
        guard let handle else { return }
        self.handle = nil
        let status = sf_close(handle)
        if status != 0 {
            let code = SoundFileError.Code(rawValue: status)
            throw SoundFileError(operation: .close, path: path, code: code, message: code.description)
        }
    }
}

// Same reasoning as for `SoundFile`: the libsndfile handle is used only from `mutating`/`consuming`
// methods and `deinit` of a non-copyable value, so exclusivity guarantees one caller at a time.
extension SoundFileWriter: @unchecked Sendable {}

import Foundation
public import SnoozeFuseAudio

/// The encoding an imported sound is stored in (always CAF, which libsndfile and Apple's tools read).
///
/// Lossless input stays lossless: linear PCM keeps its bit depth (unsigned 8-bit becomes signed
/// 8-bit, an exact shift), ALAC becomes PCM of its source depth (20-bit in 24-bit), FLAC becomes PCM
/// of its depth, floats stay floats, µ-law and a-law expand exactly into 16-bit PCM. Lossy input is
/// stored as its decoder's output: ADPCM-family codecs (IMA4 included), whose decoders produce
/// 16-bit samples, as 16-bit PCM; Vorbis, Opus and MP3, whose decoders produce floats, as 32-bit
/// float, so no second rounding is added.
public enum StoredEncoding: String, Sendable, CaseIterable {
    case pcmS8, pcm16, pcm24, pcm32, float, double

    public var subtype: SoundFileSubtype {
        switch self {
        case .pcmS8: .pcmS8
        case .pcm16: .pcm16
        case .pcm24: .pcm24
        case .pcm32: .pcm32
        case .float: .float
        case .double: .double
        }
    }

    /// The sample type the copy reads and writes (and the digest hashes).
    var sampleType: String {
        switch self {
        case .pcmS8, .pcm16: "s16"
        case .pcm24, .pcm32: "s32"
        case .float: "f32"
        case .double: "f64"
        }
    }

    /// The stored encoding for a source encoding, and whether the conversion is lossless.
    public static func choose(for source: SoundFileSubtype) -> (encoding: StoredEncoding, lossless: Bool) {
        switch source {
        case .pcmS8, .pcmU8: (.pcmS8, true)
        case .pcm16, .alac16: (.pcm16, true)
        case .pcm24, .alac20, .alac24: (.pcm24, true)
        case .pcm32, .alac32: (.pcm32, true)
        case .float: (.float, true)
        case .double: (.double, true)
        case .ulaw, .alaw: (.pcm16, true)
        case .vorbis, .opus, .mpegLayerI, .mpegLayerII, .mpegLayerIII: (.float, false)
        default: (.pcm16, false)
        }
    }
}

/// Streams every frame of `input` into a new CAF file, hashing the samples on a second thread.
///
/// The copy reads a block, writes it, and hands it to the hashing thread while it reads the next
/// one (a ring of ``slots`` blocks), so SHA-256 costs no wall time when a second core is free. Every
/// ``writebackBytes`` written, it asks the kernel to start writing the file's dirty pages
/// (`sync_file_range`), so the `fsync` before the rename has little left to wait for.
enum SoundCopy {
    static let framesPerBlock = 16 * 1024
    static let slots = 4
    static let writebackBytes: Int64 = 8 << 20

    struct Result {
        var frames: Int64
        var sha256: String
        /// EBU R 128 of what was stored (nil when libebur128 cannot measure it: `loudnessFailure`).
        var loudness: SoundLoudness?
        var loudnessFailure: LoudnessError?
        /// The decoding error that ended the copy early (after at least one block), if one did.
        var decodingStopped: SoundFileError?
    }

    /// `flushDescriptor`: a descriptor of the file being written, for early writeback.
    static func copy(_ input: inout SoundFile, toCAFAt path: String, encoding: StoredEncoding,
                     flushDescriptor: Int32? = nil) throws(SoundLibraryError) -> Result {
        let info = input.info
        var writer: SoundFileWriter
        do {
            writer = try SoundFileWriter(creatingAtPath: path, format: SoundFileFormat(.caf, encoding.subtype).littleEndian,
                                         sampleRate: info.sampleRate, channels: info.channels)
        } catch {
            throw SoundLibraryError(.storage, error.description)
        }
        let hasher = try HashingThread(sampleType: encoding.sampleType, sampleRate: info.sampleRate, channels: info.channels)
        let stopped: SoundFileError?
        do throws(SoundFileError) {
            switch encoding.sampleType {
            case "s16":
                stopped = try pump(Int16.zero, &input, &writer, hasher, flushDescriptor, { (f, b) throws(SoundFileError) in try f.read(into: b) }, { (w, b) throws(SoundFileError) in try w.write(b) })
            case "s32":
                stopped = try pump(Int32.zero, &input, &writer, hasher, flushDescriptor, { (f, b) throws(SoundFileError) in try f.read(into: b) }, { (w, b) throws(SoundFileError) in try w.write(b) })
            case "f64":
                stopped = try pump(Double.zero, &input, &writer, hasher, flushDescriptor, { (f, b) throws(SoundFileError) in try f.read(into: b) }, { (w, b) throws(SoundFileError) in try w.write(b) })
            default:
                stopped = try pump(Float.zero, &input, &writer, hasher, flushDescriptor, { (f, b) throws(SoundFileError) in try f.read(into: b) }, { (w, b) throws(SoundFileError) in try w.write(b) })
            }
        } catch {
            throw SoundLibraryError(error.isBadData ? .badData : .storage, error.description)
        }
        let frames = writer.framesWritten
        do { try writer.close() } catch { throw SoundLibraryError(.storage, error.description) }
        return Result(frames: frames, sha256: hasher.digest(), loudness: hasher.loudness, loudnessFailure: hasher.loudnessFailure,
                      decodingStopped: stopped)
    }

    private static func pump<Sample>(
        _ zero: Sample,
        _ input: inout SoundFile,
        _ writer: inout SoundFileWriter,
        _ hasher: HashingThread,
        _ flushDescriptor: Int32?,
        _ read: (inout SoundFile, UnsafeMutableBufferPointer<Sample>) throws(SoundFileError) -> Int,
        _ write: (inout SoundFileWriter, UnsafeBufferPointer<Sample>) throws(SoundFileError) -> Void
    ) throws(SoundFileError) -> SoundFileError? {
        let channels = input.info.channels
        let blockSamples = framesPerBlock * channels
        let storage = UnsafeMutableBufferPointer<Sample>.allocate(capacity: blockSamples * slots)
        storage.initialize(repeating: zero)
        defer { storage.deallocate() }
        hasher.start()
        // However the loop ends, the hashing thread finishes before the buffers go away.
        defer { hasher.finish() }
        var slot = 0
        var unflushed: Int64 = 0
        var written: Int64 = 0
        while true {
            hasher.waitForFreeSlot()
            let block = UnsafeMutableBufferPointer(rebasing: storage[(slot * blockSamples)..<((slot + 1) * blockSamples)])
            let frames: Int
            do {
                frames = try read(&input, block)
            } catch where written > 0 && error.operation == .read {
                // Decoding failed after some audio (a file cut short, a damaged stream): the copy
                // holds what decoded; the caller compares it with the frames declared.
                return error
            }
            if frames == 0 { return nil }
            written += Int64(frames)
            let filled = UnsafeBufferPointer(rebasing: block[0..<(frames * channels)])
            try write(&writer, filled)
            hasher.hash(UnsafeRawBufferPointer(filled))
            slot = (slot + 1) % slots
            unflushed += Int64(filled.count * MemoryLayout<Sample>.size)
            if let flushDescriptor, unflushed >= writebackBytes {
                startWriteback(flushDescriptor)
                unflushed = 0
            }
        }
    }
}

/// A decode that ended before the frames the file declares: a file cut short (a download stopped,
/// `head -c`) or a stream that stops decoding part way.
public struct Truncation: Sendable, Equatable, CustomStringConvertible {
    /// Frames decoded before the end or the error.
    public var framesRead: Int64
    /// Frames the file's header declares (what libsndfile reports).
    public var framesDeclared: Int64
    public var sampleRate: Int
    /// The decoder's message when an error ended the decode (not a plain early end).
    public var decoderMessage: String?

    /// `truncated: read N of M frames (0.56 of 5.00 s; the decoder stopped: …)`.
    public var description: String {
        let rate = Double(max(sampleRate, 1))
        var text = "truncated: read \(framesRead) of \(framesDeclared) frames ("
            + String(format: "%.2f of %.2f s", Double(framesRead) / rate, Double(framesDeclared) / rate)
        if let decoderMessage { text += "; the decoder stopped: \(decoderMessage)" }
        return text + ")"
    }

    /// The truncation, if `read` frames fall short of `declared`. libsndfile's frame count for an
    /// MP3 without a Xing/LAME header is an estimate from the file size (off by a few hundred frames
    /// of encoder delay and padding), so an MPEG stream is let off 1 % or 4608 frames (four MP3
    /// frames), whichever is more; every other format must decode every frame it declares.
    public static func check(read: Int64, declared: Int64, format: SoundFileFormat, sampleRate: Int, stoppedBy error: SoundFileError?) -> Truncation? {
        guard declared != .max, declared > read else { return nil }
        let tolerance: Int64 = format.major == .mpeg ? max(4608, declared / 100) : 0
        guard declared - read > tolerance else { return nil }
        return Truncation(framesRead: read, framesDeclared: declared, sampleRate: sampleRate, decoderMessage: error?.message)
    }
}

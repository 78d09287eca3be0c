public import SnoozeFuseAudio
public import SnoozeFuseCAF

/// A sound file opened for decoding, repaired on the way in where libsndfile would refuse it.
public struct SoundInput: ~Copyable {
    public var file: SoundFile
    /// The CAF report, when the input is CAF.
    public let report: CAFReport?
    /// What was repaired in memory to decode it (empty when nothing was needed).
    public let repairs: [String]

    /// Opens `path`: CAF files are inspected first (our own parser, without trusting a size) and,
    /// when libsndfile cannot decode them as they are, repaired in memory if a repair applies:
    /// IMA4 re-wrapped as AIFF-C, ALAC format flags set from the bit depth, a `data` size of -1
    /// replaced by the measured size. The file is read on demand, never loaded whole.
    public init(path: String) throws(SoundLibraryError) {
        let plan = try Self.plan(path: path)
        let opened = try Self.open(path: path, plan.source)
        file = opened
        report = plan.report
        repairs = plan.repairs
    }

    private static func open(path: String, _ source: Source) throws(SoundLibraryError) -> SoundFile {
        do {
            switch source {
            case .path: return try SoundFile(readingAtPath: path)
            case .spliced(let bytes): return try SoundFile(readingFrom: bytes, name: path)
            }
        } catch {
            throw SoundLibraryError(error)
        }
    }

    private enum Source {
        case path
        case spliced(SplicedFileBytes)
    }

    private static func plan(path: String) throws(SoundLibraryError) -> (report: CAFReport?, repairs: [String], source: Source) {
        let input = try OpenInputFile(path: path)
        let magic = try input.read(at: 0, count: 4)
        guard magic == Array("caff".utf8) else { return (nil, [], .path) }
        let report = CAFInspector().inspect(FileCAFSource(file: input))
        if let error = report.errors.first {
            throw SoundLibraryError(.badData, "'\(path)' is not valid CAF: \(error). Run `snoozefuse sounds validate \(path)` for the full report, or export it again from its source.")
        }
        if report.libsndfileCanDecode { return (report, [], .path) }
        guard report.verdicts.repairable, let description = report.audioDescription, let data = report.audioData,
              let descChunk = report.chunks.first(where: { $0.type == .desc }) else {
            throw SoundLibraryError(.badData, "'\(path)' cannot be imported: \(report.verdicts.libsndfile.reason). Convert it to linear PCM (for example with ffmpeg) and import that.")
        }
        var replacements: [(offset: Int64, bytes: [UInt8])] = []
        var repairs: [String] = []
        var rewrapIMA4 = false
        for hint in report.verdicts.repairs {
            switch hint.kind {
            case .rewrapIMA4AsAIFFC:
                rewrapIMA4 = true
            case .setALACFormatFlags(let flags, let bitDepth):
                replacements.append((descChunk.bodyOffset + 12, bigEndian(UInt64(flags), count: 4)))
                if description.bitsPerChannel == 0 {
                    replacements.append((descChunk.bodyOffset + 28, bigEndian(UInt64(bitDepth), count: 4)))
                }
            case .setDataChunkSize(let size):
                replacements.append((data.chunkOffset + 4, bigEndian(UInt64(bitPattern: size), count: 8)))
            }
            repairs.append(hint.message)
        }
        if rewrapIMA4 {
            return (report, repairs, .spliced(try IMA4Rewrap.aiffc(file: input, description: description, data: data)))
        }
        return (report, repairs, .spliced(SplicedFileBytes.patching(input, replacements)))
    }
}

func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64((count - 1 - $0) * 8)) }
}

/// Apple's IMA4 packets (34 bytes per channel per 64 frames: a 2-byte preamble and 32 bytes of
/// nibbles, channels one after the other) are the same in CAF and AIFF-C. libsndfile decodes
/// `ima4` in AIFF-C but not in CAF, so the packets are framed by an AIFF-C header made in memory
/// and read from the CAF file as they are: lossless, and nothing re-encoded.
enum IMA4Rewrap {
    static func aiffc(file: OpenInputFile, description: CAFAudioDescription, data: CAFAudioData) throws(SoundLibraryError) -> SplicedFileBytes {
        let channels = Int64(description.channelsPerFrame)
        let packetBytes = 34 * channels
        let packets = data.audioByteCount / packetBytes
        let audioBytes = packets * packetBytes
        let frames = packets * 64
        guard channels > 0, channels <= Int64(Int16.max), packets > 0, audioBytes + 64 < Int64(UInt32.max),
              frames <= Int64(UInt32.max), description.sampleRate.isFinite, description.sampleRate > 0 else {
            throw SoundLibraryError(.badData, "'\(file.path)': the IMA4 audio cannot be re-wrapped (\(packets) packets of \(channels) channel(s)); it is empty or too large for AIFF-C.")
        }
        var comm: [UInt8] = []
        comm += bigEndian(UInt64(channels), count: 2)
        comm += bigEndian(UInt64(frames), count: 4)
        comm += bigEndian(16, count: 2)
        comm += extended80(description.sampleRate)
        comm += Array("ima4".utf8)
        comm += [0, 0] // empty compression name (a Pascal string) and its pad byte
        var header: [UInt8] = Array("FORM".utf8)
        let formSize = 4 + (8 + 4) + (8 + Int64(comm.count)) + (8 + 8 + audioBytes)
        header += bigEndian(UInt64(formSize), count: 4)
        header += Array("AIFC".utf8)
        header += Array("FVER".utf8) + bigEndian(4, count: 4) + bigEndian(0xA280_5140, count: 4)
        header += Array("COMM".utf8) + bigEndian(UInt64(comm.count), count: 4) + comm
        header += Array("SSND".utf8) + bigEndian(UInt64(8 + audioBytes), count: 4)
        header += bigEndian(0, count: 4) + bigEndian(0, count: 4) // offset, block size
        return SplicedFileBytes(file: file, pieces: [.bytes(header), .file(offset: data.audioStart, count: audioBytes)])
    }

    /// An IEEE 754 80-bit extended value (AIFF's sample rate), from a positive finite Double.
    static func extended80(_ value: Double) -> [UInt8] {
        let bits = value.bitPattern
        let exponent = Int((bits >> 52) & 0x7FF) - 1023 + 16383
        let mantissa = (UInt64(1) << 63) | ((bits & 0xF_FFFF_FFFF_FFFF) << 11)
        return bigEndian(UInt64(exponent), count: 2) + bigEndian(mantissa, count: 8)
    }
}

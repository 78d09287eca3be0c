/// Everything the inspector learned about one CAF file. Plain values: every field is what the file
/// says (after bounds checks), and `issues` says what is wrong with it.
public struct CAFReport: Sendable, Equatable {
    /// The length of the inspected file in bytes.
    public var fileSize: Int64
    /// Absent when the file is shorter than the 8-byte header.
    public var header: CAFFileHeader?
    /// Every chunk whose header could be read, in file order.
    public var chunks: [CAFChunk]
    /// The first `desc` chunk, when complete.
    public var audioDescription: CAFAudioDescription?
    public var audioData: CAFAudioData?
    public var packetTable: CAFPacketTable?
    public var magicCookie: CAFMagicCookie?
    public var channelLayout: CAFChannelLayout?
    /// The `info` chunk's string pairs, in file order.
    public var info: [CAFInfoEntry]
    /// Absent when it cannot be computed (no `desc`, no `data`, variable packets without `pakt` …).
    public var duration: CAFDuration?
    /// Errors and warnings, ordered by byte offset.
    public var issues: [CAFIssue]
    /// Verdicts computed from the fields above.
    public var verdicts: CAFVerdicts

    public var errors: [CAFIssue] { issues.filter { $0.severity == .error } }
    public var warnings: [CAFIssue] { issues.filter { $0.severity == .warning } }
    public var isValid: Bool { !issues.contains { $0.severity == .error } }
    public var libsndfileCanDecode: Bool { verdicts.libsndfile.canDecode }
}

/// The 8-byte file header: `caff`, version, flags.
public struct CAFFileHeader: Sendable, Equatable {
    public var fileType: CAFFourCC
    public var version: UInt16
    public var flags: UInt16
}

/// One chunk header as found in the file.
public struct CAFChunk: Sendable, Equatable {
    public var type: CAFFourCC
    /// Offset of the 12-byte chunk header.
    public var offset: Int64
    /// The size field as written (may be -1 for a trailing `data` chunk, or wrong).
    public var declaredSize: Int64
    /// The body bytes actually present: the declared size, measured to the end of the file for a
    /// `data` size of -1, or clipped to the end of the file when the size runs past it.
    public var bodySize: Int64

    public var bodyOffset: Int64 { offset + 12 }
}

/// The `desc` chunk (Apple's `CAFAudioFormat`).
public struct CAFAudioDescription: Sendable, Equatable {
    public var sampleRate: Double
    public var formatID: CAFFourCC
    public var formatFlags: UInt32
    public var bytesPerPacket: UInt32
    public var framesPerPacket: UInt32
    public var channelsPerFrame: UInt32
    public var bitsPerChannel: UInt32

    /// `lpcm` flag bit 0.
    public static let linearPCMIsFloat: UInt32 = 1 << 0
    /// `lpcm` flag bit 1.
    public static let linearPCMIsLittleEndian: UInt32 = 1 << 1

    /// Packets differ in size or in frame count, so a `pakt` chunk describes them.
    public var hasVariablePackets: Bool { bytesPerPacket == 0 || framesPerPacket == 0 }

    /// Compares the sample rate bit for bit, so a description read from a file with a NaN rate
    /// still equals itself (and so does the report holding it).
    public static func == (lhs: CAFAudioDescription, rhs: CAFAudioDescription) -> Bool {
        lhs.sampleRate.bitPattern == rhs.sampleRate.bitPattern && lhs.formatID == rhs.formatID
            && lhs.formatFlags == rhs.formatFlags && lhs.bytesPerPacket == rhs.bytesPerPacket
            && lhs.framesPerPacket == rhs.framesPerPacket && lhs.channelsPerFrame == rhs.channelsPerFrame
            && lhs.bitsPerChannel == rhs.bitsPerChannel
    }
}

/// The `data` chunk.
public struct CAFAudioData: Sendable, Equatable {
    public var chunkOffset: Int64
    public var editCount: UInt32
    /// First byte of audio (after the edit count).
    public var audioStart: Int64
    /// One past the last byte of audio.
    public var audioEnd: Int64
    /// The chunk size was written as -1 and the audio was measured to the end of the file.
    public var sizeWasUnknown: Bool

    public var audioByteCount: Int64 { audioEnd - audioStart }
}

/// The `pakt` chunk header plus what its entries add up to.
public struct CAFPacketTable: Sendable, Equatable {
    public var chunkOffset: Int64
    public var numberOfPackets: Int64
    public var numberOfValidFrames: Int64
    public var primingFrames: Int32
    public var remainderFrames: Int32
    /// Packets whose entries were read completely.
    public var packetsRead: Int64
    /// Sum of the per-packet byte sizes (only when bytes per packet is variable).
    public var totalPacketBytes: Int64?
    /// Sum of the per-packet frame counts (only when frames per packet is variable).
    public var totalPacketFrames: Int64?
}

/// The `kuki` chunk: opaque codec data; for ALAC its `ALACSpecificConfig` is decoded.
public struct CAFMagicCookie: Sendable, Equatable {
    public var chunkOffset: Int64
    public var byteCount: Int64
    public var alac: CAFALACConfig?
}

/// The fields of an ALAC magic cookie that matter for repairs and checks.
public struct CAFALACConfig: Sendable, Equatable {
    public var frameLength: UInt32
    public var bitDepth: UInt8
    public var channels: UInt8
    public var sampleRate: UInt32
}

/// The `chan` chunk header.
public struct CAFChannelLayout: Sendable, Equatable {
    public var chunkOffset: Int64
    public var layoutTag: UInt32
    public var channelBitmap: UInt32
    public var numberOfDescriptions: UInt32
}

/// One key/value pair of the `info` chunk.
public struct CAFInfoEntry: Sendable, Equatable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// How long the audio plays.
public struct CAFDuration: Sendable, Equatable {
    public enum Source: String, Sendable, Equatable {
        /// `pakt` valid frames (variable packet formats).
        case packetTable
        /// Audio bytes / bytes per packet × frames per packet (constant packet formats).
        case dataSize
    }

    public var frames: Int64
    public var seconds: Double
    public var source: Source
}

/// One problem found in a CAF file, with the byte offset it concerns.
public struct CAFIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable, Equatable {
        /// The file is not valid CAF, or cannot be read reliably.
        case error
        /// The file is readable but unusual, or needs care (some readers reject it).
        case warning
    }

    public var severity: Severity
    /// A stable code for programs and tests; `message` is for people.
    public var code: CAFIssueCode
    /// The absolute byte offset of the field or chunk concerned.
    public var offset: Int64
    /// What is wrong and, where possible, what to do about it.
    public var message: String

    public init(severity: Severity, code: CAFIssueCode, offset: Int64, message: String) {
        self.severity = severity
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(severity) \(code.rawValue) at byte \(offset): \(message)" }
}

/// Stable identifiers of everything the inspector reports.
public enum CAFIssueCode: String, Sendable, Equatable, CaseIterable {
    // File header.
    case truncatedFileHeader
    case notCAF
    case unsupportedVersion
    case nonZeroFileFlags

    // Chunk walk.
    case negativeChunkSize
    case chunkPastEndOfFile
    case readFailed
    case duplicateChunk
    case trailingBytes

    // `desc`.
    case missingDescription
    case descriptionNotFirst
    case descriptionTooSmall
    case descriptionLargerThanExpected
    case invalidSampleRate
    case zeroChannels
    case zeroBitsPerChannel
    case inconsistentBytesPerPacket
    case inconsistentFramesPerPacket
    case unknownFormatFlags

    // `data`.
    case missingData
    case dataChunkTooSmall
    case dataSizeUnknown
    case partialPacket

    // `pakt`.
    case missingPacketTable
    case packetTableTooSmall
    case packetTableNegativeField
    case packetTableTruncated
    case packetTableBadEntry
    case packetTableByteCountMismatch
    case packetTableFrameCountMismatch

    // `kuki`, `chan`, `info`.
    case magicCookieUnreadable
    case channelLayoutTooSmall
    case channelLayoutChannelMismatch
    case infoTooSmall
    case infoEntryCountMismatch
    case chunkNotRead
}

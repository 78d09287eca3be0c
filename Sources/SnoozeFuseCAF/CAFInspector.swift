/// Parses the chunk structure of a Core Audio Format file without trusting any size in it.
///
/// Every read is bounds-checked against the real file length; a size that is negative, huge,
/// overflowing or past the end of the file becomes an issue in the report, never a crash or a large
/// allocation. Memory use is bounded: `data`, `free` and unknown chunks are skipped by offset, the
/// packet table is read in fixed-size blocks, and `info`/`chan` bodies larger than
/// `maxMetadataChunkBytes` are not read. So a `CAFByteSource` backed by `pread` inspects a
/// multi-gigabyte file while holding only a few kilobytes.
public struct CAFInspector: Sendable {
    /// `info` and `chan` chunks larger than this are reported (`chunkNotRead`) instead of read.
    public var maxMetadataChunkBytes: Int

    public init(maxMetadataChunkBytes: Int = 1 << 20) {
        self.maxMetadataChunkBytes = max(0, maxMetadataChunkBytes)
    }

    public func inspect(_ bytes: [UInt8]) -> CAFReport {
        inspect(CAFMemorySource(bytes))
    }

    public func inspect(_ buffer: UnsafeRawBufferPointer) -> CAFReport {
        inspect(CAFRawBufferSource(buffer: buffer))
    }

    public func inspect<Source: CAFByteSource>(_ source: Source) -> CAFReport {
        var parser = CAFParser(source: source, maxMetadataChunkBytes: maxMetadataChunkBytes)
        return parser.run()
    }
}

/// Reads big-endian fields from a byte array; every read returns nil instead of running past the end.
struct CAFFieldReader {
    let bytes: [UInt8]
    var position: Int = 0

    init(_ bytes: [UInt8], position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var remaining: Int { bytes.count - position }

    mutating func uint(byteCount: Int) -> UInt64? {
        guard byteCount >= 0, position >= 0, byteCount <= remaining else { return nil }
        var value: UInt64 = 0
        for index in position..<(position + byteCount) { value = value << 8 | UInt64(bytes[index]) }
        position += byteCount
        return value
    }

    mutating func u8() -> UInt8? { uint(byteCount: 1).map { UInt8(truncatingIfNeeded: $0) } }
    mutating func u16() -> UInt16? { uint(byteCount: 2).map { UInt16(truncatingIfNeeded: $0) } }
    mutating func u32() -> UInt32? { uint(byteCount: 4).map { UInt32(truncatingIfNeeded: $0) } }
    mutating func i32() -> Int32? { u32().map { Int32(bitPattern: $0) } }
    mutating func u64() -> UInt64? { uint(byteCount: 8) }
    mutating func i64() -> Int64? { u64().map { Int64(bitPattern: $0) } }
    mutating func fourCC() -> CAFFourCC? { u32().map { CAFFourCC(rawValue: $0) } }

    /// Bytes up to the next NUL (which is consumed), or nil when no NUL is left.
    mutating func cString() -> [UInt8]? {
        guard position >= 0, position < bytes.count,
              let end = bytes[position...].firstIndex(of: 0) else { return nil }
        let text = Array(bytes[position..<end])
        position = end + 1
        return text
    }
}

/// Streams the bytes of a region of the source in fixed-size blocks.
struct CAFBlockStream<Source: CAFByteSource> {
    static var blockSize: Int { 64 * 1024 }

    let source: Source
    /// Absolute offset of the next byte.
    private(set) var position: Int64
    let end: Int64
    private var block: [UInt8] = []
    private var index = 0
    private(set) var failed = false

    init(source: Source, start: Int64, end: Int64) {
        self.source = source
        self.position = start
        self.end = max(start, end)
    }

    mutating func next() -> UInt8? {
        if index == block.count {
            guard position < end, !failed else { return nil }
            let wanted = Int(min(Int64(Self.blockSize), end - position))
            guard let bytes = try? source.read(at: position, count: wanted), !bytes.isEmpty else {
                failed = true
                return nil
            }
            block = bytes.count > wanted ? Array(bytes[0..<wanted]) : bytes
            index = 0
        }
        let byte = block[index]
        index += 1
        position += 1
        return byte
    }
}

/// One packet table entry, or the issue that stopped reading.
enum CAFEntryResult {
    case success(Int64)
    case failure(CAFIssue)
}

struct CAFParser<Source: CAFByteSource> {
    let source: Source
    let fileSize: Int64
    let maxMetadataChunkBytes: Int

    var issues: [CAFIssue] = []
    var header: CAFFileHeader?
    var chunks: [CAFChunk] = []
    var description: CAFAudioDescription?
    var data: CAFAudioData?
    var packetTable: CAFPacketTable?
    var cookie: CAFMagicCookie?
    var channelLayout: CAFChannelLayout?
    var info: [CAFInfoEntry] = []

    init(source: Source, maxMetadataChunkBytes: Int) {
        self.source = source
        self.fileSize = max(0, source.byteCount)
        self.maxMetadataChunkBytes = maxMetadataChunkBytes
    }

    // MARK: Reporting

    mutating func error(_ code: CAFIssueCode, at offset: Int64, _ message: String) {
        issues.append(CAFIssue(severity: .error, code: code, offset: offset, message: message))
    }

    mutating func warning(_ code: CAFIssueCode, at offset: Int64, _ message: String) {
        issues.append(CAFIssue(severity: .warning, code: code, offset: offset, message: message))
    }

    /// Exactly `count` bytes at `offset`, which the caller has checked lie inside the file; a short or
    /// failed read is reported.
    mutating func read(at offset: Int64, count: Int) -> [UInt8]? {
        do {
            let bytes = try source.read(at: offset, count: count)
            if bytes.count >= count { return bytes.count == count ? bytes : Array(bytes[0..<count]) }
            error(.readFailed, at: offset,
                  "reading \(count) bytes returned only \(bytes.count); the file changed or cannot be read")
        } catch {
            self.error(.readFailed, at: offset, "reading \(count) bytes failed: \(error)")
        }
        return nil
    }

    // MARK: Top level

    mutating func run() -> CAFReport {
        if readHeader() {
            walkChunks()
            checkChunkOrder()
            if let chunk = first(.desc) { parseDescription(chunk) }
            if let chunk = first(.data) { parseData(chunk) }
            if let chunk = first(.pakt) { parsePacketTable(chunk) }
            if let chunk = first(.kuki) { parseCookie(chunk) }
            if let chunk = first(.chan) { parseChannelLayout(chunk) }
            if let chunk = first(.info) { parseInfo(chunk) }
            checkRequiredChunks()
        }
        let duration = computeDuration()
        // Order by offset, keeping discovery order for equal offsets.
        let ordered = issues.enumerated()
            .sorted { ($0.element.offset, $0.offset) < ($1.element.offset, $1.offset) }
            .map(\.element)
        return CAFReport(
            fileSize: fileSize, header: header, chunks: chunks, audioDescription: description,
            audioData: data, packetTable: packetTable, magicCookie: cookie,
            channelLayout: channelLayout, info: info, duration: duration, issues: ordered,
            verdicts: .compute(description: description, data: data, cookie: cookie,
                               duration: duration, issues: ordered))
    }

    func first(_ type: CAFFourCC) -> CAFChunk? { chunks.first { $0.type == type } }

    /// Returns whether the chunks after the header can be trusted enough to walk.
    mutating func readHeader() -> Bool {
        guard fileSize >= 8 else {
            error(.truncatedFileHeader, at: 0,
                  "the file is \(fileSize) bytes; a CAF file starts with an 8-byte header ('caff', version, flags)")
            return false
        }
        guard let bytes = read(at: 0, count: 8) else { return false }
        var reader = CAFFieldReader(bytes)
        guard let type = reader.fourCC(), let version = reader.u16(), let flags = reader.u16() else { return false }
        header = CAFFileHeader(fileType: type, version: version, flags: flags)
        guard type == .caff else {
            error(.notCAF, at: 0,
                  "the file starts with '\(type)', not 'caff'; it is not a CAF file (check its real format, e.g. with ffprobe)")
            return false
        }
        guard version == 1 else {
            error(.unsupportedVersion, at: 4,
                  "CAF version \(version); only version 1 exists, so the chunks cannot be trusted. Re-export the file as CAF version 1")
            return false
        }
        if flags != 0 {
            warning(.nonZeroFileFlags, at: 6, "the file flags are \(flags); CAF version 1 defines none and they should be 0")
        }
        return true
    }

    mutating func walkChunks() {
        var offset: Int64 = 8
        while offset < fileSize {
            let remaining = fileSize - offset
            guard remaining >= 12 else {
                warning(.trailingBytes, at: offset,
                        "\(remaining) bytes after the last chunk are too few for a 12-byte chunk header; they are ignored")
                return
            }
            guard let bytes = read(at: offset, count: 12) else { return }
            var reader = CAFFieldReader(bytes)
            guard let type = reader.fourCC(), let size = reader.i64() else { return }
            let bodyOffset = offset + 12
            let available = fileSize - bodyOffset

            if size == -1 && type == .data {
                chunks.append(CAFChunk(type: type, offset: offset, declaredSize: size, bodySize: available))
                warning(.dataSizeUnknown, at: offset + 4,
                        "the data chunk size is -1 (written while streaming); the audio was measured to the end of the file (\(available) bytes). Write the real size to make the file portable")
                return
            }
            guard size >= 0 else {
                error(.negativeChunkSize, at: offset + 4,
                      "the '\(type)' chunk declares size \(size); sizes cannot be negative (only a last data chunk may use -1). The file is corrupt: re-export it")
                return
            }
            guard size <= available else {
                chunks.append(CAFChunk(type: type, offset: offset, declaredSize: size, bodySize: available))
                error(.chunkPastEndOfFile, at: offset + 4,
                      "the '\(type)' chunk declares \(size) bytes but only \(available) remain in the file; it is truncated or the size is corrupt. Re-export or re-download it")
                return
            }
            chunks.append(CAFChunk(type: type, offset: offset, declaredSize: size, bodySize: size))
            offset = bodyOffset + size  // cannot overflow: size <= fileSize - bodyOffset
        }
    }

    mutating func checkChunkOrder() {
        if let firstChunk = chunks.first, firstChunk.type != .desc, chunks.contains(where: { $0.type == .desc }) {
            error(.descriptionNotFirst, at: firstChunk.offset,
                  "the first chunk is '\(firstChunk.type)'; CAF requires 'desc' first. Re-mux the file so 'desc' follows the header")
        }
        var seen: Set<CAFFourCC> = []
        for chunk in chunks where [.desc, .data, .pakt, .kuki, .chan, .info].contains(chunk.type) {
            if seen.insert(chunk.type).inserted { continue }
            let message = "a second '\(chunk.type)' chunk; a CAF file has at most one, and only the first is used"
            if [.desc, .data, .pakt].contains(chunk.type) {
                error(.duplicateChunk, at: chunk.offset, message)
            } else {
                warning(.duplicateChunk, at: chunk.offset, message)
            }
        }
    }

    mutating func checkRequiredChunks() {
        if !chunks.contains(where: { $0.type == .desc }) {
            error(.missingDescription, at: chunks.first?.offset ?? 8,
                  "no 'desc' chunk; without the audio description the file cannot be decoded")
        }
        if !chunks.contains(where: { $0.type == .data }) {
            error(.missingData, at: fileSize, "no 'data' chunk; the file holds no audio (it may be truncated)")
        }
        if let description, description.hasVariablePackets, !chunks.contains(where: { $0.type == .pakt }),
           let descChunk = first(.desc) {
            let field = description.bytesPerPacket == 0 ? "bytes" : "frames"
            error(.missingPacketTable, at: descChunk.bodyOffset + (description.bytesPerPacket == 0 ? 16 : 20),
                  "\(field) per packet is 0 (variable) but there is no 'pakt' chunk, so the packets cannot be located. Re-export the file")
        }
    }

    // MARK: desc

    mutating func parseDescription(_ chunk: CAFChunk) {
        guard chunk.bodySize >= 32 else {
            error(.descriptionTooSmall, at: chunk.offset + 4,
                  "the 'desc' chunk is \(chunk.bodySize) bytes; it must be 32")
            return
        }
        if chunk.declaredSize > 32 {
            warning(.descriptionLargerThanExpected, at: chunk.offset + 4,
                    "the 'desc' chunk is \(chunk.declaredSize) bytes; it should be 32 (the rest is ignored)")
        }
        guard let bytes = read(at: chunk.bodyOffset, count: 32) else { return }
        var reader = CAFFieldReader(bytes)
        guard let rate = reader.u64(), let id = reader.fourCC(), let flags = reader.u32(),
              let bytesPerPacket = reader.u32(), let framesPerPacket = reader.u32(),
              let channels = reader.u32(), let bits = reader.u32() else { return }
        let desc = CAFAudioDescription(
            sampleRate: Double(bitPattern: rate), formatID: id, formatFlags: flags,
            bytesPerPacket: bytesPerPacket, framesPerPacket: framesPerPacket,
            channelsPerFrame: channels, bitsPerChannel: bits)
        description = desc
        validate(desc, at: chunk.bodyOffset)
    }

    mutating func validate(_ desc: CAFAudioDescription, at base: Int64) {
        if !Self.isUsable(sampleRate: desc.sampleRate) {
            error(.invalidSampleRate, at: base,
                  "the sample rate is \(desc.sampleRate); it must be a finite number of at least 1 frame per second")
        }
        if desc.channelsPerFrame == 0 {
            error(.zeroChannels, at: base + 24, "the file declares 0 channels; it needs at least 1")
        }
        let channels = UInt64(desc.channelsPerFrame)
        func checkConstantPackets(bytes expectedBytes: UInt64, frames expectedFrames: UInt32, what: String) {
            if channels > 0, UInt64(desc.bytesPerPacket) != expectedBytes {
                error(.inconsistentBytesPerPacket, at: base + 16,
                      "bytes per packet is \(desc.bytesPerPacket) but \(what) take \(expectedBytes); the description is corrupt")
            }
            if desc.framesPerPacket != expectedFrames {
                error(.inconsistentFramesPerPacket, at: base + 20,
                      "frames per packet is \(desc.framesPerPacket); '\(desc.formatID)' has \(expectedFrames)")
            }
        }
        switch desc.formatID {
        case .linearPCM:
            let known = CAFAudioDescription.linearPCMIsFloat | CAFAudioDescription.linearPCMIsLittleEndian
            if desc.formatFlags & ~known != 0 {
                warning(.unknownFormatFlags, at: base + 12,
                        "linear PCM format flags \(desc.formatFlags) set bits other than float (1) and little-endian (2); they are ignored")
            }
            guard desc.bitsPerChannel > 0 else {
                error(.zeroBitsPerChannel, at: base + 28, "linear PCM with 0 bits per channel")
                return
            }
            let sampleBytes = (UInt64(desc.bitsPerChannel) + 7) / 8
            let label = desc.channelsPerFrame == 1 ? "1 channel" : "\(channels) channels"
            checkConstantPackets(bytes: channels * sampleBytes,
                                 frames: 1, what: "\(label) of \(desc.bitsPerChannel)-bit samples")
        case .uLaw, .aLaw:
            checkConstantPackets(bytes: channels, frames: 1, what: "\(channels) channel(s) of 8-bit samples")
        case .appleIMA4:
            checkConstantPackets(bytes: channels * 34, frames: 64, what: "\(channels) channel(s) of 34-byte IMA4 blocks")
        default:
            break
        }
    }

    // MARK: data

    mutating func parseData(_ chunk: CAFChunk) {
        guard chunk.bodySize >= 4 else {
            error(.dataChunkTooSmall, at: chunk.offset + 4,
                  "the data chunk is \(chunk.bodySize) bytes; it needs at least 4 for the edit count")
            return
        }
        guard let bytes = read(at: chunk.bodyOffset, count: 4) else { return }
        var reader = CAFFieldReader(bytes)
        guard let edits = reader.u32() else { return }
        let audio = CAFAudioData(
            chunkOffset: chunk.offset, editCount: edits, audioStart: chunk.bodyOffset + 4,
            audioEnd: chunk.bodyOffset + chunk.bodySize, sizeWasUnknown: chunk.declaredSize == -1)
        data = audio
        if let description, description.bytesPerPacket > 0, description.framesPerPacket > 0 {
            let packetBytes = Int64(description.bytesPerPacket)
            let partial = audio.audioByteCount % packetBytes
            if partial != 0 {
                warning(.partialPacket, at: audio.audioEnd - partial,
                        "the audio ends with \(partial) bytes of an incomplete \(packetBytes)-byte packet; they are ignored")
            }
        }
    }

    // MARK: pakt

    mutating func parsePacketTable(_ chunk: CAFChunk) {
        guard chunk.bodySize >= 24 else {
            error(.packetTableTooSmall, at: chunk.offset + 4,
                  "the 'pakt' chunk is \(chunk.bodySize) bytes; its header alone needs 24")
            return
        }
        guard let bytes = read(at: chunk.bodyOffset, count: 24) else { return }
        var reader = CAFFieldReader(bytes)
        guard let packets = reader.i64(), let valid = reader.i64(), let priming = reader.i32(),
              let remainder = reader.i32() else { return }
        var table = CAFPacketTable(
            chunkOffset: chunk.offset, numberOfPackets: packets, numberOfValidFrames: valid,
            primingFrames: priming, remainderFrames: remainder, packetsRead: 0,
            totalPacketBytes: nil, totalPacketFrames: nil)
        let base = chunk.bodyOffset
        var negative = false
        for (value, offset, name) in [(packets, base, "number of packets"), (valid, base + 8, "number of valid frames"),
                                      (Int64(priming), base + 16, "priming frames"),
                                      (Int64(remainder), base + 20, "remainder frames")] where value < 0 {
            error(.packetTableNegativeField, at: offset, "the packet table's \(name) is \(value); it cannot be negative")
            negative = true
        }
        defer { packetTable = table }
        guard !negative, let description else { return }

        if description.framesPerPacket > 0 {
            let (expected, overflow) = packets.multipliedReportingOverflow(by: Int64(description.framesPerPacket))
            let (sum1, o1) = valid.addingReportingOverflow(Int64(priming))
            let (sum, o2) = sum1.addingReportingOverflow(Int64(remainder))
            if overflow || o1 || o2 || expected != sum {
                warning(.packetTableFrameCountMismatch, at: base + 8,
                        "valid (\(valid)) + priming (\(priming)) + remainder (\(remainder)) frames should equal \(packets) packets × \(description.framesPerPacket) frames")
            }
        }
        guard description.hasVariablePackets else { return }
        readPacketEntries(into: &table, chunk: chunk, description: description)
    }

    mutating func readPacketEntries(into table: inout CAFPacketTable, chunk: CAFChunk, description: CAFAudioDescription) {
        let sizesVary = description.bytesPerPacket == 0
        let framesVary = description.framesPerPacket == 0
        var stream = CAFBlockStream(source: source, start: chunk.bodyOffset + 24, end: chunk.bodyOffset + chunk.bodySize)
        var totalBytes: Int64 = 0
        var totalFrames: Int64 = 0
        var packetsRead: Int64 = 0

        /// One variable-length integer: 7 bits per byte, most significant first, high bit = more.
        func nextEntry(_ stream: inout CAFBlockStream<Source>) -> CAFEntryResult {
            let start = stream.position
            var value: Int64 = 0
            for _ in 0..<9 {  // 9 × 7 = 63 bits: the most an Int64 entry can need
                guard let byte = stream.next() else {
                    return .failure(CAFIssue(
                        severity: .error, code: .packetTableTruncated, offset: start,
                        message: "the packet table lists \(table.numberOfPackets) packets but its entries end after \(packetsRead); the file is truncated or corrupt"))
                }
                value = value << 7 | Int64(byte & 0x7F)
                if byte & 0x80 == 0 { return .success(value) }
            }
            return .failure(CAFIssue(
                severity: .error, code: .packetTableBadEntry, offset: start,
                message: "a packet table entry is longer than 9 bytes (more than 63 bits); the table is corrupt"))
        }

        while packetsRead < table.numberOfPackets {
            var failure: CAFIssue?
            if sizesVary {
                switch nextEntry(&stream) {
                case .success(let size):
                    let (sum, overflow) = totalBytes.addingReportingOverflow(size)
                    if overflow {
                        failure = CAFIssue(severity: .error, code: .packetTableBadEntry, offset: stream.position,
                                           message: "packet sizes add up to more than 2^63 bytes; the table is corrupt")
                    } else { totalBytes = sum }
                case .failure(let issue): failure = issue
                }
            }
            if failure == nil, framesVary {
                switch nextEntry(&stream) {
                case .success(let frames):
                    let (sum, overflow) = totalFrames.addingReportingOverflow(frames)
                    if overflow {
                        failure = CAFIssue(severity: .error, code: .packetTableBadEntry, offset: stream.position,
                                           message: "packet frame counts add up to more than 2^63; the table is corrupt")
                    } else { totalFrames = sum }
                case .failure(let issue): failure = issue
                }
            }
            if var failure {
                if stream.failed {
                    failure = CAFIssue(severity: .error, code: .readFailed, offset: stream.position,
                                       message: "reading the packet table failed; the file changed or cannot be read")
                }
                issues.append(failure)
                break
            }
            packetsRead += 1
        }
        table.packetsRead = packetsRead
        guard packetsRead == table.numberOfPackets else { return }
        if sizesVary {
            table.totalPacketBytes = totalBytes
            if let data, data.audioByteCount != totalBytes {
                warning(.packetTableByteCountMismatch, at: chunk.bodyOffset,
                        "the packet table's sizes add up to \(totalBytes) bytes but the data chunk holds \(data.audioByteCount)")
            }
        }
        if framesVary {
            table.totalPacketFrames = totalFrames
            let described = table.numberOfValidFrames + Int64(table.primingFrames) + Int64(table.remainderFrames)
            if described != totalFrames {
                warning(.packetTableFrameCountMismatch, at: chunk.bodyOffset + 8,
                        "the packet table's frame counts add up to \(totalFrames) but valid + priming + remainder is \(described)")
            }
        }
    }

    // MARK: kuki, chan, info

    mutating func parseCookie(_ chunk: CAFChunk) {
        var magic = CAFMagicCookie(chunkOffset: chunk.offset, byteCount: chunk.bodySize, alac: nil)
        defer { cookie = magic }
        guard description?.formatID == .appleLossless else { return }
        let count = Int(min(chunk.bodySize, 96))
        guard let bytes = read(at: chunk.bodyOffset, count: count) else { return }
        magic.alac = Self.alacConfig(in: bytes)
        if magic.alac == nil {
            warning(.magicCookieUnreadable, at: chunk.bodyOffset,
                    "the ALAC magic cookie (\(chunk.bodySize) bytes) holds no readable ALACSpecificConfig")
        }
    }

    /// The 24-byte `ALACSpecificConfig`, bare or inside `frma`/`alac` atoms (as ffmpeg writes it).
    static func alacConfig(in bytes: [UInt8]) -> CAFALACConfig? {
        var atoms = CAFFieldReader(bytes)
        var start = 0
        if let size = atoms.u32(), let type = atoms.fourCC() {
            if type == CAFFourCC("frma"), size >= 8, Int(size) <= bytes.count - 8 {
                var inner = CAFFieldReader(bytes, position: Int(size))
                if inner.u32() != nil, inner.fourCC() == .appleLossless { start = Int(size) + 12 }
            } else if type == .appleLossless {
                start = 12
            }
        }
        var reader = CAFFieldReader(bytes, position: start)
        guard let frameLength = reader.u32(), reader.u8() != nil, let depth = reader.u8(),
              reader.u8() != nil, reader.u8() != nil, reader.u8() != nil, let channels = reader.u8(),
              reader.u16() != nil, reader.u32() != nil, reader.u32() != nil, let rate = reader.u32()
        else { return nil }
        return CAFALACConfig(frameLength: frameLength, bitDepth: depth, channels: channels, sampleRate: rate)
    }

    mutating func parseChannelLayout(_ chunk: CAFChunk) {
        guard chunk.bodySize >= 12 else {
            warning(.channelLayoutTooSmall, at: chunk.offset + 4,
                    "the 'chan' chunk is \(chunk.bodySize) bytes; its header needs 12 (the layout is ignored)")
            return
        }
        guard let bytes = read(at: chunk.bodyOffset, count: 12) else { return }
        var reader = CAFFieldReader(bytes)
        guard let tag = reader.u32(), let bitmap = reader.u32(), let count = reader.u32() else { return }
        channelLayout = CAFChannelLayout(chunkOffset: chunk.offset, layoutTag: tag, channelBitmap: bitmap,
                                         numberOfDescriptions: count)
        let needed = 12 + 20 * Int64(count)  // at most 12 + 20 × (2^32 - 1): no overflow
        if needed > chunk.bodySize {
            warning(.channelLayoutTooSmall, at: chunk.bodyOffset + 8,
                    "the channel layout lists \(count) channel descriptions (\(needed) bytes) but the chunk holds \(chunk.bodySize)")
        }
        let useDescriptions: UInt32 = 0
        let useBitmap: UInt32 = 1 << 16
        let layoutChannels: UInt32 = switch tag {
        case useDescriptions: count
        case useBitmap: UInt32(bitmap.nonzeroBitCount)
        default: tag & 0xFFFF
        }
        if let description, description.channelsPerFrame != 0, layoutChannels != description.channelsPerFrame {
            warning(.channelLayoutChannelMismatch, at: chunk.bodyOffset,
                    "the channel layout describes \(layoutChannels) channels but the description says \(description.channelsPerFrame)")
        }
    }

    mutating func parseInfo(_ chunk: CAFChunk) {
        guard chunk.bodySize >= 4 else {
            warning(.infoTooSmall, at: chunk.offset + 4,
                    "the 'info' chunk is \(chunk.bodySize) bytes; it needs 4 for the entry count (ignored)")
            return
        }
        guard chunk.bodySize <= Int64(maxMetadataChunkBytes) else {
            warning(.chunkNotRead, at: chunk.offset,
                    "the 'info' chunk is \(chunk.bodySize) bytes, more than the \(maxMetadataChunkBytes) read for metadata; it was skipped")
            return
        }
        guard let bytes = read(at: chunk.bodyOffset, count: Int(chunk.bodySize)) else { return }
        guard let (entries, declared) = CAFInfoChunk.decode(body: bytes) else { return }
        info += entries
        let found = UInt32(entries.count)
        if found != declared {
            warning(.infoEntryCountMismatch, at: chunk.bodyOffset,
                    "the 'info' chunk declares \(declared) entries but holds \(found) complete key/value pairs")
        }
    }

    // MARK: Duration

    /// At least 1 Hz keeps every duration finite (frames < 2^63).
    static func isUsable(sampleRate: Double) -> Bool { sampleRate.isFinite && sampleRate >= 1 }

    func computeDuration() -> CAFDuration? {
        guard let description, Self.isUsable(sampleRate: description.sampleRate) else { return nil }
        let frames: Int64
        let source: CAFDuration.Source
        if !description.hasVariablePackets {
            guard let data else { return nil }
            let packets = data.audioByteCount / Int64(description.bytesPerPacket)
            let (product, overflow) = packets.multipliedReportingOverflow(by: Int64(description.framesPerPacket))
            guard !overflow else { return nil }
            frames = product
            source = .dataSize
        } else {
            guard let packetTable, packetTable.numberOfValidFrames >= 0 else { return nil }
            frames = packetTable.numberOfValidFrames
            source = .packetTable
        }
        return CAFDuration(frames: frames, seconds: Double(frames) / description.sampleRate, source: source)
    }
}

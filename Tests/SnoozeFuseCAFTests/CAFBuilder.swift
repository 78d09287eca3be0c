import SnoozeFuseCAF

/// Builds CAF files byte by byte, so tests can write exactly the broken structure they need.
struct CAFBuilder {
    var bytes: [UInt8] = []

    static func header(type: String = "caff", version: UInt16 = 1, flags: UInt16 = 0) -> CAFBuilder {
        var builder = CAFBuilder()
        builder.append(fourCC: type)
        builder.append(version)
        builder.append(flags)
        return builder
    }

    mutating func append(fourCC: String) { bytes += Array(fourCC.utf8) }
    mutating func append(_ value: UInt16) { appendBigEndian(UInt64(value), byteCount: 2) }
    mutating func append(_ value: UInt32) { appendBigEndian(UInt64(value), byteCount: 4) }
    mutating func append(_ value: Int32) { append(UInt32(bitPattern: value)) }
    mutating func append(_ value: Int64) { appendBigEndian(UInt64(bitPattern: value), byteCount: 8) }
    mutating func append(_ value: Double) { appendBigEndian(value.bitPattern, byteCount: 8) }

    private mutating func appendBigEndian(_ value: UInt64, byteCount: Int) {
        for index in stride(from: byteCount - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(index * 8)))
        }
    }

    /// A chunk whose size field is `size` (default: the body's real length).
    mutating func chunk(_ type: String, _ body: [UInt8], size: Int64? = nil) {
        append(fourCC: type)
        append(size ?? Int64(body.count))
        bytes += body
    }

    mutating func desc(
        sampleRate: Double = 8000, format: String = "lpcm", flags: UInt32 = 0, bytesPerPacket: UInt32 = 4,
        framesPerPacket: UInt32 = 1, channels: UInt32 = 2, bits: UInt32 = 16
    ) {
        var body = CAFBuilder()
        body.append(sampleRate)
        body.append(fourCC: format)
        for field in [flags, bytesPerPacket, framesPerPacket, channels, bits] { body.append(field) }
        chunk("desc", body.bytes)
    }

    /// A `data` chunk: edit count 0, then `audio`.
    mutating func data(_ audio: [UInt8] = [UInt8](repeating: 0, count: 4000), size: Int64? = nil) {
        chunk("data", [0, 0, 0, 0] + audio, size: size)
    }

    mutating func pakt(packets: Int64, validFrames: Int64, priming: Int32 = 0, remainder: Int32 = 0,
                       entries: [UInt8]) {
        var body = CAFBuilder()
        body.append(packets)
        body.append(validFrames)
        body.append(priming)
        body.append(remainder)
        chunk("pakt", body.bytes + entries)
    }

    /// Encodes one packet table entry: 7 bits a byte, most significant first, high bit = more follows.
    static func varint(_ value: UInt64) -> [UInt8] {
        var groups: [UInt8] = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return groups
    }

    /// A valid 16-bit stereo 8 kHz file of 1000 frames: desc at 8, data at 52, audio 68..<4068.
    static var minimalPCM: CAFBuilder {
        var builder = CAFBuilder.header()
        builder.desc()
        builder.data()
        return builder
    }
}

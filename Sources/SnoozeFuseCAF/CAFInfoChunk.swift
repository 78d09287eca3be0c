/// The `info` chunk (Apple's CAF specification, "Information Chunk"): a big-endian `UInt32` entry
/// count, then that many pairs of NUL-terminated UTF-8 strings, key then value.
public enum CAFInfoChunk {
    /// A whole chunk for `entries`: type `info`, its 64-bit size, then the body. NUL characters in a
    /// key or value (which would end the string early) are left out.
    public static func encode(_ entries: [CAFInfoEntry]) -> [UInt8] {
        let body = body(entries)
        var chunk = Array("info".utf8)
        let size = UInt64(body.count)
        for shift in stride(from: 56, through: 0, by: -8) { chunk.append(UInt8(truncatingIfNeeded: size >> UInt64(shift))) }
        return chunk + body
    }

    /// The chunk's body alone (what its size counts).
    public static func body(_ entries: [CAFInfoEntry]) -> [UInt8] {
        let count = UInt32(truncatingIfNeeded: entries.count)
        var body: [UInt8] = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: count >> UInt32($0)) }
        for entry in entries {
            body += entry.key.utf8.filter { $0 != 0 } + [0]
            body += entry.value.utf8.filter { $0 != 0 } + [0]
        }
        return body
    }

    /// The entries of a chunk body, and how many the body declares. Stops at the first incomplete
    /// pair; never reads past `body`.
    public static func decode(body: [UInt8]) -> (entries: [CAFInfoEntry], declared: UInt32)? {
        var reader = CAFFieldReader(body)
        guard let declared = reader.u32() else { return nil }
        var entries: [CAFInfoEntry] = []
        while UInt32(entries.count) < declared, let key = reader.cString(), let value = reader.cString() {
            entries.append(CAFInfoEntry(key: String(decoding: key, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
        }
        return (entries, declared)
    }
}

import CCrypto

/// SHA-256 of decoded audio, the identity the library uses to store the same sound once.
///
/// Definition (version 1): SHA-256 of the UTF-8 text `snoozefuse-audio-v1 <sample type> <rate>
/// <channels>\n` followed by every interleaved sample, little-endian, in the sample type the stored
/// file is written from: `s16` (8- and 16-bit data), `s32` (24- and 32-bit data, left-justified),
/// `f32` or `f64`. Because it is computed from the samples rather than from the container, the same
/// audio imported from a WAV and from a FLAC file has the same digest, and a re-import is found even
/// though libsndfile's CAF header bytes may differ between versions.
enum AudioDigest {
    /// A new SHA-256 context, fed the definition's header.
    static func start(sampleType: String, sampleRate: Int, channels: Int) -> OpaquePointer {
        // Allocation failure here means the process is out of memory; there is no useful recovery.
        let context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        let header = Array("snoozefuse-audio-v1 \(sampleType) \(sampleRate) \(channels)\n".utf8)
        header.withUnsafeBytes { update(context, $0) }
        return context
    }

    /// Adds samples (in memory as host-order values; Linux targets are little-endian).
    static func update(_ context: OpaquePointer, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest as 64 lowercase hex digits.
    static func finish(_ context: OpaquePointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest.prefix(Int(length)) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func free(_ context: OpaquePointer) { EVP_MD_CTX_free(context) }
}

#if _endian(big)
#error("AudioDigest hashes samples in host order, which the definition requires to be little-endian")
#endif

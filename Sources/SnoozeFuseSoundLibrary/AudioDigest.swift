#if canImport(Glibc)
import Glibc
#endif

/// SHA-256 of decoded audio, the identity the library uses to store the same sound once.
///
/// Definition (version 1): SHA-256 of the UTF-8 text `snoozefuse-audio-v1 <sample type> <rate>
/// <channels>\n` followed by every interleaved sample, little-endian, in the sample type the stored
/// file is written from: `s16` (8- and 16-bit data), `s32` (24- and 32-bit data, left-justified),
/// `f32` or `f64`. Because it is computed from the samples rather than from the container, the same
/// audio imported from a WAV and from a FLAC file has the same digest, and a re-import is found even
/// though libsndfile's CAF header bytes may differ between versions.
///
/// The hashing is OpenSSL's (EVP, which uses the CPU's SHA extensions where it has them, so hashing
/// keeps up with decoding a long file), loaded when a digest is first made instead of linked: only
/// an import hashes, and a linked libcrypto costs every command, a playing alarm included, about
/// 1.4 MiB of memory for its relocations (SPEC §8).
final class AudioDigest {
    private let library: LibCrypto
    private let context: OpaquePointer

    /// A new SHA-256 context, fed the definition's header. `library`: the shared library to load
    /// (another name only in tests of the failure).
    init(sampleType: String, sampleRate: Int, channels: Int, library name: String = LibCrypto.soname) throws(SoundLibraryError) {
        library = try LibCrypto(name)
        // Allocation failure here means the process is out of memory; there is no useful recovery.
        context = library.newContext()!
        _ = library.initialize(context, library.sha256(), nil)
        let header = Array("snoozefuse-audio-v1 \(sampleType) \(sampleRate) \(channels)\n".utf8)
        header.withUnsafeBytes { update($0) }
    }

    deinit { library.freeContext(context) }

    /// Adds samples (in memory as host-order values; Linux targets are little-endian).
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = library.update(context, base, bytes.count)
    }

    /// The digest as 64 lowercase hex digits.
    func finish() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = library.final(context, &digest, &length)
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest.prefix(Int(length)) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The six EVP functions of OpenSSL 3's libcrypto that SHA-256 needs, from `dlopen`. The handle is
/// closed when the last digest made with it is gone.
final class LibCrypto {
    /// The runtime library's name on Debian 12 (package libssl3).
    static let soname = "libcrypto.so.3"

    private let handle: UnsafeMutableRawPointer
    let newContext: @convention(c) () -> OpaquePointer?
    let sha256: @convention(c) () -> OpaquePointer?
    let initialize: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    let update: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    let final: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32
    let freeContext: @convention(c) (OpaquePointer?) -> Void

    init(_ name: String) throws(SoundLibraryError) {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw SoundLibraryError(.unavailable, "cannot compute the sound's SHA-256: \(LibCrypto.lastError()) (it comes with OpenSSL 3: apt-get install libssl3)")
        }
        self.handle = handle
        func function<F>(_ symbol: String, as type: F.Type) throws(SoundLibraryError) -> F {
            guard let address = dlsym(handle, symbol) else {
                let reason = LibCrypto.lastError()
                dlclose(handle)
                throw SoundLibraryError(.unavailable, "cannot compute the sound's SHA-256: \(name) has no \(symbol) (\(reason)); OpenSSL 3 is needed: apt-get install libssl3")
            }
            return unsafeBitCast(address, to: type)
        }
        newContext = try function("EVP_MD_CTX_new", as: (@convention(c) () -> OpaquePointer?).self)
        sha256 = try function("EVP_sha256", as: (@convention(c) () -> OpaquePointer?).self)
        initialize = try function("EVP_DigestInit_ex", as: (@convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32).self)
        update = try function("EVP_DigestUpdate", as: (@convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32).self)
        final = try function("EVP_DigestFinal_ex", as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32).self)
        freeContext = try function("EVP_MD_CTX_free", as: (@convention(c) (OpaquePointer?) -> Void).self)
    }

    deinit { dlclose(handle) }

    private static func lastError() -> String {
        dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
    }
}

#if _endian(big)
#error("AudioDigest hashes samples in host order, which the definition requires to be little-endian")
#endif

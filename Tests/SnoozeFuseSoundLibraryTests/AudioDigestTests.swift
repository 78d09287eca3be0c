import Foundation
import SnoozeFuseTestSupport
@testable import SnoozeFuseSoundLibrary
import Testing

@Suite("Audio digest (OpenSSL's libcrypto, loaded at run time)")
struct AudioDigestTests {
    /// The definition, computed outside the library: the header line and the raw little-endian
    /// samples as sox writes them, through coreutils' sha256sum.
    @Test func importedDigestIsTheDefinitionsSHA256() throws {
        let scratch = try Scratch()
        let source = scratch.path("tone.wav")
        try makeSignal(source, seconds: 2, rate: 22_050)
        let raw = scratch.path("tone.raw"), hashed = scratch.path("hashed")
        try runTool("sox", [source, "-t", "raw", "-e", "signed-integer", "-b", "16", "-L", raw])
        try Data("snoozefuse-audio-v1 s16 22050 2\n".utf8).write(to: URL(fileURLWithPath: hashed))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: hashed))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: raw)))
        try handle.close()
        let expected = try runTool("sha256sum", [hashed]).prefix(64)

        let result = try scratch.library().importSound(at: source)

        #expect(result.sound.sha256 == String(expected))
    }

    @Test func digestOfNothingButTheHeaderIsStable() throws {
        let digest = try AudioDigest(sampleType: "f32", sampleRate: 48_000, channels: 1)
        // echo 'snoozefuse-audio-v1 f32 48000 1' | sha256sum
        #expect(digest.finish() == "5477f81ab97955c4f941c6f15be01c0ab2ea09f5c5209a8bb514200e4bad4565")
    }

    @Test func missingLibraryIsUnavailableAndNamesIt() throws {
        #expect {
            _ = try AudioDigest(sampleType: "s16", sampleRate: 44_100, channels: 2, library: "libcrypto-not-here.so.3")
        } throws: { error in
            guard let error = error as? SoundLibraryError else { return false }
            return error.kind == .unavailable && error.message.contains("libcrypto-not-here.so.3")
                && error.message.contains("apt-get install libssl3")
        }
    }

    @Test func libraryWithoutTheFunctionsIsUnavailableAndNamesTheSymbol() throws {
        // libm loads, but has no EVP functions.
        #expect {
            _ = try AudioDigest(sampleType: "s16", sampleRate: 44_100, channels: 2, library: "libm.so.6")
        } throws: { error in
            guard let error = error as? SoundLibraryError else { return false }
            return error.kind == .unavailable && error.message.contains("libm.so.6 has no EVP_MD_CTX_new")
        }
    }
}

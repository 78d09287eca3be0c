import Foundation
import SnoozeFuseAudio
import SnoozeFuseSoundLibrary
import SnoozeFuseTestSupport
import Testing

/// `sounds validate --json`, the truncation fields.
struct TruncationOutput: Decodable {
    struct Truncation: Decodable {
        var framesRead: Int64
        var framesDeclared: Int64
        var message: String
    }

    var importable: Bool
    var framesDecoded: Int64?
    var truncated: Bool
    var truncation: Truncation?
}

@Suite("Truthful import: frames decoded against frames declared")
struct TruncationTests {
    /// A 5 s FLAC cut to its first 20 KB (`head -c`): `validate` reports the truncation (text and
    /// JSON, exit 65), `import` refuses it (exit 65, nothing stored), and `--accept-truncated`
    /// imports the frames that decode, with a warning and the real length.
    @Test func truncatedFLACIsReportedAndRefusedUnlessAccepted() async throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.flac"), cut = scratch.path("cut.flac")
        try makeSignal(whole, seconds: 5)
        try runTool("head", ["-c", "20000", whole], stdout: cut)
        var file = try SoundFile(readingAtPath: cut)
        #expect(file.info.frames == 220_500, "the header still declares 5 s")
        var decodable: Int64 = 0
        var buffer = [Float](repeating: 0, count: 4096 * 2)
        while let frames = try? buffer.withUnsafeMutableBufferPointer({ try file.read(into: $0) }), frames > 0 { decodable += Int64(frames) }
        #expect(decodable > 0 && decodable < 220_500)
        let expected = "truncated: read \(decodable) of 220500 frames"

        let text = try await scratch.run(["sounds", "validate", cut])
        let json = try await scratch.run(["sounds", "validate", cut, "--json"])
        let refused = try await scratch.run(["sounds", "import", cut])
        let listAfterRefusal = try await scratch.run(["sounds", "list", "--json"])
        let accepted = try await scratch.run(["sounds", "import", cut, "--accept-truncated"])
        let wholeValidated = try await scratch.run(["sounds", "validate", whole, "--json"])

        #expect(text.status == 65)
        #expect(text.standardOutput.contains(expected), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("importable: no (\(expected)"))
        #expect(json.status == 65)
        let report = try JSONDecoder().decode(TruncationOutput.self, from: Data(json.standardOutput.utf8))
        #expect(report.truncated)
        #expect(!report.importable)
        #expect(report.framesDecoded == decodable)
        #expect(report.truncation?.framesRead == decodable)
        #expect(report.truncation?.framesDeclared == 220_500)
        #expect(report.truncation?.message.hasPrefix(expected) == true)

        #expect(refused.status == 65)
        #expect(refused.standardError.contains(expected), "\(refused.standardError)")
        #expect(refused.standardError.contains("--accept-truncated"))
        #expect(try importedNames(listAfterRefusal).isEmpty)
        #expect(try temporaryFiles(scratch).isEmpty)

        #expect(accepted.status == 0, "\(accepted.standardError)")
        #expect(accepted.standardError.contains("warning: \(cut): \(expected)"))
        let stored = try #require(try SoundLibrary(paths: scratch.paths, builtIns: [:]).path(named: "cut"))
        #expect(try SoundFile(readingAtPath: stored).info.frames == decodable)
        #expect(try runTool("sqlite3", [scratch.database, "SELECT frames FROM sounds"]) == "\(decodable)\n")

        #expect(wholeValidated.status == 0, "\(wholeValidated.standardError)")
        let wholeReport = try JSONDecoder().decode(TruncationOutput.self, from: Data(wholeValidated.standardOutput.utf8))
        #expect(!wholeReport.truncated)
        #expect(wholeReport.framesDecoded == 220_500)
    }

    /// libsndfile estimates the length of an MP3 without a Xing header from its size (here a few
    /// hundred frames more than decode): that is not a truncation.
    @Test func estimatedMP3LengthIsNotATruncation() async throws {
        let scratch = try Scratch()
        let wav = scratch.path("s.wav"), mp3 = scratch.path("noxing.mp3")
        try makeSignal(wav, seconds: 5)
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-write_xing", "0", mp3])

        let validated = try await scratch.run(["sounds", "validate", mp3, "--json"])
        let imported = try await scratch.run(["sounds", "import", mp3])

        #expect(validated.status == 0, "\(validated.standardError)")
        let report = try JSONDecoder().decode(TruncationOutput.self, from: Data(validated.standardOutput.utf8))
        #expect(!report.truncated)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(!imported.standardError.contains("truncated"))
    }
}

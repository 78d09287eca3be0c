import Foundation
import SnoozeFuseTestSupport
import SnoozeFuseAudio
import SnoozeFuseCAF
import SnoozeFuseSoundLibrary
import SnoozeFuseStore
import Testing

/// A lossless source format and the encoding it must be stored in.
struct LosslessCase: Sendable, CustomTestStringConvertible {
    var name: String
    var soxOptions: [String]
    var fileName: String
    var stored: StoredEncoding
    var testDescription: String { name }
}

private let losslessCases: [LosslessCase] = [
    LosslessCase(name: "WAV 16-bit", soxOptions: ["-b", "16"], fileName: "s.wav", stored: .pcm16),
    LosslessCase(name: "WAV 24-bit", soxOptions: ["-b", "24"], fileName: "s.wav", stored: .pcm24),
    LosslessCase(name: "WAV 32-bit", soxOptions: ["-b", "32", "-e", "signed-integer"], fileName: "s.wav", stored: .pcm32),
    LosslessCase(name: "WAV 8-bit unsigned", soxOptions: ["-b", "8", "-e", "unsigned-integer"], fileName: "s.wav", stored: .pcmS8),
    LosslessCase(name: "AIFF 16-bit", soxOptions: ["-b", "16"], fileName: "s.aiff", stored: .pcm16),
    LosslessCase(name: "FLAC 24-bit", soxOptions: ["-b", "24"], fileName: "s.flac", stored: .pcm24),
    LosslessCase(name: "CAF µ-law", soxOptions: ["-e", "u-law"], fileName: "s.caf", stored: .pcm16),
]

@Suite("Sound import round trips (real libsndfile, ffmpeg, SQLite)")
struct ImportRoundTripTests {
    @Test(arguments: losslessCases)
    func losslessImportDecodesBitExact(_ testCase: LosslessCase) throws {
        let scratch = try Scratch()
        let source = scratch.path(testCase.fileName)
        try makeSignal(source, soxOptions: testCase.soxOptions)
        let library = try scratch.library()

        let result = try library.importSound(at: source)

        #expect(result.outcome == .imported)
        #expect(result.conversion.hasSuffix("(lossless)"))
        let stored = try intSamples(storedPath(scratch, result.sound))
        let original = try intSamples(source)
        #expect(stored.info.format == SoundFileFormat(.caf, testCase.stored.subtype).littleEndian)
        #expect(stored.info.sampleRate == 44_100)
        #expect(stored.info.channels == 2)
        #expect(stored.samples.count == 2 * 44_100)
        #expect(firstDifference(stored.samples, original.samples) == nil)
        #expect(result.sound.frames == 44_100)
        #expect(result.sound.sha256.count == 64)
    }

    @Test func floatAndDoubleStayFloatingPointBitExact() throws {
        let scratch = try Scratch()
        let library = try scratch.library()
        let float = scratch.path("f32.wav"), double = scratch.path("f64.wav")
        try makeSignal(float, soxOptions: ["-b", "32", "-e", "floating-point"])
        try makeSignal(double, soxOptions: ["-b", "64", "-e", "floating-point"])

        let f = try library.importSound(at: float)
        let d = try library.importSound(at: double)

        #expect(f.sound.format == SoundFileFormat(.caf, .float).littleEndian.description)
        #expect(d.sound.format == SoundFileFormat(.caf, .double).littleEndian.description)
        #expect(firstDifference(try floatSamples(storedPath(scratch, f.sound)), try floatSamples(float)) == nil)
        #expect(firstDifference(try doubleSamples(storedPath(scratch, d.sound)), try doubleSamples(double)) == nil)
    }

    /// ffmpeg writes ALAC with format flags 0 (and bits/channel 0), which libsndfile refuses; the
    /// import patches the flags in memory from the magic cookie and decodes every sample exactly.
    @Test(arguments: [(["-b", "16"], "alac", StoredEncoding.pcm16), (["-b", "24"], "alac", .pcm24)])
    func ffmpegALACImportIsBitExact(_ soxOptions: [String], _ codec: String, _ stored: StoredEncoding) throws {
        let scratch = try Scratch()
        let source = scratch.path("source.wav"), alac = scratch.path("alac.caf")
        try makeSignal(source, soxOptions: soxOptions)
        let sampleFormat = stored == .pcm16 ? "s16p" : "s32p"
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c:a", codec, "-sample_fmt", sampleFormat, "-f", "caf", alac])
        let report = CAFInspector().inspect([UInt8](try Data(contentsOf: URL(fileURLWithPath: alac))))
        #expect(report.audioDescription?.formatFlags == 0)
        #expect(!report.libsndfileCanDecode)

        let result = try scratch.library().importSound(at: alac)

        #expect(result.repairs.count == 1)
        #expect(result.repairs.first?.hasPrefix("set the ALAC format flags to \(stored == .pcm16 ? 1 : 3)") == true)
        let imported = try intSamples(storedPath(scratch, result.sound))
        #expect(imported.info.format == SoundFileFormat(.caf, stored.subtype).littleEndian)
        #expect(firstDifference(imported.samples, try intSamples(source).samples) == nil)
    }

    @Test func sndfileConvertALAC20ImportIsBitExact() throws {
        let scratch = try Scratch()
        let source = scratch.path("source.wav"), alac = scratch.path("alac.caf")
        try makeSignal(source, soxOptions: ["-b", "24"])
        try runTool("sndfile-convert", ["-alac20", source, alac])

        let result = try scratch.library().importSound(at: alac)

        #expect(result.repairs.isEmpty)
        let imported = try intSamples(storedPath(scratch, result.sound))
        #expect(imported.info.format == SoundFileFormat(.caf, .pcm24).littleEndian)
        #expect(firstDifference(imported.samples, try intSamples(alac).samples) == nil)
    }

    /// IMA4 in CAF, re-wrapped as AIFF-C in memory. Exact against libsndfile's decode of the same
    /// packets copied into AIFF-C by ffmpeg (`-c copy`); close to ffmpeg's own IMA4 decoder, which
    /// differs from libsndfile's by a few 16-bit steps after the first packet.
    @Test(arguments: [1, 2])
    func ima4ImportDecodesLikeTheReferences(_ channels: Int) throws {
        let scratch = try Scratch()
        let source = scratch.path("source.wav"), ima4 = scratch.path("ima4.caf")
        let copied = scratch.path("copied.aifc"), ffmpegDecode = scratch.path("ffmpeg.f32")
        try makeSignal(source, channels: channels)
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c:a", "adpcm_ima_qt", "-f", "caf", ima4])
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", ima4, "-c:a", "copy", "-f", "aiff", copied])
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", ima4, "-f", "f32le", "-c:a", "pcm_f32le", ffmpegDecode])

        let result = try scratch.library().importSound(at: ima4)

        #expect(result.repairs == ["IMA4 packets can be copied losslessly into an AIFF-C file, which libsndfile decodes"])
        #expect(result.conversion.hasSuffix("(decoded from a lossy encoding)"))
        let stored = storedPath(scratch, result.sound)
        #expect(try SoundFile(readingAtPath: stored).info.format == SoundFileFormat(.caf, .pcm16).littleEndian)
        #expect(try SoundFile(readingAtPath: stored).info.channels == channels)
        // Exact: the same packets decoded by libsndfile from ffmpeg's AIFF-C.
        #expect(firstDifference(try intSamples(stored).samples, try intSamples(copied).samples) == nil)
        // Close: ffmpeg's decoder.
        let ours = try floatSamples(stored), theirs = try rawFloats(atPath: ffmpegDecode)
        #expect(ours.count == theirs.count)
        #expect(firstDifference(Array(ours.prefix(64 * channels)), Array(theirs.prefix(64 * channels))) == nil)
        #expect(rmsDifference(ours, theirs) < 0.005)
        #expect(maxDifference(ours, theirs) < 0.02)
    }

    /// A CAF written to a pipe keeps `data` size -1; the import measures it and decodes every sample.
    @Test func dataSizeMinusOneIsRepaired() throws {
        let scratch = try Scratch()
        let source = scratch.path("source.wav"), piped = scratch.path("piped.caf")
        try makeSignal(source)
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c:a", "pcm_s16le", "-f", "caf", "pipe:1"], stdout: piped)
        let report = CAFInspector().inspect([UInt8](try Data(contentsOf: URL(fileURLWithPath: piped))))
        #expect(report.audioData?.sizeWasUnknown == true)

        let result = try scratch.library().importSound(at: piped)

        #expect(result.repairs.count == 1)
        #expect(result.repairs.first?.hasPrefix("write the measured size 176404 into the data chunk header") == true)
        #expect(firstDifference(try intSamples(storedPath(scratch, result.sound)).samples, try intSamples(source).samples) == nil)
    }

    @Test func sameAudioTwiceIsReportedNotDuplicated() throws {
        let scratch = try Scratch()
        let wav = scratch.path("tone.wav"), flac = scratch.path("again.flac"), other = scratch.path("other.wav")
        try makeSignal(wav)
        try runTool("sox", [wav, flac])
        try makeSignal(other, seconds: 0.5)
        let library = try scratch.library()

        let first = try library.importSound(at: wav)
        let second = try library.importSound(at: wav, name: "another name")
        let third = try library.importSound(at: flac)
        let different = try library.importSound(at: other)

        #expect(first.outcome == .imported)
        #expect(second.outcome == .duplicate)
        #expect(second.sound.name == "tone")
        #expect(third.outcome == .duplicate)
        #expect(third.sound.sha256 == first.sound.sha256)
        #expect(different.outcome == .imported)
        #expect(try library.list().map(\.name) == ["other", "tone"])
        #expect(try scratch.storedFiles() == [first.sound.storedFileName, different.sound.storedFileName])
        #expect(try indexRows(scratch).count == 2)
    }

    @Test func namesAreCleanedAndKeptUnique() throws {
        #expect(SoundNames.clean("../.evil\u{07}/name") == "-.evil-name")
        #expect(SoundNames.clean("...hidden") == "hidden")
        #expect(SoundNames.clean("  tabs\tand\nlines  ") == "tabs and lines")
        #expect(SoundNames.clean("back\\slash") == "back-slash")
        #expect(SoundNames.clean("zero\u{200B}width") == "zerowidth")
        #expect(SoundNames.clean("\u{1B}[31m") == "[31m")
        #expect(SoundNames.clean(String(repeating: "a", count: 200)).count == SoundNames.maximumLength)
        #expect(SoundNames.name(forFileName: ".wav") == "wav")
        #expect(SoundNames.name(forFileName: "..") == "sound")
        #expect(SoundNames.unique("x", taken: ["X", "x (2)"]) == "x (3)")

        let scratch = try Scratch()
        let a = scratch.path("beep.wav"), b = scratch.path("b.wav"), c = scratch.path("c.wav")
        try makeSignal(a, seconds: 0.3)
        try makeSignal(b, seconds: 0.4)
        try makeSignal(c, seconds: 0.5)
        let library = try scratch.library(builtIns: ["beep": "/nonexistent/beep.caf"])

        let fromBuiltInFileName = try library.importSound(at: a)
        let named = try library.importSound(at: b, name: "Morning/../\u{07}alarm")
        let sameName = try library.importSound(at: c, name: "morning-..-alarm")

        #expect(fromBuiltInFileName.sound.name == "beep (2)")
        #expect(named.sound.name == "Morning-..-alarm")
        #expect(sameName.sound.name == "morning-..-alarm (2)")
        #expect(sameName.requestedName == "morning-..-alarm")
        #expect(try indexRows(scratch).map { $0.split(separator: "|").first.map(String.init) ?? "" }
            == ["beep (2)", "Morning-..-alarm", "morning-..-alarm (2)"])
    }

    @Test func builtInsCannotBeRemovedRenamedOrOverwritten() throws {
        let scratch = try Scratch()
        let source = scratch.path("mine.wav")
        try makeSignal(source, seconds: 0.3)
        let library = try scratch.library(builtIns: ["chime": "/nonexistent/chime.caf"])
        _ = try library.importSound(at: source)

        let refusals: [SoundLibraryError?] = [
            #expect(throws: SoundLibraryError.self) { try library.remove("beep") },
            #expect(throws: SoundLibraryError.self) { try library.remove("CHIME") },
            #expect(throws: SoundLibraryError.self) { try library.rename("gentle", to: "x") },
            #expect(throws: SoundLibraryError.self) { try library.rename("mine", to: "Rising") },
            #expect(throws: SoundLibraryError.self) { try library.importSound(at: source, name: "digital") },
        ]
        #expect(refusals.map { $0?.kind } == Array(repeating: .refused, count: 5))
        #expect(refusals.allSatisfy { $0?.message.contains("built-in") == true })
        #expect(try library.list().filter { !$0.isBuiltIn }.map(\.name) == ["mine"])
    }

    @Test func removeAndRenameKeepIndexAndFilesInStep() throws {
        let scratch = try Scratch()
        let a = scratch.path("a.wav"), b = scratch.path("b.wav")
        try makeSignal(a, seconds: 0.3)
        try makeSignal(b, seconds: 0.4)
        let library = try scratch.library()
        let first = try library.importSound(at: a)
        _ = try library.importSound(at: b)

        #expect(try library.rename("a", to: "first").name == "first")
        let taken = #expect(throws: SoundLibraryError.self) { try library.rename("first", to: "B") }
        #expect(taken?.kind == .refused)
        let removed = try library.remove("b")
        let missing = #expect(throws: SoundLibraryError.self) { try library.remove("b") }

        #expect(removed.name == "b")
        #expect(missing?.kind == .notFound)
        #expect(try library.path(named: "FIRST") == storedPath(scratch, first.sound))
        #expect(try scratch.storedFiles() == [first.sound.storedFileName])
        #expect(try indexRows(scratch) == ["first|\(first.sound.storedFileName)|\(first.sound.sha256)"])
    }

    @Test func notificationExportIsShortLinearPCMThatIOSAccepts() throws {
        let scratch = try Scratch()
        let source = scratch.path("long.wav"), out = scratch.path("out.caf")
        try makeSignal(source, seconds: 40, rate: 22_050, soxOptions: ["-b", "24"])
        let library = try scratch.library()
        _ = try library.importSound(at: source)

        let result = try library.export("long", to: out, notification: true)

        #expect(result.changes == ["converted Signed 24 bit PCM to Signed 16 bit PCM",
                                   "trimmed from 40.00 s to 29.50 s, with a 0.25 s fade-out"])
        let report = CAFInspector().inspect([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(report.isValid)
        #expect(report.verdicts.iOSNotification.isCompatible)
        #expect(report.audioDescription?.formatID == .linearPCM)
        #expect(report.duration?.frames == Int64(29.5 * 22_050))
        let samples = try intSamples(out).samples
        #expect(samples.suffix(2).allSatisfy { $0 == 0 }) // faded out to silence
        #expect(try library.export("long", to: scratch.path("copy.caf"), notification: false).changes.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path("copy.caf")))
            == Data(contentsOf: URL(fileURLWithPath: try #require(try library.path(named: "long")))))
    }

    @Test func undecodableInputIsBadDataAndLeavesNothing() throws {
        let scratch = try Scratch()
        let text = scratch.path("notes.wav"), opus = scratch.path("opus.caf"), source = scratch.path("s.wav")
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: text))
        try makeSignal(source, rate: 48_000)
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c:a", "libopus", "-f", "caf", opus])
        let library = try scratch.library()

        let notAudio = #expect(throws: SoundLibraryError.self) { try library.importSound(at: text) }
        let unsupported = #expect(throws: SoundLibraryError.self) { try library.importSound(at: opus) }
        let missing = #expect(throws: SoundLibraryError.self) { try library.importSound(at: scratch.path("nope.wav")) }

        #expect(notAudio?.kind == .badData)
        #expect(unsupported?.kind == .badData)
        #expect(unsupported?.message.contains("no decoder for 'opus'") == true)
        #expect(missing?.kind == .missingInput)
        #expect(try scratch.storedFiles().isEmpty)
        #expect(try indexRows(scratch).isEmpty)
    }
}

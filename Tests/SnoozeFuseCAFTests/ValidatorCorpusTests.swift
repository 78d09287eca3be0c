import Foundation
import SnoozeFuseCAF
import SnoozeFuseTestSupport
import Testing

/// What one tool-made file must produce.
struct CorpusExpectation: Sendable {
    var format: CAFFourCC
    var flags: UInt32
    var channels: UInt32 = 2
    /// Frames of audio, or nil where the encoder's own count is not interesting.
    var frames: Int64?
    var durationSource: CAFDuration.Source = .dataSize
    var warnings: [CAFIssueCode] = []
    var blockers: [CAFDecodeBlocker] = []
    var repairs: [CAFRepairHint.Kind] = []
    var notification: [CAFNotificationProblem] = []
    /// The `sf_open` result (`SF_ERR_*`) measured on libsndfile 1.2.
    var sndfile: Int32 = SndfileResult.opens
    var chunkTypes: [String]?
}

/// One file of the validator corpus, made at test time by a real encoder.
struct CorpusCase: Sendable, CustomTestStringConvertible {
    var name: String
    var make: @Sendable (_ folder: TemporaryFolder, _ source: URL) throws -> URL
    var expect: CorpusExpectation

    var testDescription: String { name }

    /// `ffmpeg -c:a codec -f caf`.
    static func ffmpeg(_ codec: String, extra: [String] = [], _ expect: CorpusExpectation) -> CorpusCase {
        CorpusCase(name: "ffmpeg \(codec) \(extra.joined(separator: " "))", make: { folder, source in
            let out = folder.file("out.caf")
            try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-i", source.path]
                + extra + ["-c:a", codec, "-f", "caf", out.path])
            return out
        }, expect: expect)
    }

    static func sndfileConvert(_ encoding: String, _ expect: CorpusExpectation) -> CorpusCase {
        CorpusCase(name: "sndfile-convert \(encoding)", make: { folder, source in
            let out = folder.file("out.caf")
            try runTool("sndfile-convert", [encoding, source.path, out.path])
            return out
        }, expect: expect)
    }

    static func sox(_ arguments: [String], _ expect: CorpusExpectation) -> CorpusCase {
        CorpusCase(name: "sox \(arguments.joined(separator: " "))", make: { folder, source in
            let out = folder.file("out.caf")
            try runTool("sox", [source.path] + arguments + ["-t", "caf", out.path])
            return out
        }, expect: expect)
    }
}

private func pcm(_ flags: UInt32) -> CorpusExpectation {
    CorpusExpectation(format: .linearPCM, flags: flags, frames: 4000)
}

private let ima4 = CorpusExpectation(
    format: .appleIMA4, flags: 0, frames: 4032, blockers: [.unsupportedEncoding(.appleIMA4)],
    repairs: [.rewrapIMA4AsAIFFC], sndfile: SndfileResult.unsupportedEncoding)

private func sndfileALAC(_ flags: UInt32) -> CorpusExpectation {
    // libsndfile's ALAC writer leaves one byte after the data chunk.
    CorpusExpectation(format: .appleLossless, flags: flags, frames: 4000, durationSource: .packetTable,
                      warnings: [.trailingBytes], notification: [.encoding(.appleLossless)])
}

private let corpus: [CorpusCase] = [
    .ffmpeg("pcm_s8", pcm(0)),
    .ffmpeg("pcm_s16be", pcm(0)),
    .ffmpeg("pcm_s16le", pcm(2)),
    .ffmpeg("pcm_s24be", pcm(0)),
    .ffmpeg("pcm_s24le", pcm(2)),
    .ffmpeg("pcm_s32be", pcm(0)),
    .ffmpeg("pcm_s32le", pcm(2)),
    .ffmpeg("pcm_f32be", pcm(1)),
    .ffmpeg("pcm_f32le", pcm(3)),
    .ffmpeg("pcm_f64be", pcm(1)),
    .ffmpeg("pcm_f64le", pcm(3)),
    .ffmpeg("pcm_mulaw", CorpusExpectation(format: .uLaw, flags: 0, frames: 4000)),
    .ffmpeg("pcm_alaw", CorpusExpectation(format: .aLaw, flags: 0, frames: 4000)),
    .sox(["-b", "16"], CorpusExpectation(format: .linearPCM, flags: 0, frames: 4000,
                                         chunkTypes: ["desc", "free", "data"])),
    .sox(["-b", "8", "-e", "signed-integer"], pcm(0)),
    .sox(["-e", "u-law"], CorpusExpectation(format: .uLaw, flags: 0, frames: 4000)),
    .sox(["-e", "a-law"], CorpusExpectation(format: .aLaw, flags: 0, frames: 4000)),
    .sndfileConvert("-pcm24", pcm(0)),
    .sndfileConvert("-alac16", sndfileALAC(1)),
    .sndfileConvert("-alac20", sndfileALAC(2)),
    .sndfileConvert("-alac24", sndfileALAC(3)),
    .sndfileConvert("-alac32", sndfileALAC(4)),
    // ffmpeg writes ALAC with format flags 0 and bits/channel 0: the bit depth comes from the cookie.
    .ffmpeg("alac", CorpusExpectation(
        format: .appleLossless, flags: 0, frames: 4096, durationSource: .packetTable,
        blockers: [.alacFormatFlags(0)], repairs: [.setALACFormatFlags(1, bitDepth: 16)],
        notification: [.encoding(.appleLossless)], sndfile: SndfileResult.unsupportedEncoding,
        chunkTypes: ["desc", "chan", "kuki", "info", "data", "pakt"])),
    .ffmpeg("alac", extra: ["-sample_fmt", "s32p"], CorpusExpectation(
        format: .appleLossless, flags: 0, frames: 4096, durationSource: .packetTable,
        blockers: [.alacFormatFlags(0)], repairs: [.setALACFormatFlags(3, bitDepth: 24)],
        notification: [.encoding(.appleLossless)], sndfile: SndfileResult.unsupportedEncoding)),
    .ffmpeg("adpcm_ima_qt", ima4),
    .ffmpeg("adpcm_ima_qt", extra: ["-ac", "1"], { var mono = ima4; mono.channels = 1; return mono }()),
    .ffmpeg("libopus", CorpusExpectation(
        format: .opus, flags: 0, frames: nil, durationSource: .packetTable,
        blockers: [.unsupportedEncoding(.opus)], notification: [.encoding(.opus)],
        sndfile: SndfileResult.unsupportedEncoding)),
    .ffmpeg("flac", CorpusExpectation(
        format: .flac, flags: 0, frames: nil, durationSource: .packetTable,
        blockers: [.unsupportedEncoding(.flac)], notification: [.encoding(.flac)],
        sndfile: SndfileResult.unsupportedEncoding)),
    // ffmpeg declares 576 frames per MP3 packet at 8 kHz but counts 1152 per packet in `pakt`.
    .ffmpeg("libmp3lame", CorpusExpectation(
        format: .mpegLayer3, flags: 0, frames: nil, durationSource: .packetTable,
        warnings: [.packetTableFrameCountMismatch],
        blockers: [.unsupportedEncoding(.mpegLayer3)], notification: [.encoding(.mpegLayer3)],
        sndfile: SndfileResult.unsupportedEncoding)),
    // A CAF written to a pipe cannot seek back, so the data size stays -1.
    CorpusCase(name: "ffmpeg pcm_s16le to a pipe", make: { folder, source in
        let out = folder.file("out.caf")
        try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", source.path,
                               "-c:a", "pcm_s16le", "-f", "caf", "pipe:1"], stdout: out.path)
        return out
    }, expect: CorpusExpectation(
        format: .linearPCM, flags: 2, frames: 4000, warnings: [.dataSizeUnknown],
        blockers: [.dataSizeUnknown], repairs: [.setDataChunkSize(16004)], sndfile: SndfileResult.malformed)),
    // sox puts `free` before `data`, so `data` is last: patch its size to -1.
    CorpusCase(name: "sox 16-bit with data size patched to -1", make: { folder, source in
        let out = folder.file("out.caf")
        try runTool("sox", [source.path, "-b", "16", "-t", "caf", out.path])
        var bytes = try readBytes(out)
        let report = CAFInspector().inspect(bytes)
        let data = try #require(report.audioData)
        for index in 0..<8 { bytes[Int(data.chunkOffset) + 4 + index] = 0xFF }
        try Data(bytes).write(to: out)
        return out
    }, expect: CorpusExpectation(
        format: .linearPCM, flags: 0, frames: 4000, warnings: [.dataSizeUnknown],
        blockers: [.dataSizeUnknown], repairs: [.setDataChunkSize(16004)], sndfile: SndfileResult.malformed)),
    CorpusCase(name: "ffmpeg pcm_s16le with chunks after data", make: { folder, source in
        let out = folder.file("out.caf")
        try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-i", source.path,
                               "-c:a", "pcm_s16le", "-f", "caf", out.path])
        var builder = CAFBuilder(bytes: try readBytes(out))
        builder.chunk("free", [UInt8](repeating: 0, count: 16))
        builder.chunk("zzzz", Array("not audio".utf8))
        try Data(builder.bytes).write(to: out)
        return out
    }, expect: CorpusExpectation(format: .linearPCM, flags: 2, frames: 4000,
                                 chunkTypes: ["desc", "chan", "info", "data", "free", "zzzz"])),
    CorpusCase(name: "sox µ-law, 31 s mono", make: { folder, _ in
        let out = folder.file("out.caf")
        try runTool("sox", ["-n", "-r", "8000", "-c", "1", "-e", "u-law", "-t", "caf", out.path,
                            "synth", "31", "sine", "440"])
        return out
    }, expect: CorpusExpectation(format: .uLaw, flags: 0, channels: 1, frames: 248_000,
                                 notification: [.tooLong(seconds: 31)])),
]

@Suite("Validator corpus made by ffmpeg, sox and sndfile-convert")
struct ValidatorCorpusTests {
    @Test(arguments: corpus)
    func corpusFile(_ testCase: CorpusCase) throws {
        let folder = try TemporaryFolder()
        let source = folder.file("source.wav")
        try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-f", "lavfi",
                               "-i", "sine=frequency=440:duration=0.5:sample_rate=8000", "-ac", "2", source.path])
        let url = try testCase.make(folder, source)
        let report = CAFInspector().inspect(try readBytes(url))
        let expect = testCase.expect

        #expect(report.errors == [])
        #expect(report.warnings.map(\.code) == expect.warnings)
        let description = try #require(report.audioDescription)
        #expect(description.formatID == expect.format)
        #expect(description.formatFlags == expect.flags)
        #expect(description.channelsPerFrame == expect.channels)
        let duration = try #require(report.duration)
        #expect(duration.source == expect.durationSource)
        if let frames = expect.frames { #expect(duration.frames == frames) }
        #expect(report.verdicts.libsndfile.blockers == expect.blockers)
        #expect(report.verdicts.repairs.map(\.kind) == expect.repairs)
        #expect(report.verdicts.repairable == !expect.repairs.isEmpty)
        #expect(report.verdicts.iOSNotification.problems == expect.notification)
        if let types = expect.chunkTypes { #expect(report.chunks.map(\.type.description) == types) }
        if report.audioData?.sizeWasUnknown == true {
            #expect(report.warnings.first?.offset == report.audioData.map { $0.chunkOffset + 4 })
        }

        // The prediction against the real thing.
        let opened = sndfileOpenResult(url)
        #expect(opened == expect.sndfile)
        #expect(report.libsndfileCanDecode == (opened == SndfileResult.opens))
    }

    @Test func reasonsNameTheProblem() throws {
        let folder = try TemporaryFolder()
        let source = folder.file("source.wav")
        try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-f", "lavfi",
                               "-i", "sine=frequency=440:duration=0.5:sample_rate=8000", source.path])
        var reasons: [String] = []
        for codec in ["pcm_s16le", "alac", "adpcm_ima_qt"] {
            let out = folder.file("\(codec).caf")
            try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", source.path,
                                   "-c:a", codec, "-f", "caf", out.path])
            let report = CAFInspector().inspect(try readBytes(out))
            reasons.append(report.verdicts.libsndfile.reason)
            reasons += report.verdicts.repairs.map(\.message)
            reasons.append(report.verdicts.iOSNotification.reason)
        }
        #expect(reasons == [
            "libsndfile can decode this file",
            "usable as an iOS notification sound",
            "ALAC format flags are 0; libsndfile needs 1-4 (the source bit depth)",
            "set the ALAC format flags to 1 (16-bit source, from the magic cookie)",
            "iOS notification sounds must be linear PCM, IMA4, µ-law or a-law, not 'alac'",
            "libsndfile has no decoder for 'ima4' in CAF",
            "IMA4 packets can be copied losslessly into an AIFF-C file, which libsndfile decodes",
            "usable as an iOS notification sound",
        ])
    }
}

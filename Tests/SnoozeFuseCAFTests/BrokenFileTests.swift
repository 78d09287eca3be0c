import Foundation
import SnoozeFuseCAF
import SnoozeFuseTestSupport
import Testing

/// An issue as a test expects it: code, severity and offset; the message is compared when given.
struct ExpectedIssue: Equatable, Sendable, CustomStringConvertible {
    var severity: CAFIssue.Severity
    var code: CAFIssueCode
    var offset: Int64

    static func error(_ code: CAFIssueCode, at offset: Int64) -> ExpectedIssue {
        ExpectedIssue(severity: .error, code: code, offset: offset)
    }

    static func warning(_ code: CAFIssueCode, at offset: Int64) -> ExpectedIssue {
        ExpectedIssue(severity: .warning, code: code, offset: offset)
    }

    var description: String { "\(severity) \(code) @\(offset)" }
}

/// A file built byte by byte, with everything the inspector must say about it.
struct BrokenCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var issues: [ExpectedIssue]
    /// The first issue's exact message.
    var message: String?
    var blockers: [CAFDecodeBlocker]
    /// The `sf_open` result (`SF_ERR_*`, or libsndfile's finer internal code) on libsndfile 1.2.
    var sndfile: Int32
    /// libsndfile opens the file although it is not valid CAF (it ignores this field); the
    /// inspector deliberately says it cannot be decoded reliably.
    var libsndfileIsLenient = false

    var testDescription: String { name }
}

private func file(_ build: (inout CAFBuilder) -> Void) -> [UInt8] {
    var builder = CAFBuilder.header()
    build(&builder)
    return builder.bytes
}

private func malformed(_ code: CAFIssueCode) -> [CAFDecodeBlocker] { [.malformed(code)] }

/// libsndfile's internal codes past the public `SF_ERR_*` range, as `sf_error` returns them.
private let sndfileInfoIncomplete: Int32 = 24
private let sndfileInternal: Int32 = 29

private let brokenCases: [BrokenCase] = [
    BrokenCase(name: "valid minimal file", bytes: CAFBuilder.minimalPCM.bytes, issues: [], blockers: [],
               sndfile: SndfileResult.opens),
    BrokenCase(name: "wrong magic", bytes: {
        var builder = CAFBuilder.header(type: "cafe")
        builder.desc(); builder.data()
        return builder.bytes
    }(), issues: [.error(.notCAF, at: 0)],
    message: "the file starts with 'cafe', not 'caff'; it is not a CAF file (check its real format, e.g. with ffprobe)",
    blockers: malformed(.notCAF), sndfile: SndfileResult.unrecognised),
    BrokenCase(name: "version 2", bytes: {
        var builder = CAFBuilder.header(version: 2)
        builder.desc(); builder.data()
        return builder.bytes
    }(), issues: [.error(.unsupportedVersion, at: 4)],
    message: "CAF version 2; only version 1 exists, so the chunks cannot be trusted. Re-export the file as CAF version 1",
    blockers: malformed(.unsupportedVersion), sndfile: SndfileResult.opens, libsndfileIsLenient: true),
    BrokenCase(name: "file flags 1", bytes: {
        var builder = CAFBuilder.header(flags: 1)
        builder.desc(); builder.data()
        return builder.bytes
    }(), issues: [.warning(.nonZeroFileFlags, at: 6)],
    message: "the file flags are 1; CAF version 1 defines none and they should be 0",
    blockers: [], sndfile: SndfileResult.opens),
    BrokenCase(name: "truncated header", bytes: Array(CAFBuilder.minimalPCM.bytes.prefix(6)),
               issues: [.error(.truncatedFileHeader, at: 0)],
               message: "the file is 6 bytes; a CAF file starts with an 8-byte header ('caff', version, flags)",
               blockers: malformed(.truncatedFileHeader), sndfile: SndfileResult.unrecognised),
    BrokenCase(name: "desc not first", bytes: file {
        $0.chunk("free", [0, 0, 0, 0, 0, 0, 0, 0]); $0.desc(); $0.data()
    }, issues: [.error(.descriptionNotFirst, at: 8)],
    message: "the first chunk is 'free'; CAF requires 'desc' first. Re-mux the file so 'desc' follows the header",
    blockers: malformed(.descriptionNotFirst), sndfile: SndfileResult.unrecognised),
    BrokenCase(name: "data before desc", bytes: file { $0.data(); $0.desc() },
               issues: [.error(.descriptionNotFirst, at: 8)],
               blockers: malformed(.descriptionNotFirst), sndfile: SndfileResult.unrecognised),
    BrokenCase(name: "no desc", bytes: file { $0.data() }, issues: [.error(.missingDescription, at: 8)],
               message: "no 'desc' chunk; without the audio description the file cannot be decoded",
               blockers: malformed(.missingDescription), sndfile: SndfileResult.unrecognised),
    BrokenCase(name: "data chunk past the end", bytes: file { $0.desc(); $0.data(size: 999_999) },
               issues: [.error(.chunkPastEndOfFile, at: 56)],
               message: "the 'data' chunk declares 999999 bytes but only 4004 remain in the file; it is truncated or the size is corrupt. Re-export or re-download it",
               blockers: malformed(.chunkPastEndOfFile), sndfile: SndfileResult.malformed),
    BrokenCase(name: "data size Int64.max", bytes: file { $0.desc(); $0.data(size: .max) },
               issues: [.error(.chunkPastEndOfFile, at: 56)],
               blockers: malformed(.chunkPastEndOfFile), sndfile: SndfileResult.malformed),
    BrokenCase(name: "negative chunk size", bytes: file {
        $0.desc(); $0.chunk("free", [0, 0, 0, 0, 0, 0, 0, 0], size: -5); $0.data()
    }, issues: [.error(.negativeChunkSize, at: 56), .error(.missingData, at: 4088)],
    message: "the 'free' chunk declares size -5; sizes cannot be negative (only a last data chunk may use -1). The file is corrupt: re-export it",
    blockers: malformed(.negativeChunkSize), sndfile: SndfileResult.malformed),
    BrokenCase(name: "huge chunk size", bytes: file {
        $0.desc(); $0.chunk("free", [0, 0, 0, 0, 0, 0, 0, 0], size: 1 << 62); $0.data()
    }, issues: [.error(.chunkPastEndOfFile, at: 56), .error(.missingData, at: 4088)],
    message: "the 'free' chunk declares 4611686018427387904 bytes but only 4024 remain in the file; it is truncated or the size is corrupt. Re-export or re-download it",
    blockers: malformed(.chunkPastEndOfFile), sndfile: SndfileResult.malformed),
    // Size -1 on a data chunk that is not last: the following chunk is counted as audio, as any
    // reader must; the repair would write the measured (wrong) size, which is why it is a warning.
    BrokenCase(name: "data size -1 not last", bytes: file {
        $0.desc(); $0.data(size: -1); $0.chunk("free", [0, 0, 0, 0, 0, 0, 0, 0])
    }, issues: [.warning(.dataSizeUnknown, at: 56)],
    message: "the data chunk size is -1 (written while streaming); the audio was measured to the end of the file (4024 bytes). Write the real size to make the file portable",
    blockers: [.dataSizeUnknown], sndfile: SndfileResult.malformed),
    BrokenCase(name: "zero channels", bytes: file { $0.desc(channels: 0); $0.data() },
               issues: [.error(.zeroChannels, at: 44)],
               message: "the file declares 0 channels; it needs at least 1",
               blockers: malformed(.zeroChannels), sndfile: SndfileResult.unsupportedEncoding),
    BrokenCase(name: "NaN sample rate", bytes: file { $0.desc(sampleRate: .nan); $0.data() },
               issues: [.error(.invalidSampleRate, at: 20)],
               message: "the sample rate is nan; it must be a finite number of at least 1 frame per second",
               blockers: malformed(.invalidSampleRate), sndfile: sndfileInfoIncomplete),
    BrokenCase(name: "zero sample rate", bytes: file { $0.desc(sampleRate: 0); $0.data() },
               issues: [.error(.invalidSampleRate, at: 20)],
               message: "the sample rate is 0.0; it must be a finite number of at least 1 frame per second",
               blockers: malformed(.invalidSampleRate), sndfile: sndfileInfoIncomplete),
    BrokenCase(name: "16-bit stereo with 3 bytes per packet", bytes: file { $0.desc(bytesPerPacket: 3); $0.data() },
               issues: [.error(.inconsistentBytesPerPacket, at: 36), .warning(.partialPacket, at: 4067)],
               message: "bytes per packet is 3 but 2 channels of 16-bit samples take 4; the description is corrupt",
               blockers: malformed(.inconsistentBytesPerPacket), sndfile: SndfileResult.unsupportedEncoding),
    BrokenCase(name: "linear PCM with 2 frames per packet", bytes: file { $0.desc(framesPerPacket: 2); $0.data() },
               issues: [.error(.inconsistentFramesPerPacket, at: 40)],
               message: "frames per packet is 2; 'lpcm' has 1",
               blockers: malformed(.inconsistentFramesPerPacket), sndfile: SndfileResult.opens,
               libsndfileIsLenient: true),
    BrokenCase(name: "mono µ-law with 2 bytes per packet", bytes: file {
        $0.desc(format: "ulaw", bytesPerPacket: 2, channels: 1, bits: 8); $0.data()
    }, issues: [.error(.inconsistentBytesPerPacket, at: 36)],
    blockers: malformed(.inconsistentBytesPerPacket), sndfile: SndfileResult.opens, libsndfileIsLenient: true),
    BrokenCase(name: "variable packets without pakt", bytes: file {
        $0.desc(format: "alac", flags: 1, bytesPerPacket: 0, framesPerPacket: 4096, bits: 16); $0.data()
    }, issues: [.error(.missingPacketTable, at: 36)],
    message: "bytes per packet is 0 (variable) but there is no 'pakt' chunk, so the packets cannot be located. Re-export the file",
    blockers: malformed(.missingPacketTable), sndfile: sndfileInternal),
    BrokenCase(name: "12-bit linear PCM", bytes: file { $0.desc(bits: 12); $0.data() }, issues: [],
               blockers: [.unsupportedSampleSize(bits: 12, isFloat: false)], sndfile: SndfileResult.unsupportedEncoding),
    BrokenCase(name: "16-bit float", bytes: file { $0.desc(flags: 1, bits: 16); $0.data() }, issues: [],
               blockers: [.unsupportedSampleSize(bits: 16, isFloat: true)], sndfile: SndfileResult.unsupportedEncoding),
    BrokenCase(name: "2000 channels", bytes: file { $0.desc(bytesPerPacket: 4000, channels: 2000); $0.data() },
               issues: [], blockers: [.tooManyChannels(2000)], sndfile: SndfileResult.malformed),
    BrokenCase(name: "desc of 20 bytes", bytes: file { $0.chunk("desc", [UInt8](repeating: 0, count: 20)); $0.data() },
               issues: [.error(.descriptionTooSmall, at: 12)],
               message: "the 'desc' chunk is 20 bytes; it must be 32",
               blockers: malformed(.descriptionTooSmall), sndfile: SndfileResult.malformed),
    BrokenCase(name: "no data", bytes: file { $0.desc() }, issues: [.error(.missingData, at: 52)],
               message: "no 'data' chunk; the file holds no audio (it may be truncated)",
               blockers: malformed(.missingData), sndfile: SndfileResult.malformed),
    BrokenCase(name: "data of 2 bytes", bytes: file { $0.desc(); $0.chunk("data", [0, 0]) },
               issues: [.error(.dataChunkTooSmall, at: 56)],
               message: "the data chunk is 2 bytes; it needs at least 4 for the edit count",
               blockers: malformed(.dataChunkTooSmall), sndfile: sndfileInternal),
    BrokenCase(name: "incomplete last packet", bytes: file { $0.desc(); $0.data([UInt8](repeating: 0, count: 4001)) },
               issues: [.warning(.partialPacket, at: 4068)],
               message: "the audio ends with 1 bytes of an incomplete 4-byte packet; they are ignored",
               blockers: [], sndfile: SndfileResult.opens),
    BrokenCase(name: "3 bytes after the last chunk", bytes: CAFBuilder.minimalPCM.bytes + [1, 2, 3],
               issues: [.warning(.trailingBytes, at: 4068)],
               message: "3 bytes after the last chunk are too few for a 12-byte chunk header; they are ignored",
               blockers: [], sndfile: SndfileResult.opens),
    BrokenCase(name: "AAC with a packet table", bytes: file {
        $0.desc(sampleRate: 44100, format: "aac ", bytesPerPacket: 0, framesPerPacket: 1024, bits: 0)
        $0.data([UInt8](repeating: 0, count: 300))
        $0.pakt(packets: 2, validFrames: 960, priming: 1088, remainder: 0,
                entries: CAFBuilder.varint(100) + CAFBuilder.varint(200))
    }, issues: [], blockers: [.unsupportedEncoding(.mpeg4AAC)], sndfile: SndfileResult.unsupportedEncoding),
    BrokenCase(name: "packet table shorter than its packet count", bytes: file {
        $0.desc(format: "alac", flags: 1, bytesPerPacket: 0, framesPerPacket: 4096, bits: 16)
        $0.data([UInt8](repeating: 0, count: 300))
        $0.pakt(packets: 3, validFrames: 12288, entries: CAFBuilder.varint(200))
    }, issues: [.error(.packetTableTruncated, at: 8 + 44 + 12 + 304 + 12 + 24 + 2)],
    message: "the packet table lists 3 packets but its entries end after 1; the file is truncated or corrupt",
    blockers: malformed(.packetTableTruncated), sndfile: sndfileInternal),
]

@Suite("Hand-made broken files")
struct BrokenFileTests {
    @Test(arguments: brokenCases)
    func brokenFile(_ testCase: BrokenCase) throws {
        let report = CAFInspector().inspect(testCase.bytes)
        let found = report.issues.map { ExpectedIssue(severity: $0.severity, code: $0.code, offset: $0.offset) }
        #expect(found == testCase.issues)
        if let message = testCase.message { #expect(report.issues.first?.message == message) }
        #expect(report.verdicts.libsndfile.blockers == testCase.blockers)
        for issue in report.issues {
            #expect((0...report.fileSize).contains(issue.offset))
            #expect(!issue.message.isEmpty)
        }

        let folder = try TemporaryFolder()
        let url = folder.file("broken.caf")
        try Data(testCase.bytes).write(to: url)
        let opened = sndfileOpenResult(url)
        #expect(opened == testCase.sndfile)
        if testCase.libsndfileIsLenient {
            #expect(opened == SndfileResult.opens && !report.libsndfileCanDecode)
        } else {
            #expect(report.libsndfileCanDecode == (opened == SndfileResult.opens))
        }
    }
}

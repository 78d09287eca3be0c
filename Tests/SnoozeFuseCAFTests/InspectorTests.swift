@testable import SnoozeFuseCAF
import Testing

/// A file that exists only as a prefix of real bytes followed by zeros up to `byteCount`, recording
/// every read: proves the inspector never reads audio or allocates by declared sizes.
final class SparseSource: CAFByteSource, @unchecked Sendable {
    // @unchecked: only used from one test task at a time; `reads` is test bookkeeping.
    let prefix: [UInt8]
    let byteCount: Int64
    private(set) var reads: [(offset: Int64, count: Int)] = []

    init(prefix: [UInt8], byteCount: Int64) {
        self.prefix = prefix
        self.byteCount = byteCount
    }

    func read(at offset: Int64, count: Int) -> [UInt8] {
        reads.append((offset, count))
        let end = min(byteCount, offset + Int64(count))
        return (offset..<end).map { $0 < Int64(prefix.count) ? prefix[Int($0)] : 0 }
    }
}

struct FailingSource: CAFByteSource {
    struct Failure: Error {}
    var byteCount: Int64 { 100 }
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset == 0 else { throw Failure() }
        return Array(CAFBuilder.minimalPCM.bytes.prefix(count))
    }
}

@Suite("CAF inspector details")
struct InspectorTests {
    @Test func minimalFileFields() throws {
        let report = CAFInspector().inspect(CAFBuilder.minimalPCM.bytes)
        #expect(report.issues == [])
        #expect(report.header == CAFFileHeader(fileType: .caff, version: 1, flags: 0) as CAFFileHeader?)
        #expect(report.chunks == [
            CAFChunk(type: .desc, offset: 8, declaredSize: 32, bodySize: 32),
            CAFChunk(type: .data, offset: 52, declaredSize: 4004, bodySize: 4004),
        ])
        #expect(report.audioData == CAFAudioData(chunkOffset: 52, editCount: 0, audioStart: 68, audioEnd: 4068,
                                                 sizeWasUnknown: false))
        #expect(report.duration == CAFDuration(frames: 1000, seconds: 0.125, source: .dataSize))
        #expect(report.verdicts.iOSNotification.isCompatible)
    }

    @Test func byteArrayAndRawBufferAgree() {
        let bytes = CAFBuilder.minimalPCM.bytes
        let fromArray = CAFInspector().inspect(bytes)
        let fromBuffer = bytes.withUnsafeBytes { CAFInspector().inspect($0) }
        #expect(fromArray == fromBuffer)
    }

    @Test func largeFileIsInspectedWithoutReadingAudio() {
        var builder = CAFBuilder.header()
        builder.desc()
        let audioBytes: Int64 = 10_000_000_000
        builder.append(fourCC: "data")
        builder.append(audioBytes + 4)
        let source = SparseSource(prefix: builder.bytes, byteCount: Int64(builder.bytes.count) + 4 + audioBytes)
        let report = CAFInspector().inspect(source)
        #expect(report.issues == [])
        #expect(report.duration?.frames == audioBytes / 4)
        #expect(source.reads.map(\.count).reduce(0, +) < 100)
    }

    @Test func variablePacketTableIsSummed() throws {
        // Both sizes and frame counts vary: two entries a packet.
        var builder = CAFBuilder.header()
        builder.desc(format: "XXXX", bytesPerPacket: 0, framesPerPacket: 0, bits: 0)
        builder.data([UInt8](repeating: 0, count: 300 + 20_000))
        builder.pakt(packets: 2, validFrames: 900, priming: 100, remainder: 24,
                     entries: CAFBuilder.varint(300) + CAFBuilder.varint(512)
                         + CAFBuilder.varint(20_000) + CAFBuilder.varint(512))
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.issues == [])
        let table = try #require(report.packetTable)
        #expect(table.packetsRead == 2)
        #expect(table.totalPacketBytes == 20_300)
        #expect(table.totalPacketFrames == 1024)
        #expect(report.duration == CAFDuration(frames: 900, seconds: 900.0 / 8000, source: .packetTable))
    }

    @Test func packetEntryLongerThan63BitsIsAnError() {
        var builder = CAFBuilder.header()
        builder.desc(format: "alac", flags: 1, bytesPerPacket: 0, framesPerPacket: 4096, bits: 16)
        builder.data([])
        builder.pakt(packets: 1, validFrames: 4096, entries: [UInt8](repeating: 0xFF, count: 12))
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.errors.map(\.code) == [.packetTableBadEntry])
        // The entry starts after the header (8), desc (44), data (16), pakt header (12 + 24).
        let entryOffset: Int64 = 8 + 44 + 16 + 12 + 24
        #expect(report.errors.map(\.offset) == [entryOffset])
    }

    @Test func negativePacketCountIsAnError() {
        var builder = CAFBuilder.header()
        builder.desc(format: "alac", flags: 1, bytesPerPacket: 0, framesPerPacket: 4096, bits: 16)
        builder.data([])
        builder.pakt(packets: -1, validFrames: 4096, entries: [])
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.errors.map(\.code) == [.packetTableNegativeField])
        #expect(report.errors.first?.message == "the packet table's number of packets is -1; it cannot be negative")
    }

    @Test func infoPairsAndCountMismatch() {
        var builder = CAFBuilder.minimalPCM
        var body = CAFBuilder()
        body.append(UInt32(3))
        body.bytes += Array("title\u{0}Nap bell\u{0}artist\u{0}me\u{0}dangling".utf8)
        builder.chunk("info", body.bytes)
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.info == [CAFInfoEntry(key: "title", value: "Nap bell"), CAFInfoEntry(key: "artist", value: "me")])
        #expect(report.warnings.map(\.code) == [.infoEntryCountMismatch])
        #expect(report.warnings.first?.message == "the 'info' chunk declares 3 entries but holds 2 complete key/value pairs")
    }

    /// An `info` chunk written by `CAFInfoChunk` after a sized `data` chunk (how the sound library
    /// stores a sound's name) reads back exactly, NUL characters left out, with no issue.
    @Test func writtenInfoChunkAfterDataReadsBack() {
        var builder = CAFBuilder.minimalPCM
        builder.bytes += CAFInfoChunk.encode([
            CAFInfoEntry(key: "title", value: "Réveil 🐓"),
            CAFInfoEntry(key: "empty", value: ""),
            CAFInfoEntry(key: "with\u{0}nul", value: "a\u{0}b"),
        ])
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.issues.isEmpty)
        #expect(report.chunks.map(\.type.description) == ["desc", "data", "info"])
        #expect(report.info == [CAFInfoEntry(key: "title", value: "Réveil 🐓"), CAFInfoEntry(key: "empty", value: ""),
                                CAFInfoEntry(key: "withnul", value: "ab")])
        #expect(CAFInfoChunk.body([]) == [0, 0, 0, 0])
        #expect(Array(CAFInfoChunk.encode([]).prefix(12)) == Array("info".utf8) + [0, 0, 0, 0, 0, 0, 0, 4])
    }

    @Test func channelLayoutIsCheckedAgainstTheDescription() {
        var builder = CAFBuilder.minimalPCM
        var body = CAFBuilder()
        body.append(UInt32(100 << 16 | 1))  // mono tag on a stereo file
        body.append(UInt32(0))
        body.append(UInt32(0))
        builder.chunk("chan", body.bytes)
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.channelLayout == CAFChannelLayout(chunkOffset: 4068, layoutTag: 100 << 16 | 1, channelBitmap: 0,
                                                         numberOfDescriptions: 0))
        #expect(report.warnings.map(\.code) == [.channelLayoutChannelMismatch])
    }

    @Test func bareALACCookieGivesTheBitDepth() throws {
        var builder = CAFBuilder.header()
        builder.desc(format: "alac", flags: 0, bytesPerPacket: 0, framesPerPacket: 4096, bits: 0)
        var cookie = CAFBuilder()
        cookie.append(UInt32(4096))
        cookie.bytes += [0, 24, 40, 10, 14, 2]
        cookie.append(UInt16(255))
        cookie.append(UInt32(0))
        cookie.append(UInt32(0))
        cookie.append(UInt32(8000))
        builder.chunk("kuki", cookie.bytes)
        builder.data([UInt8](repeating: 0, count: 10))
        builder.pakt(packets: 1, validFrames: 4096, entries: CAFBuilder.varint(10))
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.issues == [])
        #expect(report.magicCookie?.alac == CAFALACConfig(frameLength: 4096, bitDepth: 24, channels: 2, sampleRate: 8000))
        #expect(report.verdicts.repairs.map(\.kind) == [.setALACFormatFlags(3, bitDepth: 24)])
        #expect(report.verdicts.repairable)
    }

    @Test func readFailureIsReported() {
        let report = CAFInspector().inspect(FailingSource())
        #expect(report.errors.map(\.code) == [.readFailed, .missingDescription, .missingData])
        #expect(report.errors.first?.offset == 8)
    }

    /// Found by the fuzzer: a NaN sample rate made a report unequal to itself.
    @Test func reportWithNaNSampleRateEqualsItself() {
        var builder = CAFBuilder.header()
        builder.desc(sampleRate: .nan)
        builder.data()
        let bytes = builder.bytes
        #expect(CAFInspector().inspect(bytes) == CAFInspector().inspect(bytes))
    }

    /// Found by the fuzzer: a subnormal sample rate gave an infinite duration.
    @Test func tinySampleRateIsAnError() {
        var builder = CAFBuilder.header()
        builder.desc(sampleRate: .leastNonzeroMagnitude)
        builder.data()
        let report = CAFInspector().inspect(builder.bytes)
        #expect(report.errors.map(\.code) == [.invalidSampleRate])
        #expect(report.duration == nil)
    }

    /// Every prefix of a file with every chunk kind: no crash, and every offset inside the file.
    @Test func everyTruncationIsReportedInsideTheFile() {
        var builder = CAFBuilder.header()
        builder.desc(format: "alac", flags: 1, bytesPerPacket: 0, framesPerPacket: 4096, bits: 16)
        builder.chunk("chan", [0, 0x65, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0])
        builder.chunk("kuki", [UInt8](repeating: 7, count: 24))
        var info = CAFBuilder()
        info.append(UInt32(1))
        info.bytes += Array("k\u{0}v\u{0}".utf8)
        builder.chunk("info", info.bytes)
        builder.pakt(packets: 2, validFrames: 8000, remainder: 192, entries: CAFBuilder.varint(700) + CAFBuilder.varint(9))
        builder.data([UInt8](repeating: 1, count: 709))
        let full = builder.bytes
        #expect(CAFInspector().inspect(full).issues == [])
        for length in 0..<full.count {
            let report = CAFInspector().inspect(Array(full.prefix(length)))
            #expect(!report.isValid, "prefix of \(length) bytes")
            #expect(report.issues.allSatisfy { (0...Int64(length)).contains($0.offset) })
        }
    }
}

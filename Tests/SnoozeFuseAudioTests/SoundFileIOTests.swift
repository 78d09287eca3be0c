import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport
import Testing

/// A byte source that fails after handing over its first `limit` bytes.
struct FailingByteSource: SoundFileByteSource {
    struct Broken: Error, CustomStringConvertible {
        var description: String { "the disk went away" }
    }

    var bytes: [UInt8]
    var limit: Int

    var byteCount: Int64 { Int64(bytes.count) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let start = Int(offset)
        guard start + buffer.count <= limit else { throw Broken() }
        let count = min(buffer.count, bytes.count - start)
        guard count > 0 else { return 0 }
        buffer.copyBytes(from: bytes[start..<(start + count)])
        return count
    }
}

@Suite struct SoundFileVirtualIOTests {
    @Test(arguments: ["wav", "flac"])
    func bytesInMemoryDecodeLikeTheFile(_ fileExtension: String) throws {
        let folder = try TemporaryFolder()
        var path = try makeSourceWAV(in: folder)
        if fileExtension != "wav" {
            let converted = folder.path("source.\(fileExtension)")
            try runTool("sox", [path, converted])
            path = converted
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))

        let (fileInfo, fromFile) = try readAll(atPath: path)
        var inMemory = try SoundFile(readingFrom: bytes, name: "memory.\(fileExtension)")
        let fromMemory = try readAll(&inMemory, framesPerRead: 777)

        #expect(inMemory.info == fileInfo)
        #expect(inMemory.path == "memory.\(fileExtension)")
        #expect(fromMemory.count == 44_100)
        #expect(firstDifference(fromMemory, fromFile) == nil)
    }

    /// The way the importer will decode iOS notification sounds: IMA4 (which libsndfile cannot read
    /// inside CAF) re-wrapped as AIFF-C, opened from memory. libsndfile's and ffmpeg's IMA4 decoders
    /// agree bit for bit on the first 64-frame packet and then drift apart by a few 16-bit steps
    /// (measured: at most 0.0039, RMS 0.0022, on a signal of RMS 0.5; both are that close to the
    /// source), so the bound is on the RMS difference.
    @Test func ima4InAIFFCFromMemoryDecodesLikeFFmpeg() throws {
        let folder = try TemporaryFolder()
        let source = try makeSourceWAV(in: folder)
        let path = folder.path("ima4.aifc")
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c:a", "adpcm_ima_qt", "-f", "aiff", path])
        let reference = try ffmpegReference(path, in: folder)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))

        var file = try SoundFile(readingFrom: bytes, name: "re-wrapped.aifc")
        let samples = try readAll(&file)

        #expect(file.info.format == SoundFileFormat(.aiff, .imaADPCM))
        #expect(samples.count == reference.count)
        #expect(rms(reference) > 0.3)
        #expect(firstDifference(samples.prefix(128), reference.prefix(128)) == nil)
        #expect(rmsDifference(samples, reference) < 0.005)
        #expect(maxAbsoluteDifference(samples, reference) < 0.02)
    }

    @Test func seeksWithinBytesInMemory() throws {
        let folder = try TemporaryFolder()
        let path = try makeSourceWAV(in: folder)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let all = try readAll(atPath: path).samples

        var file = try SoundFile(readingFrom: InMemorySoundBytes(bytes))
        try file.seek(toFrame: 12_345)
        var buffer = [Float](repeating: 0, count: 2 * 100)
        let frames = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        #expect(frames == 100)
        #expect(firstDifference(buffer, all[(2 * 12_345)..<(2 * 12_445)]) == nil)
    }

    @Test func notAudioInMemoryIsBadDataNamedAfterTheSource() throws {
        let error = #expect(throws: SoundFileError.self) {
            _ = try SoundFile(readingFrom: Array("just some words, no audio here".utf8), name: "pasted.wav")
        }
        #expect(error?.code == .unrecognisedFormat)
        #expect(error?.isBadData == true)
        #expect(error?.isMissingInput == false)
        #expect(error?.description.contains("pasted.wav") == true)
    }

    @Test func aSourceThatThrowsSurfacesItsError() throws {
        let folder = try TemporaryFolder()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try makeSourceWAV(in: folder))))
        let source = FailingByteSource(bytes: bytes, limit: 8)
        let error = #expect(throws: SoundFileError.self) {
            _ = try SoundFile(readingFrom: source, name: "flaky source")
        }
        #expect(error?.underlyingError is FailingByteSource.Broken)
        #expect(error?.description.contains("the disk went away") == true)
        #expect(error?.description.contains("flaky source") == true)
    }
}

@Suite struct SoundFileSeekTests {
    @Test(arguments: ["wav", "flac"])
    func seekThenReadGivesTheFramesFromThere(_ fileExtension: String) throws {
        let folder = try TemporaryFolder()
        var path = try makeSourceWAV(in: folder)
        if fileExtension != "wav" {
            let converted = folder.path("source.\(fileExtension)")
            try runTool("sox", [path, converted])
            path = converted
        }
        let reference = try soxReference(path, in: folder)
        var file = try SoundFile(readingAtPath: path)
        var buffer = [Float](repeating: 0, count: 2 * 256)

        for start in [20_000, 7, 0, 22_000] {
            try file.seek(toFrame: Int64(start))
            let frames = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
            let expected = min(256, 22_050 - start)
            #expect(frames == expected, "from frame \(start)")
            #expect(firstDifference(buffer[0..<(2 * frames)], reference[(2 * start)..<(2 * (start + frames))]) == nil,
                    "from frame \(start)")
        }

        try file.seek(toFrame: 22_050)
        let atEnd = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        #expect(atEnd == 0)
    }

    @Test func seekingPastTheEndThrowsAndSaysWhere() throws {
        let folder = try TemporaryFolder()
        let path = try makeSourceWAV(in: folder)
        var file = try SoundFile(readingAtPath: path)
        let error = #expect(throws: SoundFileError.self) { try file.seek(toFrame: 1_000_000) }
        #expect(error?.operation == .seek)
        #expect(error?.code != SoundFileError.Code.noError)
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains("1000000") == true)
    }
}

@Suite struct SoundFileWriterTests {
    static let frames = 10_000

    /// A test signal that reaches both ends of the range: two tones, and full scale at the start.
    static func signal(channels: Int) -> [Float] {
        var samples: [Float] = []
        for frame in 0..<frames {
            for channel in 0..<channels {
                let t = Double(frame) / 44_100
                let value = 0.6 * sin(2 * .pi * 440 * t * Double(channel + 1)) + 0.3 * sin(2 * .pi * 97 * t)
                samples.append(Float(value))
            }
        }
        samples[0] = -1
        samples[1] = 1 - 1.0 / 8_388_608
        return samples
    }

    /// One step of the integer encoding. With clipping on, libsndfile scales by 2^15 and rounds for
    /// 16-bit (within half a step, except that +1.0 - ε clips to 32767, one step below); 24-bit goes
    /// through a 32-bit integer and is truncated (within one step).
    @Test(arguments: [
        (SoundFileSubtype.pcm16, Float(1) / 32768),
        (SoundFileSubtype.pcm24, Float(1) / 8_388_608),
        (SoundFileSubtype.float, Float(0)),
    ])
    func cafRoundTrip(_ subtype: SoundFileSubtype, _ quantization: Float) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("out.caf")
        let written = Self.signal(channels: 2)

        var writer = try SoundFileWriter(
            creatingAtPath: path, format: SoundFileFormat(.caf, subtype), sampleRate: 44_100, channels: 2
        )
        try writer.write(Array(written[0..<2_000]))
        try writer.write(Array(written[2_000...]))
        #expect(writer.framesWritten == Int64(Self.frames))
        try writer.close()

        let (info, readBack) = try readAll(atPath: path)
        #expect(info.format.major == .caf)
        #expect(info.format.subtype == subtype)
        #expect(info.sampleRate == 44_100)
        #expect(info.channels == 2)
        #expect(info.frames == Int64(Self.frames))
        #expect(readBack.count == written.count)
        let difference = maxAbsoluteDifference(readBack, written)
        #expect(difference <= quantization, "largest difference \(difference)")
        if subtype == .float {
            #expect(firstDifference(readBack, written) == nil)
        }
    }

    @Test func samplesOverFullScaleClipInsteadOfWrapping() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("loud.caf")
        var writer = try SoundFileWriter(
            creatingAtPath: path, format: SoundFileFormat(.caf, .pcm16), sampleRate: 8_000, channels: 1
        )
        try writer.write([1.5, -1.5, 0.25, 12345.0 / 32768, -1])
        try writer.close()
        let (_, samples) = try readAll(atPath: path)
        // Over full scale saturates; values on the 16-bit grid come back bit-exact.
        #expect(samples == [32767.0 / 32768, -1, 0.25, 12345.0 / 32768, -1])
    }

    @Test func aCombinationLibsndfileCannotWriteIsRefusedBeforeCreatingAFile() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("nope.caf")
        let error = #expect(throws: SoundFileError.self) {
            _ = try SoundFileWriter(
                creatingAtPath: path, format: SoundFileFormat(.caf, .vorbis), sampleRate: 44_100, channels: 2
            )
        }
        #expect(error?.code == .unsupportedEncoding)
        #expect(error?.operation == .create)
        #expect(error?.description.contains(path) == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func creatingInAMissingFolderIsASystemError() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("no/such/folder/out.caf")
        let error = #expect(throws: SoundFileError.self) {
            _ = try SoundFileWriter(
                creatingAtPath: path, format: SoundFileFormat(.caf, .pcm16), sampleRate: 44_100, channels: 1
            )
        }
        #expect(error?.code == .system)
        #expect(error?.isBadData == false)
        #expect(error?.description.contains(path) == true)
    }
}

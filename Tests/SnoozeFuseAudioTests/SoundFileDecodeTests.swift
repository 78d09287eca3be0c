import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport
import Testing

@Test func sndfileVersionNamesTheLibrary() {
    #expect(AudioLibraryVersions.sndfile.hasPrefix("libsndfile-"))
}

/// A format libsndfile decodes, how to make a test file in it, and who decodes the reference.
enum DecodeCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case wav16, wav24, wavFloat, aiff, flac, vorbis, opus, mp3, caf

    var testDescription: String { rawValue }

    /// Makes the test file from the 16-bit source WAV.
    func make(from source: String, in folder: TemporaryFolder) throws -> String {
        switch self {
        case .wav16:
            return source
        case .wav24:
            let path = folder.path("s24.wav")
            try runTool("sox", [source, "-b", "24", path])
            return path
        case .wavFloat:
            let path = folder.path("f32.wav")
            try runTool("sox", [source, "-e", "floating-point", "-b", "32", path])
            return path
        case .aiff:
            let path = folder.path("s.aiff")
            try runTool("sox", [source, path])
            return path
        case .flac:
            let path = folder.path("s.flac")
            try runTool("sox", [source, path])
            return path
        case .vorbis:
            let path = folder.path("s.ogg")
            try runTool("sox", [source, path])
            return path
        case .opus:
            let path = folder.path("s.opus")
            try runTool("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c:a", "libopus", path])
            return path
        case .mp3:
            let path = folder.path("s.mp3")
            try runTool("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c:a", "libmp3lame", path])
            return path
        case .caf:
            let path = folder.path("s.caf")
            try runTool("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c:a", "pcm_s16le", path])
            return path
        }
    }

    /// sox where it can decode the format; ffmpeg for Opus, MP3 and CAF, which this sox cannot read.
    func reference(_ path: String, in folder: TemporaryFolder) throws -> [Float] {
        switch self {
        case .opus, .mp3, .caf: try ffmpegReference(path, in: folder)
        default: try soxReference(path, in: folder)
        }
    }

    var expectedFormat: SoundFileFormat {
        switch self {
        case .wav16: SoundFileFormat(.wav, .pcm16)
        // sox writes 24-bit WAV as WAVE_FORMAT_EXTENSIBLE.
        case .wav24: SoundFileFormat(.wavex, .pcm24)
        case .wavFloat: SoundFileFormat(.wav, .float)
        case .aiff: SoundFileFormat(.aiff, .pcm16)
        case .flac: SoundFileFormat(.flac, .pcm16)
        case .vorbis: SoundFileFormat(.ogg, .vorbis)
        case .opus: SoundFileFormat(.ogg, .opus)
        case .mp3: SoundFileFormat(.mpeg, .mpegLayerIII)
        case .caf: SoundFileFormat(.caf, .pcm16)
        }
    }

    /// Opus always decodes at 48 kHz; ffmpeg resamples to it when encoding.
    var expectedSampleRate: Int { self == .opus ? 48_000 : 44_100 }

    /// The largest sample difference allowed against the reference decode. PCM and FLAC are
    /// integer samples scaled by the same power of two on both sides: exact. sox hands Vorbis over
    /// as 16-bit, so it differs from libsndfile's float decode by up to one 16-bit step. ffmpeg and
    /// libsndfile decode Opus with the same libopus; MP3 with two different float decoders
    /// (mpg123 and ffmpeg's own). Measured: Vorbis 1.5e-5, Opus 3.6e-7, MP3 2.3e-6; a shifted or
    /// rescaled decode of this signal (RMS 0.5) differs by far more.
    var tolerance: Float {
        switch self {
        case .wav16, .wav24, .wavFloat, .aiff, .flac, .caf: 0
        case .vorbis: 1.0 / 32768
        case .opus: 1e-5
        case .mp3: 1e-4
        }
    }
}

@Suite struct SoundFileDecodeTests {
    @Test(arguments: DecodeCase.allCases)
    func decodesLikeTheReferenceDecoder(_ decodeCase: DecodeCase) throws {
        let folder = try TemporaryFolder()
        let source = try makeSourceWAV(in: folder)
        let path = try decodeCase.make(from: source, in: folder)
        let reference = try decodeCase.reference(path, in: folder)

        let (info, samples) = try readAll(atPath: path)

        #expect(info.format.major == decodeCase.expectedFormat.major)
        #expect(info.format.subtype == decodeCase.expectedFormat.subtype)
        #expect(info.channels == 2)
        #expect(info.sampleRate == decodeCase.expectedSampleRate)
        #expect(info.frames == Int64(samples.count / 2))
        #expect(samples.count == reference.count, "libsndfile gave \(samples.count) samples, the reference \(reference.count)")
        #expect(rms(reference) > 0.3, "the reference decode should not be silence")
        let difference = maxAbsoluteDifference(samples, reference)
        #expect(difference <= decodeCase.tolerance, "largest difference \(difference), RMS \(rmsDifference(samples, reference))")
    }

    @Test func infoHasReadableNamesAndDuration() throws {
        let folder = try TemporaryFolder()
        let source = try makeSourceWAV(in: folder)
        let file = try SoundFile(readingAtPath: source)
        #expect(file.info.frames == 22_050)
        #expect(file.info.duration == .milliseconds(500))
        #expect(file.info.isSeekable)
        #expect(file.info.format.major.name.contains("WAV"))
        #expect(file.info.format.subtype.name.contains("16 bit PCM"))
        #expect(file.path == source)
    }

    @Test func readsFewerFramesThanTheBufferHoldsAtTheEndThenNone() throws {
        let folder = try TemporaryFolder()
        var file = try SoundFile(readingAtPath: try makeSourceWAV(in: folder))
        var buffer = [Float](repeating: 0, count: 2 * 20_000)
        let first = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        let second = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        let third = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        #expect(first == 20_000)
        #expect(second == 2_050)
        #expect(third == 0)
    }
}

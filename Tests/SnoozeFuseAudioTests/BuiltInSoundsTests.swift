import Foundation
import SnoozeFuseAudio
import Testing

/// The committed built-in sounds in `Sounds/`, checked through libsndfile, and the generator that
/// must reproduce them byte for byte.
@Suite struct BuiltInSoundsTests {
    /// The repository's `Sounds/` folder (this file is `Tests/SnoozeFuseAudioTests/…`).
    static let soundsFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sounds", isDirectory: true)

    static func committedPath(_ name: String) -> String {
        soundsFolder.appendingPathComponent("\(name).caf").path
    }

    /// Every sample of a file, decoded by libsndfile, with what it says about the file.
    static func decode(_ path: String) throws -> (info: SoundFileInfo, samples: [Float]) {
        var file = try SoundFile(readingAtPath: path)
        let info = file.info
        var samples: [Float] = []
        var buffer = [Float](repeating: 0, count: 4096 * info.channels)
        while true {
            let frames = try buffer.withUnsafeMutableBufferPointer { pointer throws(SoundFileError) in try file.read(into: pointer) }
            if frames == 0 { break }
            samples.append(contentsOf: buffer[0 ..< frames * info.channels])
        }
        return (info, samples)
    }

    @Test func theFolderHoldsExactlyTheFiveNamedSounds() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.soundsFolder.path)
            .filter { $0.hasSuffix(".caf") }.map { String($0.dropLast(4)) }
        #expect(Set(files) == Set(BuiltInSoundSynthesis.names))
        #expect(Set(BuiltInSoundSynthesis.names).isSuperset(of: ["beep", "chime", "rising", "digital", "gentle"]))
    }

    @Test(arguments: BuiltInSoundSynthesis.names)
    func isSmallMonoSixteenBitPCMCAF(name: String) throws {
        let path = Self.committedPath(name)
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size < 200_000, "\(name).caf is \(size) bytes")
        let (info, samples) = try Self.decode(path)
        #expect(info.format == SoundFileFormat(.caf, .pcm16))
        #expect(info.channels == 1)
        #expect([22050, 44100].contains(info.sampleRate))
        #expect(Int64(samples.count) == info.frames)
        #expect(info.duration >= .milliseconds(500) && info.duration <= .seconds(5))
    }

    @Test(arguments: BuiltInSoundSynthesis.names)
    func isAudibleAndLoopsWithoutAClick(name: String) throws {
        let samples = try Self.decode(Self.committedPath(name)).samples
        let first = try #require(samples.first), last = try #require(samples.last)
        let peak = samples.reduce(0) { max($0, abs($1)) }
        #expect(peak > 0.3, "\(name) is nearly silent (peak \(peak))")
        let largestStep = zip(samples, samples.dropFirst()).reduce(Float(0)) { max($0, abs($1.1 - $1.0)) }
        let loopStep = abs(first - last)
        // The jump from the last sample back to the first is no bigger than a tenth of the
        // largest step inside the sound (for these sounds it is zero: every note fades to zero).
        #expect(loopStep <= largestStep / 10, "\(name): loop step \(loopStep), largest step inside \(largestStep)")
        // Nor does it start or end on a held level, so the first play and the last stop are quiet too.
        #expect(abs(first) < 0.01 && abs(last) < 0.01, "\(name) starts at \(first) and ends at \(last)")
        // No DC offset that would thump when the alarm starts or stops.
        let mean = samples.reduce(0, +) / Float(samples.count)
        #expect(abs(mean) < 0.01, "\(name) has a DC offset of \(mean)")
    }

    @Test func theFiveSoundsAreDistinct() throws {
        let decoded = try BuiltInSoundSynthesis.names.map { ($0, try Self.decode(Self.committedPath($0))) }
        for (index, (nameA, a)) in decoded.enumerated() {
            for (nameB, b) in decoded[(index + 1)...] {
                #expect(a.samples != b.samples, "\(nameA) and \(nameB) are the same sound")
                // Not merely shifted or scaled copies either: their envelopes (50 ms RMS) differ.
                let envelopeA = Self.envelope(a.samples, rate: a.info.sampleRate)
                let envelopeB = Self.envelope(b.samples, rate: b.info.sampleRate)
                let similarity = Self.correlation(envelopeA, envelopeB)
                #expect(similarity < 0.95, "\(nameA) and \(nameB) have near-identical envelopes (\(similarity))")
            }
        }
    }

    @Test func theGeneratorReproducesTheCommittedBytes() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("snoozefuse-built-in-sounds-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try BuiltInSoundSynthesis.writeAll(toFolder: folder.path)
        #expect(written.count == BuiltInSoundSynthesis.names.count)
        for name in BuiltInSoundSynthesis.names {
            let fresh = try Data(contentsOf: folder.appendingPathComponent("\(name).caf"))
            let committed = try Data(contentsOf: URL(fileURLWithPath: Self.committedPath(name)))
            #expect(fresh == committed, "\(name).caf differs from what the generator writes: run `make sounds` and commit")
        }
    }

    @Test func decodedSamplesAreExactlyTheRenderedOnes() throws {
        for sound in BuiltInSoundSynthesis.render() {
            let (info, samples) = try Self.decode(Self.committedPath(sound.name))
            #expect(info.sampleRate == sound.sampleRate)
            #expect(samples == sound.samples.map { Float($0) / 32768 }, "\(sound.name) does not round-trip")
        }
    }

    @Test func theReadmeListsEverySoundWithItsLicence() throws {
        let readme = try String(contentsOf: Self.soundsFolder.appendingPathComponent("README.md"), encoding: .utf8)
        for name in BuiltInSoundSynthesis.names {
            #expect(readme.contains("| `\(name)` |"), "Sounds/README.md does not list \(name)")
            let size = try #require(FileManager.default.attributesOfItem(atPath: Self.committedPath(name))[.size] as? Int)
            #expect(readme.contains(size.formatted(.number.locale(Locale(identifier: "en_US")))), "Sounds/README.md has a stale size for \(name)")
        }
        #expect(readme.contains("CC0-1.0"))
        #expect(readme.contains("Tools/MakeSounds"))
    }

    /// RMS over 50 ms windows.
    static func envelope(_ samples: [Float], rate: Int) -> [Double] {
        let window = rate / 20
        return stride(from: 0, to: samples.count, by: window).map { start in
            let slice = samples[start ..< min(start + window, samples.count)]
            return (slice.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(slice.count)).squareRoot()
        }
    }

    /// Pearson correlation of two series over their common length.
    static func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let count = min(a.count, b.count)
        let x = a.prefix(count), y = b.prefix(count)
        let meanX = x.reduce(0, +) / Double(count), meanY = y.reduce(0, +) / Double(count)
        var covariance = 0.0, varianceX = 0.0, varianceY = 0.0
        for (p, q) in zip(x, y) {
            covariance += (p - meanX) * (q - meanY)
            varianceX += (p - meanX) * (p - meanX)
            varianceY += (q - meanY) * (q - meanY)
        }
        guard varianceX > 0, varianceY > 0 else { return 1 }
        return covariance / (varianceX * varianceY).squareRoot()
    }
}

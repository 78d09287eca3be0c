import Foundation
import SnoozeFuseAudio
import Testing

@Suite("The built-in tone: four beeps a second")
struct AlarmToneTests {
    /// A second of the tone, read in uneven pieces (as the audio thread reads it).
    private func oneSecond(rate: Int, from seconds: Double = 0) -> [Float] {
        var tone = AlarmToneSource(sampleRate: rate)
        tone.seek(to: .milliseconds(Int64(seconds * 1000)))
        var samples = [Float](repeating: .nan, count: rate)
        var done = 0
        for piece in [1, 333, 4_096, rate].map({ min($0, rate) }) where done < rate {
            let count = min(piece, rate - done)
            _ = samples.withUnsafeMutableBufferPointer { tone.read(into: UnsafeMutableBufferPointer(rebasing: $0[done ..< done + count])) }
            done += count
        }
        return samples
    }

    @Test(arguments: [8_000, 44_100, 48_000])
    func eachBeepIsA100MillisecondSineAt880HzWithSoftEdgesAndSilenceBetween(rate: Int) {
        let samples = oneSecond(rate: rate)
        let beep = rate / 10, spacing = rate / 5, edge = max(rate / 200, 1)
        for frame in 0 ..< rate {
            let index = frame / spacing, inBeep = frame - index * spacing
            guard index < 4, inBeep < beep else {
                #expect(samples[frame] == 0, "silence at frame \(frame)")
                continue
            }
            let fromEdge = min(inBeep, beep - 1 - inBeep)
            let envelope = fromEdge < edge ? 0.5 - 0.5 * cos(Double.pi * Double(fromEdge) / Double(edge)) : 1
            let expected = 0.7 * envelope * sin(2 * Double.pi * 880 * Double(inBeep) / Double(rate))
            if abs(Double(samples[frame]) - expected) > 1e-6 {
                Issue.record("frame \(frame): \(samples[frame]), expected \(expected)")
                return
            }
        }
    }

    @Test func itRepeatsEverySecondAndASeekLandsWhereThePatternIs() {
        let first = oneSecond(rate: 8_000)
        var tone = AlarmToneSource(sampleRate: 8_000)
        var two = [Float](repeating: 0, count: 16_000)
        _ = two.withUnsafeMutableBufferPointer { tone.read(into: $0) }
        #expect(Array(two[8_000...]) == first)
        let fromQuarter = oneSecond(rate: 8_000, from: 2.25)
        #expect(Array(fromQuarter[0 ..< 6_000]) == Array(first[2_000 ..< 8_000]))
    }
}

import Foundation
import SnoozeFuseCore
import Testing

@Suite("Every alarm sound at one loudness: the gain, limited by the true peak")
struct AlarmLoudnessTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var integrated: Double?
        var truePeak: Double
        var gain: Double
        var limit: AlarmLoudness.Limit?
        var testDescription: String { "\(integrated.map { "\($0)" } ?? "silent") LUFS, \(truePeak) dBTP" }
    }

    static let rows: [Row] = [
        // The default built-in (beep, -5 LUFS as it plays): as it is.
        Row(integrated: -5, truePeak: -3.1, gain: 0, limit: nil),
        // Louder than the target: lowered, whatever its peaks.
        Row(integrated: -3.9, truePeak: -3.1, gain: -1.1, limit: nil),
        Row(integrated: -2, truePeak: 0.8, gain: -3, limit: nil),
        // The issue's -46 dBFS sine (-46 LUFS on two speakers): raised all the way, 40 dB at most.
        Row(integrated: -46, truePeak: -46, gain: 40, limit: .largestGain),
        // A quiet file (-30 dBFS): raised to the target.
        Row(integrated: -30, truePeak: -30, gain: 25, limit: nil),
        // Peaky: raised until its true peak reaches -1 dBTP.
        Row(integrated: -12.9, truePeak: -3, gain: 2, limit: .truePeak),
        Row(integrated: -20, truePeak: -0.5, gain: 0, limit: .truePeak),
        // Silent: nothing to raise.
        Row(integrated: nil, truePeak: -.infinity, gain: 0, limit: nil),
    ]

    @Test(arguments: rows)
    func gains(_ row: Row) {
        let (decibels, limit) = AlarmLoudness.gain(integrated: row.integrated, truePeak: row.truePeak)
        #expect(abs(decibels - row.gain) < 1e-9, "\(decibels)")
        #expect(limit == row.limit)
        if let played = AlarmLoudness.played(integrated: row.integrated, truePeak: row.truePeak), row.limit == nil {
            #expect(abs(played - AlarmLoudness.target) < 1e-9)
        }
        // Never raised above the ceiling.
        if decibels > 0 { #expect(row.truePeak + decibels <= AlarmLoudness.ceiling + 1e-9) }
    }

    @Test func decibelsBecomeTheAmplitudeFactorLibmWouldGive() {
        for decibels in stride(from: -60.0, through: 40.0, by: 0.7) {
            let ours = AlarmLoudness.factor(decibels)
            #expect(abs(ours / pow(10, decibels / 20) - 1) < 1e-12, "\(decibels) dB")
        }
        #expect(AlarmLoudness.factor(0) == 1)
    }

    @Test func describesWhatItDoesInWords() {
        #expect(AlarmLoudness.describe(integrated: -5, truePeak: -3.1) == "-5.0 LUFS, true peak -3.1 dBTP: plays as it is, at the alarm's loudness (-5.0 LUFS)")
        #expect(AlarmLoudness.describe(integrated: -20, truePeak: -6)
            == "-20.0 LUFS, true peak -6.0 dBTP: plays +5.0 dB, -15.0 LUFS: its peaks keep it 10.0 dB below the alarm's loudness (-5.0 LUFS) without clipping; a louder or less peaky sound would wake better")
        #expect(AlarmLoudness.describe(integrated: nil, truePeak: -.infinity) == nil)
        #expect(AlarmLoudness.tenths(-0.04) == "0.0", "no minus sign on nothing")
        #expect(AlarmLoudness.tenths(12.345) == "12.3")
    }

    /// The floor of the proof: -28 dBFS for the alarm at full volume on a sink at 100 %, lowered by
    /// the volume, the fade and the sink's cubic volume; the issue's whisper (-51 dBFS on the
    /// monitor at --volume 80) is below it, a sound at the alarm's loudness far above.
    @Test func theProofsFloorFollowsVolumeFadeAndTheSinksVolume() {
        func dB(_ x: Double) -> Double { 20 * log10(x) }
        let full = AlarmLoudness.target - AlarmLoudness.proofRoom
        #expect(full == -28)
        #expect(abs(dB(AlarmLoudness.proofFloor(volume: 1, fade: 1, sinkVolumePercent: 100)) - full) < 1e-9)
        #expect(abs(dB(AlarmLoudness.proofFloor(volume: 0.8, fade: 1, sinkVolumePercent: 100)) - (full + dB(0.8))) < 1e-9)
        #expect(abs(dB(AlarmLoudness.proofFloor(volume: 1, fade: 0.5, sinkVolumePercent: 60)) - (full + dB(0.5) + 3 * dB(0.6))) < 1e-9)
        #expect(AlarmLoudness.proofFloor(volume: 1, fade: 0, sinkVolumePercent: 100) == 0, "the fade's first frame proves at any level")
        let whisper = pow(10, -51.0 / 20)
        #expect(whisper < AlarmLoudness.proofFloor(volume: 0.8, fade: 1, sinkVolumePercent: 100))
        let atTheTarget = pow(10, (AlarmLoudness.target - 3) / 20)
        #expect(atTheTarget > 10 * AlarmLoudness.proofFloor(volume: 0.8, fade: 1, sinkVolumePercent: 100))
    }
}

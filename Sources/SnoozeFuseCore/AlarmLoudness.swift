/// How loud the alarm plays (EBU R 128): every sound at one target loudness before `--volume`
/// applies, so that a quiet file rings as loud as a built-in one. The target is the loudness of
/// the default built-in sound (`beep`: −5 LUFS measured as it plays, a mono sound on two speakers;
/// −8 LUFS counted as one channel): an alarm is meant to wake, and the default alarm stays as loud
/// as it always was. (Streaming services play music at −14 to −16 LUFS, for listening; an alarm at
/// that level would be a quieter alarm.)
///
/// A sound is raised or lowered by the difference between the target and its integrated
/// loudness, but never raised so far that its true peak goes above −1 dBTP (it would clip), nor
/// by more than 40 dB (what is that far below is noise, not a sound). A pure decision,
/// table-tested.
public enum AlarmLoudness {
    /// The loudness every alarm sound is brought to, in LUFS.
    public static let target = -5.0
    /// The highest true peak a sound may be raised to, in dBTP.
    public static let ceiling = -1.0
    /// The most a sound is raised, in dB.
    public static let largestGain = 40.0

    /// What holds a sound back from the target.
    public enum Limit: String, Sendable, Hashable {
        /// Its true peak: raised all the way, it would clip.
        case truePeak = "true_peak"
        /// It is so quiet that the most a sound is raised is not enough.
        case largestGain = "largest_gain"
    }

    /// The gain in dB that brings a sound of `integrated` LUFS whose true peak is `truePeak` dBTP to
    /// the target, and what limited it (nil when it reaches the target). A silent sound (no
    /// integrated loudness: everything below −70 LUFS) is left as it is.
    public static func gain(integrated: Double?, truePeak: Double) -> (decibels: Double, limit: Limit?) {
        guard let integrated, integrated.isFinite else { return (0, nil) }
        var decibels = target - integrated
        var limit: Limit?
        // Raised only as far as its peaks allow (lowered, it clips less than before).
        if decibels > 0, truePeak.isFinite, truePeak + decibels > ceiling {
            decibels = max(ceiling - truePeak, 0)
            limit = .truePeak
        }
        if decibels > largestGain {
            decibels = largestGain
            limit = .largestGain
        }
        return (decibels, limit)
    }

    /// How far below the alarm's loudness a sink's monitor may carry it and still prove it heard:
    /// room for a sound its peaks hold below the target, its quieter passages, a block of its
    /// pauses, and the 3 dB of a mono monitor's mix of two channels.
    public static let proofRoom = 23.0

    /// The quietest a sink's monitor may carry the alarm (RMS, full scale 1) and count as hearing
    /// it: the target loudness, lowered by `--volume` (`volume`, linear), the fade-in so far
    /// (`fade`, linear) and the sink's own volume (`sinkVolumePercent`, on the servers' cubic
    /// scale), less ``proofRoom``. A sound played far below it (a whisper of a file that could not
    /// be raised, a stream turned down in a mixer) is not heard: the nap fixes levels, then escalates.
    public static func proofFloor(volume: Double, fade: Double, sinkVolumePercent: Int) -> Double {
        let sink = Double(max(sinkVolumePercent, 0)) / 100
        return factor(target - proofRoom) * max(volume, 0) * max(fade, 0) * sink * sink * sink
    }

    /// `decibels` as an amplitude factor.
    public static func factor(_ decibels: Double) -> Double {
        power(10, decibels / 20)
    }

    /// The loudness a sound plays at after ``gain(integrated:truePeak:)``.
    public static func played(integrated: Double?, truePeak: Double) -> Double? {
        integrated.map { $0 + gain(integrated: integrated, truePeak: truePeak).decibels }
    }

    /// One line for people on what the alarm does with a sound's loudness (nil for a silent one).
    public static func describe(integrated: Double?, truePeak: Double) -> String? {
        guard let integrated, integrated.isFinite else { return nil }
        let (decibels, limit) = gain(integrated: integrated, truePeak: truePeak)
        let loud = "\(tenths(integrated)) LUFS, true peak \(truePeak.isFinite ? tenths(truePeak) : "-inf") dBTP"
        let change = abs(decibels) < 0.05 ? "plays as it is" : "plays \(decibels > 0 ? "+" : "")\(tenths(decibels)) dB"
        switch limit {
        case nil:
            return "\(loud): \(change), at the alarm's loudness (\(tenths(target)) LUFS)"
        case .truePeak?:
            return "\(loud): \(change), \(tenths(integrated + decibels)) LUFS: its peaks keep it \(tenths(target - integrated - decibels)) dB below the alarm's loudness (\(tenths(target)) LUFS) without clipping; a louder or less peaky sound would wake better"
        case .largestGain?:
            return "\(loud): \(change) (the most a sound is raised), \(tenths(integrated + decibels)) LUFS, still \(tenths(target - integrated - decibels)) dB below the alarm's loudness (\(tenths(target)) LUFS)"
        }
    }

    /// `value` with one decimal (`-8.0`, `12.3`), without Foundation.
    public static func tenths(_ value: Double) -> String {
        let scaled = (value * 10).rounded()
        let whole = Int(abs(scaled)) / 10, tenth = Int(abs(scaled)) % 10
        return "\(scaled < 0 ? "-" : "")\(whole).\(tenth)"
    }

    /// base^exponent for base > 0 (exp(exponent · ln(base))), without the C maths library.
    static func power(_ base: Double, _ exponent: Double) -> Double {
        exponential(exponent * logarithm(base))
    }

    /// ln(x) for x > 0: x = m · 2^e with m in [1, 2), then the series of atanh.
    static func logarithm(_ x: Double) -> Double {
        guard x > 0, x.isFinite else { return x == 0 ? -.infinity : .nan }
        let exponent = Double(x.exponent)
        let mantissa = x.significand
        let y = (mantissa - 1) / (mantissa + 1), square = y * y
        var term = y, sum = 0.0
        for k in stride(from: 1, through: 41, by: 2) {
            sum += term / Double(k)
            term *= square
        }
        return 2 * sum + exponent * 0.693_147_180_559_945_3
    }

    /// e^x: e^x = 2^k · e^r with |r| ≤ ln 2 / 2, then its series.
    static func exponential(_ x: Double) -> Double {
        guard x.isFinite else { return x > 0 ? .infinity : 0 }
        guard x < 709 else { return .infinity }
        guard x > -745 else { return 0 }
        let ln2 = 0.693_147_180_559_945_3
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0, sum = 1.0
        for n in 1 ... 20 {
            term *= r / Double(n)
            sum += term
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }
}

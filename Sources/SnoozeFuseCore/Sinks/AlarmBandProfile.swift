/// The shape of a sound's spectrum below 4 kHz in a few bands: the fingerprint by which the alarm
/// recognises itself in a sink's monitor (SPEC §9: proof that it is heard).
///
/// The alarm knows what it wrote; the monitor carries what the sink plays (a muted sink's monitor is
/// silent). The monitor counts as proof when its level is a real share of what was written and its
/// band shape matches the shape of what was written: another program's audio on the same sink (a
/// voice, music, noise) has another shape and proves nothing. Gain (fade-in, volume) changes the
/// level, never the shape.
public struct AlarmBandProfile: Sendable, Hashable {
    /// Mean power per band.
    public var bands: [Double]
    /// RMS of the analysed samples (full scale = 1).
    public var level: Double

    public init(bands: [Double], level: Double) {
        self.bands = bands
        self.level = level
    }

    /// The band edges in Hz: 24 bands spaced evenly on a log scale from 150 Hz to 3.9 kHz (a
    /// monitor read at 8 kHz carries up to 4 kHz).
    public static let edges: [Double] = {
        let low = 150.0, high = 3_900.0, count = 24
        // The ratio between neighbouring edges: the 24th root of high / low, by bisection (Core
        // uses no C maths library).
        var below = 1.0, above = 2.0
        for _ in 0 ..< 100 {
            let middle = (below + above) / 2
            var power = 1.0
            for _ in 0 ..< count { power *= middle }
            if power < high / low { below = middle } else { above = middle }
        }
        var edges = [low]
        for _ in 0 ..< count { edges.append(edges[edges.count - 1] * below) }
        return edges
    }()

    /// The profile of `samples` (interleaved, `channels` per frame; the first channel is analysed)
    /// at `sampleRate`: windows of about 64 ms, Hann-weighted, averaged. Makes its tables each
    /// time: what profiles a stream keeps an ``AlarmBandAnalyser``.
    public static func of(_ samples: UnsafeBufferPointer<Float>, channels: Int, sampleRate: Int) -> AlarmBandProfile {
        var analyser = AlarmBandAnalyser(sampleRate: sampleRate)
        return analyser.profile(of: samples, channels: channels)
    }

    /// The profile of `samples` (one channel).
    public static func of(_ samples: [Float], sampleRate: Int) -> AlarmBandProfile {
        samples.withUnsafeBufferPointer { of($0, channels: 1, sampleRate: sampleRate) }
    }

    /// How alike two shapes are, from 0 (nothing in common) to 1 (the same shape at any gain):
    /// the cosine of their band amplitudes.
    public func similarity(to other: AlarmBandProfile) -> Double {
        var dot = 0.0, mine = 0.0, theirs = 0.0
        for (a, b) in zip(bands, other.bands) {
            let x = a.squareRoot(), y = b.squareRoot()
            dot += x * y
            mine += x * x
            theirs += y * y
        }
        guard mine > 0, theirs > 0 else { return 0 }
        return dot / (mine.squareRoot() * theirs.squareRoot())
    }

    /// The mean of several profiles (what was written over the last seconds).
    public static func mean(_ profiles: [AlarmBandProfile]) -> AlarmBandProfile? {
        guard let first = profiles.first else { return nil }
        var bands = [Double](repeating: 0, count: first.bands.count)
        var level = 0.0
        for profile in profiles {
            for index in bands.indices where index < profile.bands.count { bands[index] += profile.bands[index] }
            level += profile.level * profile.level
        }
        let count = Double(profiles.count)
        return AlarmBandProfile(bands: bands.map { $0 / count }, level: (level / count).squareRoot())
    }
}

/// Decides whether a sink's monitor carries the alarm, from what was written lately.
public struct AlarmHeardTest: Sendable, Hashable {
    /// The shapes must be at least this alike.
    public var minimumSimilarity: Double
    /// The monitor's level must be at least this share of the level written (a sink at a sixth of
    /// its normal volume, or more, passes; a muted one, or one at a few percent, does not).
    public var minimumLevelRatio: Double
    /// And at least this loud in absolute terms (−70 dBFS): below it nothing is heard.
    public var minimumLevel: Double

    public init(minimumSimilarity: Double = 0.75, minimumLevelRatio: Double = 0.02, minimumLevel: Double = 0.000_316) {
        self.minimumSimilarity = minimumSimilarity
        self.minimumLevelRatio = minimumLevelRatio
        self.minimumLevel = minimumLevel
    }

    /// Whether `monitor` proves `written` is heard.
    public func proves(_ monitor: AlarmBandProfile, written: AlarmBandProfile) -> Bool {
        guard written.level > 0, monitor.level >= minimumLevel, monitor.level >= written.level * minimumLevelRatio else { return false }
        return monitor.similarity(to: written) >= minimumSimilarity
    }
}

/// Profiles blocks of one stream at one sample rate (windows of about 64 ms, Hann-weighted,
/// averaged): the FFT's tables and each band's bins are made once, when the stream starts, not
/// for each block. A profile every quarter second of a 48 kHz stream is about a millisecond of
/// work per second (the tables, made each time, were several).
public struct AlarmBandAnalyser: Sendable {
    public let sampleRate: Int
    private var spectrum: RealSpectrum
    /// The bins of each band (a band narrower than a bin takes the nearest bin).
    private let bandBins: [ClosedRange<Int>]
    private var powers: [Double]

    public init(sampleRate: Int) {
        self.sampleRate = max(sampleRate, 1)
        var size = 256
        while size < self.sampleRate * 64 / 1000 { size *= 2 }
        spectrum = RealSpectrum(size: size)
        powers = [Double](repeating: 0, count: size / 2 + 1)
        let binWidth = Double(self.sampleRate) / Double(size)
        let lastBin = size / 2
        let edges = AlarmBandProfile.edges
        bandBins = (0 ..< edges.count - 1).map { band in
            let first = max(Int((edges[band] / binWidth).rounded(.up)), 1)
            let last = min(Int((edges[band + 1] / binWidth).rounded(.down)), lastBin)
            return first <= last ? first ... last : min(first, lastBin) ... min(first, lastBin)
        }
    }

    /// The profile of `samples` (interleaved, `channels` per frame; the first channel is analysed).
    public mutating func profile(of samples: UnsafeBufferPointer<Float>, channels: Int) -> AlarmBandProfile {
        let channels = max(channels, 1)
        let frames = samples.count / channels
        let size = spectrum.size
        var sumSquares = 0.0
        for frame in 0 ..< frames {
            let value = Double(samples[frame * channels])
            sumSquares += value * value
        }
        let level = frames > 0 ? (sumSquares / Double(frames)).squareRoot() : 0
        var bands = [Double](repeating: 0, count: bandBins.count)
        guard frames >= size else { return AlarmBandProfile(bands: bands, level: level) }
        var windows = 0
        var start = 0
        while start + size <= frames {
            spectrum.transform(samples, from: start, channels: channels, powers: &powers)
            for (band, bins) in bandBins.enumerated() {
                var sum = 0.0
                for bin in bins { sum += powers[bin] }
                bands[band] += sum / Double(bins.count)
            }
            windows += 1
            start += size
        }
        for band in bands.indices { bands[band] /= Double(windows) }
        return AlarmBandProfile(bands: bands, level: level)
    }
}

/// The power spectrum of a block of real samples: a radix-2 FFT, its tables made once per size.
struct RealSpectrum: Sendable {
    let size: Int
    private var real: [Double]
    private var imaginary: [Double]
    private let window: [Double]
    private let cosines: [Double]
    private let sines: [Double]
    /// Each index's bit-reversed partner.
    private let reversed: [Int]

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "the size must be a power of two")
        self.size = size
        real = [Double](repeating: 0, count: size)
        imaginary = [Double](repeating: 0, count: size)
        let angle = { (index: Int) in 2 * Double.pi * Double(index) / Double(size) }
        window = (0 ..< size).map { 0.5 - 0.5 * Trigonometry.cosine(angle($0)) }
        cosines = (0 ..< size / 2).map { Trigonometry.cosine(angle($0)) }
        sines = (0 ..< size / 2).map { -Trigonometry.sine(angle($0)) }
        var reversed = [Int](repeating: 0, count: size)
        var target = 0
        for index in 0 ..< size {
            reversed[index] = target
            var bit = size >> 1
            while target & bit != 0 {
                target ^= bit
                bit >>= 1
            }
            target |= bit
        }
        self.reversed = reversed
    }

    /// Transforms `size` frames of `samples` from frame `start` (the first of `channels`),
    /// Hann-weighted, and writes the power of each bin from 0 to size/2 into `powers`.
    mutating func transform(_ samples: UnsafeBufferPointer<Float>, from start: Int, channels: Int, powers: inout [Double]) {
        let size = size
        precondition(samples.count >= (start + size) * channels && powers.count > size / 2)
        window.withUnsafeBufferPointer { window in
        reversed.withUnsafeBufferPointer { reversed in
        cosines.withUnsafeBufferPointer { cosines in
        sines.withUnsafeBufferPointer { sines in
        real.withUnsafeMutableBufferPointer { real in
        imaginary.withUnsafeMutableBufferPointer { imaginary in
            // Loaded in bit-reversed order, so the butterflies work in place.
            for index in 0 ..< size {
                real[reversed[index]] = Double(samples[(start + index) * channels]) * window[index]
                imaginary[index] = 0
            }
            var length = 2
            while length <= size {
                let half = length / 2, step = size / length
                var first = 0
                while first < size {
                    for offset in 0 ..< half {
                        let c = cosines[offset * step], s = sines[offset * step]
                        let a = first + offset, b = a + half
                        let tr = real[b] * c - imaginary[b] * s
                        let ti = real[b] * s + imaginary[b] * c
                        real[b] = real[a] - tr
                        imaginary[b] = imaginary[a] - ti
                        real[a] += tr
                        imaginary[a] += ti
                    }
                    first += length
                }
                length *= 2
            }
            powers.withUnsafeMutableBufferPointer { powers in
                for bin in 0 ... size / 2 { powers[bin] = real[bin] * real[bin] + imaginary[bin] * imaginary[bin] }
            }
        }}}}}}
    }
}

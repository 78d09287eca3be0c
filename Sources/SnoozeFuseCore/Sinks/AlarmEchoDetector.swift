/// Finds what the alarm wrote in what a sink's monitor recorded (SPEC §9: played is not heard):
/// the proof that a sink carries this nap's alarm, whatever its sound, and never another
/// program's audio.
///
/// What was written (mixed to mono, at the stream's rate) is kept for the last few seconds. Each
/// monitor (mono, at the same rate) is cut into blocks of ``blockFrames``; each block is looked
/// for in what was written, at every delay up to ``maximumDelayFrames`` (the server's buffers and
/// the monitor's own latency), by the normalised cross-correlation of the two waveforms:
///
///     ρ(d) = Σ m[i]·w[i+d] / √(Σ m[i]² · Σ w[i+d]²)
///
/// It is 1 for the same waveform at any gain and near 0 for anything else: it does not depend on
/// the sound's spectrum (a tone, a chord, a sweep, noise, speech) or its level. Another program's
/// audio on the same sink (other music, other noise, even the same file played 3 s later) is not
/// what was written at any delay within the window, and proves nothing. A sink that carries the
/// alarm and other audio at once shows the alarm's share of the power.
///
/// Once found, the delay is kept (the stream and the monitor run on the sink's one clock), and
/// each later block is checked at that delay and its neighbours only: a search over the whole
/// window (two transforms of 2¹⁷ points at 48 kHz) runs when a monitor has no delay yet or lost it,
/// at most every ``searchSpacingFrames``. A block found by a search proves the alarm at once when
/// it is nearly the same waveform (``sureThreshold``); otherwise once the next block is found at
/// the same delay: one lucky match of a tone in other music is not proof.
///
/// A pure value: no clock, no I/O. The output that plays feeds it what it writes and what each
/// monitor records, in the order they happen.
public struct AlarmEchoDetector: Sendable {
    /// What one block of a monitor showed.
    public struct Verdict: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            /// The block carries what was written: proof.
            case matched
            /// Sound, but not what was written (or found once and not yet confirmed).
            case unmatched
            /// Digital silence: a muted sink, a stream muted, nothing playing.
            case silent
            /// What was written where the block lies is silence itself (a pause in the alarm, its
            /// first silent seconds): the block proves nothing either way.
            case nothingWritten
        }

        public var monitor: String
        public var kind: Kind
        /// The best normalised correlation found (0 when none was computed).
        public var correlation: Double
        /// RMS of the monitor's block (full scale 1).
        public var monitorLevel: Double
        /// RMS of what was written where the block lies (matched), else 0.
        public var writtenLevel: Double
        /// The index (in frames written since the start) of the first written frame the block
        /// carries; nil unless matched.
        public var writtenFrame: Int?

        public init(monitor: String, kind: Kind, correlation: Double = 0, monitorLevel: Double = 0,
                    writtenLevel: Double = 0, writtenFrame: Int? = nil) {
            self.monitor = monitor
            self.kind = kind
            self.correlation = correlation
            self.monitorLevel = monitorLevel
            self.writtenLevel = writtenLevel
            self.writtenFrame = writtenFrame
        }
    }

    public let sampleRate: Int
    /// The frames of one block of a monitor (a quarter second).
    public let blockFrames: Int
    /// How far behind what is written a monitor may run.
    public let maximumDelayFrames: Int
    /// How often a monitor without a delay is searched at most.
    public let searchSpacingFrames: Int

    /// A search must find at least this correlation.
    public static let searchThreshold = 0.6
    /// A search that finds this much needs no second block: nothing but the alarm itself (or a
    /// waveform no recording can tell from it) comes so close.
    public static let sureThreshold = 0.9
    /// A delay already found keeps holding down to this (a little other audio on the same sink,
    /// a resampler's phase): hysteresis against flickering between proof and none.
    public static let keepThreshold = 0.5
    /// Below this RMS (−90 dBFS) a block is silence.
    public static let silenceLevel = 0.000_031_6
    /// A monitor this loud (−40 dBFS RMS) where the delay kept says the alarm wrote silence is
    /// not carrying the alarm's pause.
    static let loudInAPause = 0.01
    /// How many frames either side of a kept delay each block is checked at.
    static let trackRadius = 2
    /// Taps either side of the correlation's peak that its value between two frames is
    /// interpolated from (a tone near half the rate peaks between frames).
    static let interpolationRadius = 8

    private var written: [Float]
    /// Frames written since the start (the next frame's index).
    public private(set) var writtenCount = 0
    private var monitors: [String: Track] = [:]
    private var search = CrossCorrelation()
    private var correlations: [Float] = []
    private var window: [Float] = []

    /// One monitor's progress.
    struct Track: Sendable {
        /// Frames recorded since the monitor started (gaps counted).
        var recorded = 0
        /// The block being filled, and the monitor index of its first frame.
        var block: [Float] = []
        var blockStart = 0
        /// A written frame's index minus the monitor frame's that carries it, once found.
        var delay: Int?
        /// The delay was confirmed by a second block (found by a search: not yet).
        var confirmed = false
        /// Where the last search that found nothing began.
        var lastFailedSearch: Int?
    }

    /// - Parameters:
    ///   - sampleRate: the stream's rate, which the monitors are read at too.
    ///   - maximumDelay: how far behind what is written a monitor may run (the stream's buffer,
    ///     the server's and the monitor's latency).
    public init(sampleRate: Int, maximumDelay: Duration = .milliseconds(1_500), block: Duration = .milliseconds(250),
                searchSpacing: Duration? = nil) {
        let rate = max(sampleRate, 1)
        self.sampleRate = rate
        func frames(_ duration: Duration) -> Int {
            let (seconds, attoseconds) = duration.components
            return max(Int(seconds) * rate + Int(Double(attoseconds) / 1e18 * Double(rate)), 1)
        }
        blockFrames = frames(block)
        maximumDelayFrames = frames(maximumDelay)
        // Every block by default: a search that just missed the first frames of a sound (its
        // block mostly silence) must not hold the next one back. Searches cost only where no
        // delay holds: an alarm that is heard is searched for once.
        searchSpacingFrames = searchSpacing.map(frames) ?? blockFrames
        written = [Float](repeating: 0, count: maximumDelayFrames + 3 * blockFrames + 2 * Self.interpolationRadius)
    }

    /// The oldest written frame still kept. Frames before the first (negative indices) are
    /// silence: a monitor starts before the stream it carries is played.
    private var oldestKept: Int { writtenCount - written.count }

    // MARK: - Feeding

    /// Notes what was written: `samples` interleaved with `channels` per frame, mixed to mono
    /// as the server mixes a monitor (the mean of the channels).
    public mutating func wrote(_ samples: UnsafeBufferPointer<Float>, channels: Int) {
        let channels = max(channels, 1)
        let frames = samples.count / channels
        let capacity = written.count
        let scale = 1 / Float(channels)
        written.withUnsafeMutableBufferPointer { ring in
            var slot = writtenCount % capacity
            for frame in 0 ..< frames {
                var sum: Float = 0
                for channel in 0 ..< channels { sum += samples[frame * channels + channel] }
                ring[slot] = sum * scale
                slot += 1
                if slot == capacity { slot = 0 }
            }
        }
        writtenCount += frames
    }

    /// Notes what `monitor` recorded (mono, at ``sampleRate``) and returns a verdict for each block
    /// it completed.
    public mutating func recorded(_ samples: UnsafeBufferPointer<Float>, from monitor: String) -> [Verdict] {
        var track = monitors[monitor] ?? Track()
        var verdicts: [Verdict] = []
        var index = 0
        while index < samples.count {
            if track.block.isEmpty { track.blockStart = track.recorded }
            let take = min(blockFrames - track.block.count, samples.count - index)
            track.block.append(contentsOf: UnsafeBufferPointer(rebasing: samples[index ..< index + take]))
            track.recorded += take
            index += take
            if track.block.count == blockFrames {
                verdicts.append(judge(&track, monitor: monitor))
                track.block.removeAll(keepingCapacity: true)
            }
        }
        monitors[monitor] = track
        return verdicts
    }

    /// `monitor` skipped `frames` (a hole in its recording): the block under way starts again
    /// after it; a delay found stays.
    public mutating func recordedGap(frames: Int, from monitor: String) {
        var track = monitors[monitor] ?? Track()
        track.recorded += max(frames, 0)
        track.block.removeAll(keepingCapacity: true)
        monitors[monitor] = track
    }

    /// `monitor` is no longer read.
    public mutating func forget(_ monitor: String) {
        monitors.removeValue(forKey: monitor)
    }

    /// The delay found for `monitor` in frames (what was written that long before is what it
    /// carries now), once confirmed.
    public func delay(of monitor: String) -> Int? {
        monitors[monitor].flatMap { $0.confirmed ? $0.delay : nil }
    }

    // MARK: - Judging a block

    private mutating func judge(_ track: inout Track, monitor: String) -> Verdict {
        let level = track.block.withUnsafeBufferPointer { Self.rms($0) }
        guard level >= Self.silenceLevel else { return Verdict(monitor: monitor, kind: .silent, monitorLevel: level) }
        if let delay = track.delay {
            if let verdict = follow(&track, delay: delay, monitor: monitor, level: level) { return verdict }
            track.delay = nil
            track.confirmed = false
            track.lastFailedSearch = nil
        }
        if let failed = track.lastFailedSearch, track.blockStart - failed < searchSpacingFrames {
            return Verdict(monitor: monitor, kind: .unmatched, monitorLevel: level)
        }
        return find(&track, monitor: monitor, level: level)
    }

    /// Checks the block at the delay kept and its neighbours. Nil when it is no longer there.
    private func follow(_ track: inout Track, delay: Int, monitor: String, level: Double) -> Verdict? {
        var best: (correlation: Double, delay: Int, writtenLevel: Double)?
        for candidate in delay - Self.trackRadius ... delay + Self.trackRadius {
            guard let (correlation, writtenLevel) = correlation(of: track.block, at: track.blockStart + candidate) else { continue }
            if writtenLevel < Self.silenceLevel {
                // The alarm's own pause: nothing to find, and no reason to lose the delay; unless
                // the monitor is loud there, which says the delay is wrong (a sound that repeats
                // within a block matched a whole repeat off): it is searched for again.
                guard level < Self.loudInAPause else { return nil }
                return Verdict(monitor: monitor, kind: .nothingWritten, monitorLevel: level)
            }
            if best.map({ correlation > $0.correlation }) ?? true { best = (correlation, candidate, writtenLevel) }
        }
        guard var best else { return nil }
        // A delay a search found but did not confirm must be found again as clearly as a search
        // finds; once confirmed, it holds down to the lower threshold.
        let threshold = track.confirmed ? Self.keepThreshold : Self.searchThreshold
        if best.correlation < threshold {
            best.correlation = max(best.correlation, interpolatedPeak(of: track.block, at: track.blockStart + best.delay))
        }
        guard best.correlation >= threshold else { return nil }
        track.delay = best.delay
        track.confirmed = true
        return Verdict(monitor: monitor, kind: .matched, correlation: best.correlation, monitorLevel: level,
                       writtenLevel: best.writtenLevel, writtenFrame: track.blockStart + best.delay)
    }

    /// Searches the whole window of delays for the block.
    private mutating func find(_ track: inout Track, monitor: String, level: Double) -> Verdict {
        let blockFrames = blockFrames
        // The block's first frame was written at most the maximum delay before the last frame
        // written, and its last frame no later than that.
        let first = max(writtenCount - maximumDelayFrames - blockFrames, oldestKept)
        let count = writtenCount - first
        guard count >= blockFrames else { return Verdict(monitor: monitor, kind: .nothingWritten, monitorLevel: level) }
        copyWritten(from: first, count: count, into: &window)
        let loudest = window.withUnsafeBufferPointer { Self.peak($0) }
        guard Double(loudest) >= Self.silenceLevel else { return Verdict(monitor: monitor, kind: .nothingWritten, monitorLevel: level) }
        track.block.withUnsafeBufferPointer { block in
            window.withUnsafeBufferPointer { window in
                search.correlate(block, within: window, into: &correlations)
            }
        }
        // Normalised by the window's energy under the block at each lag (a running sum).
        let blockEnergy = track.block.withUnsafeBufferPointer { Self.energy($0) }
        let silentEnergy = Self.silenceLevel * Self.silenceLevel * Double(blockFrames)
        // A periodic sound (a tone) matches at every whole period: among the lags as good as the
        // best, the one nearest the middle of the window keeps the most room either side as the
        // stream and the monitor move on.
        var best: (correlation: Double, lag: Int) = (0, 0)
        let middle = correlations.count / 2
        window.withUnsafeBufferPointer { window in
            var energy = 0.0
            for index in 0 ..< blockFrames { energy += Double(window[index]) * Double(window[index]) }
            for lag in 0 ..< correlations.count {
                if lag > 0 {
                    let leaving = Double(window[lag - 1]), entering = Double(window[lag + blockFrames - 1])
                    energy = max(energy + entering * entering - leaving * leaving, 0)
                }
                // The running sum leaves a little rounding behind a loud stretch: a window that is
                // silence (below -90 dBFS) must not look like a perfect match of nothing.
                guard energy > silentEnergy else { continue }
                let value = Double(correlations[lag]) / (energy * blockEnergy).squareRoot()
                if value > best.correlation + 0.01 || (value > best.correlation - 0.01 && abs(lag - middle) < abs(best.lag - middle)) {
                    best = (max(value, best.correlation), lag)
                }
            }
        }
        let start = first + best.lag
        guard case (var correlation, let writtenLevel)? = correlation(of: track.block, at: start) else {
            track.lastFailedSearch = track.blockStart
            return Verdict(monitor: monitor, kind: .unmatched, monitorLevel: level)
        }
        if correlation < Self.searchThreshold, correlation > Self.keepThreshold / 2 {
            correlation = max(correlation, interpolatedPeak(of: track.block, at: start))
        }
        guard correlation >= Self.searchThreshold else {
            track.lastFailedSearch = track.blockStart
            return Verdict(monitor: monitor, kind: .unmatched, correlation: correlation, monitorLevel: level)
        }
        // Found: it proves the alarm now when it is sure, else once the next block is found there.
        track.delay = start - track.blockStart
        track.confirmed = correlation >= Self.sureThreshold
        track.lastFailedSearch = nil
        return Verdict(monitor: monitor, kind: track.confirmed ? .matched : .unmatched, correlation: correlation, monitorLevel: level,
                       writtenLevel: writtenLevel, writtenFrame: track.confirmed ? start : nil)
    }

    // MARK: - Arithmetic

    /// The normalised correlation of `block` with what was written from frame `start`, and the
    /// RMS of that; nil when those frames are not (or no longer) kept.
    private func correlation(of block: [Float], at start: Int) -> (Double, Double)? {
        let count = block.count
        guard start >= oldestKept, start + count <= writtenCount else { return nil }
        let capacity = written.count
        var dot = 0.0, mine = 0.0, theirs = 0.0
        block.withUnsafeBufferPointer { block in
            written.withUnsafeBufferPointer { ring in
                // Before the first frame written: silence, which adds only to the block's energy.
                var index = min(max(-start, 0), count)
                for early in 0 ..< index { mine += Double(block[early]) * Double(block[early]) }
                var slot = (start + index) % capacity
                // Float sums in short runs, gathered in Double: fast and exact enough.
                while index < count {
                    let run = min(256, count - index)
                    var d: Float = 0, m: Float = 0, t: Float = 0
                    for offset in 0 ..< run {
                        let x = block[index + offset], w = ring[slot]
                        d += x * w
                        m += x * x
                        t += w * w
                        slot += 1
                        if slot == capacity { slot = 0 }
                    }
                    dot += Double(d)
                    mine += Double(m)
                    theirs += Double(t)
                    index += run
                }
            }
        }
        let writtenLevel = (theirs / Double(count)).squareRoot()
        guard mine > 0, theirs > 0 else { return (0, writtenLevel) }
        return (dot / (mine * theirs).squareRoot(), writtenLevel)
    }

    /// The correlation's peak between frames near `start`: its values at whole frames either side,
    /// interpolated (windowed sinc) at tenths of a frame. A tone near half the rate can fall
    /// almost between two frames, where the value at either is well below its true peak.
    private func interpolatedPeak(of block: [Float], at start: Int) -> Double {
        let radius = Self.interpolationRadius
        var values: [Double] = []
        var energy = 0.0
        for offset in -radius ... radius {
            guard let (value, writtenLevel) = correlation(of: block, at: start + offset) else { return 0 }
            values.append(value)
            if offset == 0 { energy = writtenLevel }
        }
        guard energy > 0 else { return 0 }
        var best = 0.0
        for tenth in -5 ... 5 {
            let shift = Double(tenth) / 10
            var sum = 0.0
            for (index, value) in values.enumerated() {
                let distance = shift - Double(index - radius)
                // sinc · Hann over the taps.
                let sinc = distance == 0 ? 1 : Trigonometry.sine(Double.pi * distance) / (Double.pi * distance)
                let hann = 0.5 + 0.5 * Trigonometry.cosine(Double.pi * distance / Double(radius + 1))
                sum += value * sinc * hann
            }
            best = max(best, sum)
        }
        return min(best, 1)
    }

    private func copyWritten(from start: Int, count: Int, into buffer: inout [Float]) {
        if buffer.count != count { buffer = [Float](repeating: 0, count: count) }
        let capacity = written.count
        written.withUnsafeBufferPointer { ring in
            buffer.withUnsafeMutableBufferPointer { buffer in
                let early = min(max(-start, 0), count)
                for index in 0 ..< early { buffer[index] = 0 }
                var slot = (start + early) % capacity
                for index in early ..< count {
                    buffer[index] = ring[slot]
                    slot += 1
                    if slot == capacity { slot = 0 }
                }
            }
        }
    }

    static func energy(_ samples: UnsafeBufferPointer<Float>) -> Double {
        var sum = 0.0
        for sample in samples { sum += Double(sample) * Double(sample) }
        return sum
    }

    static func rms(_ samples: UnsafeBufferPointer<Float>) -> Double {
        samples.isEmpty ? 0 : (energy(samples) / Double(samples.count)).squareRoot()
    }

    static func peak(_ samples: UnsafeBufferPointer<Float>) -> Float {
        var peak: Float = 0
        for sample in samples { peak = max(peak, abs(sample)) }
        return peak
    }
}

/// A discrete Fourier transform of one power-of-two size: an iterative radix-2 FFT in place, over
/// separate real and imaginary arrays of `Float`, its twiddle factors made once per size (with
/// Core's own ``Trigonometry``: Core calls no C library).
///
/// What the proof of hearing uses it for is a cross-correlation (``AlarmEchoDetector``): two real
/// signals go in as one complex one, and one inverse transform gives their correlation at every
/// lag. `Float` keeps the tables and buffers of a 2¹⁷-point transform at 1.5 MiB; the correlation
/// only picks the lag, whose value is then computed again exactly.
struct FourierTransform: Sendable {
    let size: Int
    private let log2Size: Int
    /// cos(2πk/size) and -sin(2πk/size) for k < size/2.
    private let cosines: [Float]
    private let sines: [Float]

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "the size must be a power of two")
        self.size = size
        var bits = 0
        while 1 << bits < size { bits += 1 }
        log2Size = bits
        let half = size / 2
        var cosines = [Float](repeating: 0, count: half)
        var sines = [Float](repeating: 0, count: half)
        for index in 0 ..< half {
            let angle = 2 * Double.pi * Double(index) / Double(size)
            cosines[index] = Float(Trigonometry.cosine(angle))
            sines[index] = Float(-Trigonometry.sine(angle))
        }
        self.cosines = cosines
        self.sines = sines
    }

    /// Transforms `real` + i·`imaginary` (each `size` long) in place: forward (e^{-2πikn/N}), or
    /// inverse without the 1/N.
    func transform(real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>, inverse: Bool = false) {
        let size = size
        // Bit-reversed order first, so the butterflies work in place.
        var target = 0
        for index in 0 ..< size {
            if index < target {
                swap(&real[index], &real[target])
                swap(&imaginary[index], &imaginary[target])
            }
            var bit = size >> 1
            while target & bit != 0 {
                target ^= bit
                bit >>= 1
            }
            target |= bit
        }
        let sign: Float = inverse ? -1 : 1
        cosines.withUnsafeBufferPointer { cosines in
        sines.withUnsafeBufferPointer { sines in
            var length = 2
            while length <= size {
                let half = length / 2, step = size / length
                var first = 0
                while first < size {
                    var twiddle = 0
                    for a in first ..< first + half {
                        let c = cosines[twiddle], s = sign * sines[twiddle]
                        let b = a + half
                        let tr = real[b] * c - imaginary[b] * s
                        let ti = real[b] * s + imaginary[b] * c
                        real[b] = real[a] - tr
                        imaginary[b] = imaginary[a] - ti
                        real[a] += tr
                        imaginary[a] += ti
                        twiddle += step
                    }
                    first += length
                }
                length *= 2
            }
        }}
    }
}

/// Where a short signal lies inside a longer one: the correlation of `block` with `window` at every
/// offset where the block fits, through one forward and one inverse transform of their common size.
/// Owns its buffers (made once per size, kept between searches).
struct CrossCorrelation: Sendable {
    private var transform: FourierTransform?
    private var real: [Float] = []
    private var imaginary: [Float] = []

    init() {}

    /// `result[k] = Σᵢ block[i] · window[k + i]` for every k in `0 ... window.count - block.count`.
    mutating func correlate(_ block: UnsafeBufferPointer<Float>, within window: UnsafeBufferPointer<Float>, into result: inout [Float]) {
        let lags = window.count - block.count + 1
        guard lags > 0, !block.isEmpty else {
            result.removeAll()
            return
        }
        var size = 2
        while size < window.count { size *= 2 }
        if transform?.size != size {
            transform = FourierTransform(size: size)
            real = [Float](repeating: 0, count: size)
            imaginary = [Float](repeating: 0, count: size)
        }
        guard let transform else { return }
        // Both real signals in one transform: the window as the real part, the block (padded with
        // zeros) as the imaginary part. Their spectra come apart by symmetry:
        // W[k] = (Z[k] + conj Z[N-k]) / 2, B[k] = (Z[k] - conj Z[N-k]) / 2i,
        // and the correlation's spectrum is W[k] · conj B[k].
        real.withUnsafeMutableBufferPointer { real in
        imaginary.withUnsafeMutableBufferPointer { imaginary in
            guard let re = real.baseAddress, let im = imaginary.baseAddress else { return }
            for index in 0 ..< size {
                re[index] = index < window.count ? window[index] : 0
                im[index] = index < block.count ? block[index] : 0
            }
            transform.transform(real: re, imaginary: im)
            // k and N-k are computed together (each pair once); 0 and N/2 are their own partners.
            for k in 0 ... size / 2 {
                let m = (size - k) & (size - 1)
                let zr = re[k], zi = im[k], mr = re[m], mi = im[m]
                // W[k] = ((zr + mr) + i(zi - mi)) / 2;  B[k] = ((zi + mi) - i(zr - mr)) / 2
                let wr = (zr + mr) / 2, wi = (zi - mi) / 2
                let br = (zi + mi) / 2, bi = -(zr - mr) / 2
                // P[k] = W[k] · conj(B[k]); P[N-k] = conj(P[k]) (the correlation is real).
                let pr = wr * br + wi * bi
                let pi = wi * br - wr * bi
                re[k] = pr
                im[k] = pi
                if m != k {
                    re[m] = pr
                    im[m] = -pi
                }
            }
            transform.transform(real: re, imaginary: im, inverse: true)
        }}
        if result.count != lags { result = [Float](repeating: 0, count: lags) }
        let scale = 1 / Float(size)
        for lag in 0 ..< lags { result[lag] = real[lag] * scale }
    }
}

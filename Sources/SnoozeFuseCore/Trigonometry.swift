/// Sine and cosine in Swift, without the C maths library.
///
/// An alarm works out its fallback tone and its fades with these. The first call of libm's `sin`
/// or `cos` maps its tables, and the page cache hands them over as one large folio: 0.2-0.3 MiB
/// of a playing alarm's memory for a few thousand values (issue 23). Core's spectrum tables use
/// them too (Core calls no C library).
///
/// The argument is reduced to [-π, π] by a whole number of turns, 2π being taken in three parts
/// so that the subtraction is exact (Cody and Waite), then folded to [-π/2, π/2], where the
/// Taylor series to x¹⁹ is within 5e-15. Within 1e-15 of libm's over [-2π, 2π], within 1e-14 for
/// |x| up to 10⁴ (the tests check both): far below what a 16- or 32-bit sample holds.
public enum Trigonometry {
    /// 2π rounded to a Float's 24 bits (`Double(Float(2 * Double.pi))`): k times it is exact for
    /// |k| < 2²⁹. Literals, not stored constants, so no call waits on a lazy initialiser.
    @inlinable static var turnHigh: Double { 6.283_185_482_025_146_5 }
    /// The double 2π less `turnHigh` (25 bits: k times it is exact for |k| < 2²⁸).
    @inlinable static var turnMiddle: Double { -1.748_455_602_523_790_7e-07 }
    /// 2π less the double 2π.
    @inlinable static var turnLow: Double { 2.449_293_598_294_706_4e-16 }

    /// x less the nearest whole number of turns: in [-π, π] give or take an ulp.
    @inlinable
    static func reduced(_ x: Double) -> Double {
        let turns = (x / (2 * Double.pi)).rounded()
        return ((x - turns * turnHigh) - turns * turnMiddle) - turns * turnLow
    }

    /// sin(x); NaN for a non-finite x.
    @inlinable
    public static func sine(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        // sin(π - r) = sin(r) folds [-π, π] to [-π/2, π/2].
        var reduced = reduced(x)
        if reduced > Double.pi / 2 {
            reduced = Double.pi - reduced
        } else if reduced < -Double.pi / 2 {
            reduced = -Double.pi - reduced
        }
        let square = reduced * reduced
        var term = reduced, sum = reduced
        var n = 3.0
        while n <= 19 {
            term *= -square / ((n - 1) * n)
            sum += term
            n += 2
        }
        return sum
    }

    /// cos(x); NaN for a non-finite x.
    @inlinable
    public static func cosine(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        // cos(x) = sin(π/2 - |r|), with |r| in [0, π].
        return sine(Double.pi / 2 - abs(reduced(x)))
    }
}

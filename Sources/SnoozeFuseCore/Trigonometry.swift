/// Sine and cosine in Swift, without the C maths library.
///
/// An alarm works out its fallback tone and its fades with these. The first call of libm's `sin`
/// or `cos` maps its tables, and the page cache hands them over as one large folio: 0.2-0.3 MiB
/// of a playing alarm's memory for a few thousand values (issue 23). Core's spectrum tables use
/// them too (Core calls no C library).
///
/// The argument is reduced to [-π, π] by a whole number of turns, 2π being taken in three parts
/// so that the subtraction is exact (Cody and Waite), then folded to [-π/2, π/2], where the
/// Taylor series to x¹⁹ (Horner's rule, no division) is within 3e-16. Within 1e-15 of libm's over
/// [-2π, 2π] and within 1e-14 for |x| up to 10⁴ (the tests check both): far below what a 16- or
/// 32-bit sample holds. The fades call it for every frame, so it is kept as cheap as libm's: no
/// division, no call (`rounded()` is a call into libm on a processor without SSE4.1).
public enum Trigonometry {
    /// sin(x); NaN for a non-finite x.
    @inlinable
    public static func sine(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        // sin(π - r) = sin(r) folds [-π, π] to [-π/2, π/2].
        var angle = reduced(x)
        if angle > Double.pi / 2 {
            angle = Double.pi - angle
        } else if angle < -Double.pi / 2 {
            angle = -Double.pi - angle
        }
        let square = angle * angle
        // (-1)ᵏ / (2k + 1)!, for k = 9 down to 1.
        var sum = -8.220_635_246_624_33e-18
        sum = sum * square + 2.811_457_254_345_520_6e-15
        sum = sum * square - 7.647_163_731_819_816e-13
        sum = sum * square + 1.605_904_383_682_161_3e-10
        sum = sum * square - 2.505_210_838_544_172e-08
        sum = sum * square + 2.755_731_922_398_589_3e-06
        sum = sum * square - 1.984_126_984_126_984e-04
        sum = sum * square + 8.333_333_333_333_333e-03
        sum = sum * square - 1.666_666_666_666_666_6e-01
        return angle + angle * square * sum
    }

    /// cos(x); NaN for a non-finite x.
    @inlinable
    public static func cosine(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        // cos(x) = sin(π/2 - |r|), with |r| in [0, π].
        return sine(Double.pi / 2 - abs(reduced(x)))
    }

    /// x less the nearest whole number of turns: in [-π, π] give or take an ulp. Beyond 2⁵² turns
    /// (|x| > 2.8e16) the remainder is taken by the double 2π, and the result only lies in range.
    @inlinable
    static func reduced(_ x: Double) -> Double {
        // 1 / 2π.
        let scaled = x * 0.159_154_943_091_895_35
        guard abs(scaled) < 0x1p52 else {
            let remainder = x.truncatingRemainder(dividingBy: 2 * Double.pi)
            return remainder > Double.pi ? remainder - 2 * Double.pi : remainder < -Double.pi ? remainder + 2 * Double.pi : remainder
        }
        // The nearest whole number by conversion, not `rounded()` (see above).
        let turns = Double(Int64(scaled + (scaled < 0 ? -0.5 : 0.5)))
        // 2π as a Float's 24 bits (`Double(Float(2 * Double.pi))`), then the double 2π less that
        // (25 bits), then 2π less the double 2π: turns times either of the first two is exact.
        return ((x - turns * 6.283_185_482_025_146_5) - turns * -1.748_455_602_523_790_7e-07)
            - turns * 2.449_293_598_294_706_4e-16
    }
}

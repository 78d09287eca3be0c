/// A number as text with a fixed count of decimals, exactly as C's `printf("%.Nf")` (and so
/// Foundation's `String(format:)`) writes it, without either: for the programs that carry no
/// Foundation (the statically linked plugin host program, whose Foundation would bring ICU's data).
///
/// The value's exact binary fraction is rounded to nearest, a tie to the even digit (glibc's
/// rounding: `0.125` with two decimals is `0.12`, `2.5` with none is `2`); the sign of a negative
/// value is kept when it rounds to zero (`-0.0`), as printf keeps it; not-a-number and the
/// infinities read `nan`, `inf`, with printf's sign.
public enum DecimalText {
    /// The most decimals ``fixed(_:decimals:)`` writes (more are refused).
    public static let maximumDecimals = 18

    /// `value` with `decimals` digits after the point (none, and no point, for 0): `%.{decimals}f`.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        precondition((0 ... maximumDecimals).contains(decimals), "DecimalText: \(decimals) decimals")
        let sign = value.sign == .minus ? "-" : ""
        guard value.isFinite else { return sign + (value.isNaN ? "nan" : "inf") }
        let digits = scaledDigits(value.magnitude, decimals: decimals)
        guard decimals > 0 else { return sign + digits }
        // At least one digit before the point: `0.05`, not `.05`.
        let padded = String(repeating: "0", count: max(decimals + 1 - digits.count, 0)) + digits
        let point = padded.index(padded.endIndex, offsetBy: -decimals)
        return sign + String(padded[..<point]) + "." + String(padded[point...])
    }

    /// The decimal digits of `magnitude` × 10^`decimals`, rounded to nearest, ties to even.
    private static func scaledDigits(_ magnitude: Double, decimals: Int) -> String {
        // magnitude = significand × 2^exponent exactly, the significand a 53-bit integer.
        let significand: UInt64, exponent: Int
        if magnitude.exponentBitPattern == 0 {
            significand = magnitude.significandBitPattern
            exponent = -1074
        } else {
            significand = magnitude.significandBitPattern | 1 << 52
            exponent = Int(magnitude.exponentBitPattern) - 1075
        }
        var power: UInt128 = 1
        for _ in 0 ..< decimals { power *= 10 }
        // Below 2^53 × 10^18 < 2^113: exact.
        let scaled = UInt128(significand) * power
        guard exponent < 0 else {
            // A whole number (at least 2^52): its digits, then the decimals' zeros.
            return wholeDigits(significand, timesPowerOfTwo: exponent) + String(repeating: "0", count: decimals)
        }
        let shift = -exponent
        // Everything shifted out is less than half of one: rounds down to zero.
        guard shift < 128 else { return "0" }
        var quotient = scaled >> shift
        let remainder = scaled & ((1 << shift) - 1)
        let half: UInt128 = 1 << (shift - 1)
        if remainder > half || (remainder == half && quotient & 1 == 1) { quotient += 1 }
        return String(quotient)
    }

    /// The decimal digits of `value` × 2^`exponent`, however large (a double reaches 2^1024).
    private static func wholeDigits(_ value: UInt64, timesPowerOfTwo exponent: Int) -> String {
        // Little-endian limbs of nine decimal digits each.
        let base: UInt64 = 1_000_000_000
        var limbs: [UInt64] = [value % base, value / base % base, value / base / base]
        for _ in 0 ..< exponent {
            var carry: UInt64 = 0
            for index in limbs.indices {
                let doubled = limbs[index] * 2 + carry
                limbs[index] = doubled % base
                carry = doubled / base
            }
            if carry > 0 { limbs.append(carry) }
        }
        while limbs.count > 1, limbs.last == 0 { limbs.removeLast() }
        var text = String(limbs.last!)
        for limb in limbs.dropLast().reversed() {
            let part = String(limb)
            text += String(repeating: "0", count: 9 - part.count) + part
        }
        return text
    }
}

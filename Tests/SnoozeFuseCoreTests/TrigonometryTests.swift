#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SnoozeFuseCore
import Testing

/// Core's sine and cosine (an alarm's fallback tone and fades, without libm) against the C
/// library's, which this test may call.
@Suite("Trigonometry without the C maths library")
struct TrigonometryTests {
    /// The largest difference from libm over `values`, for sine and cosine.
    private func largestDifference(over values: some Sequence<Double>) -> (sine: Double, cosine: Double) {
        var sineError = 0.0, cosineError = 0.0
        for x in values {
            sineError = max(sineError, abs(Trigonometry.sine(x) - sin(x)))
            cosineError = max(cosineError, abs(Trigonometry.cosine(x) - cos(x)))
        }
        return (sineError, cosineError)
    }

    @Test func withinAFewUlpsOfLibmOverOneTurnEitherSide() {
        // 160,000 points over [-2π, 2π], with the quadrant edges where the reduction folds.
        let points = (-80_000 ... 80_000).map { Double($0) * (2 * Double.pi / 80_000) }
        let error = largestDifference(over: points)
        #expect(error.sine < 1e-15, "sine: \(error.sine)")
        #expect(error.cosine < 1e-15, "cosine: \(error.cosine)")
    }

    @Test func withinTheDocumentedErrorOverTheArgumentsAnAlarmPasses() {
        // The fallback tone's phase reaches 2π · 880 Hz · 0.1 s ≈ 553; the doc promises 1e-14
        // up to 10⁴. An irregular step, so the points fall anywhere within a turn.
        let points = stride(from: -10_000.0, through: 10_000.0, by: 0.013_7)
        let error = largestDifference(over: points)
        #expect(error.sine < 1e-14, "sine: \(error.sine)")
        #expect(error.cosine < 1e-14, "cosine: \(error.cosine)")
    }

    @Test(arguments: [
        (0.0, 0.0, 1.0),
        (Double.pi / 6, 0.5, 0.866_025_403_784_438_6),
        (Double.pi / 2, 1.0, 0.0),
        (Double.pi, 0.0, -1.0),
        (-Double.pi / 2, -1.0, 0.0),
        (3 * Double.pi / 2, -1.0, 0.0),
    ])
    func knownValues(x: Double, sine: Double, cosine: Double) {
        #expect(abs(Trigonometry.sine(x) - sine) < 1e-15)
        #expect(abs(Trigonometry.cosine(x) - cosine) < 1e-15)
    }

    @Test func oddAndEven() {
        let points = Array(stride(from: 0.0, through: 50, by: 0.37))
        #expect(points.allSatisfy { Trigonometry.sine(-$0) == -Trigonometry.sine($0) })
        #expect(points.allSatisfy { Trigonometry.cosine(-$0) == Trigonometry.cosine($0) })
    }

    @Test func neverLeavesMinusOneToOne() {
        var largest = 0.0
        for x in stride(from: -700.0, through: 700, by: 0.001_3) {
            largest = max(largest, abs(Trigonometry.sine(x)), abs(Trigonometry.cosine(x)))
        }
        #expect(largest <= 1)
    }

    @Test func hugeArgumentsStillGiveValuesInRange() {
        // Beyond 2⁵² turns the reduction is by the double 2π: no precision, but never out of range.
        let values = [1e17, -3.3e19, 1e300, -Double.greatestFiniteMagnitude].flatMap { [Trigonometry.sine($0), Trigonometry.cosine($0)] }
        #expect(values.allSatisfy { abs($0) <= 1 }, "\(values)")
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func notANumberForWhatIsNotFinite(x: Double) {
        #expect(Trigonometry.sine(x).isNaN)
        #expect(Trigonometry.cosine(x).isNaN)
    }
}

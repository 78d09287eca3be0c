import Foundation
import SnoozeFuseCore
import Testing

/// Core's DecimalText writes what `String(format: "%.Nf")` (C's printf) writes, for every double.
@Suite("DecimalText: what printf's %.Nf writes")
struct DecimalTextTests {
    static func printf(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    @Test func theMessagesOfThePluginHostReadAsBefore() {
        #expect(DecimalText.fixed(0.7, decimals: 3) == "0.700")
        #expect(DecimalText.fixed(1, decimals: 3) == "1.000")
        #expect(DecimalText.fixed(0, decimals: 3) == "0.000")
        #expect(DecimalText.fixed(1400 / 1000, decimals: 1) == "1.4")
        #expect(DecimalText.fixed(1234.56, decimals: 0) == "1235")
        #expect(DecimalText.fixed(12.345678, decimals: 1) == "12.3")
        #expect(DecimalText.fixed(Double(Float(0.25)), decimals: 2) == "0.25")
        #expect(DecimalText.fixed(0.05, decimals: 1) == "0.1")
    }

    @Test func tiesGoToTheEvenDigitOfTheExactValue() {
        // Exact binary ties round to even; 0.15 and 0.35 are a little below their ties
        // (0.1499999…, 0.3499999…), 999.95 a little above (999.9500000000000454…).
        for (value, decimals, text) in [(0.5, 0, "0"), (1.5, 0, "2"), (2.5, 0, "2"), (-2.5, 0, "-2"), (0.125, 2, "0.12"),
                                        (0.375, 2, "0.38"), (0.25, 1, "0.2"), (0.15, 1, "0.1"), (0.35, 1, "0.3"), (999.95, 1, "1000.0")] {
            #expect(DecimalText.fixed(value, decimals: decimals) == text, "\(value)")
            #expect(Self.printf(value, decimals) == text, "\(value)")
        }
    }

    @Test func signsAndValuesThatAreNotNumbers() {
        #expect(DecimalText.fixed(-0.0, decimals: 1) == "-0.0")
        #expect(DecimalText.fixed(-0.04, decimals: 1) == "-0.0")
        #expect(DecimalText.fixed(-1.25, decimals: 1) == "-1.2")
        #expect(DecimalText.fixed(.infinity, decimals: 2) == "inf")
        #expect(DecimalText.fixed(-.infinity, decimals: 0) == "-inf")
        #expect(DecimalText.fixed(.nan, decimals: 3) == "nan")
        for value in [-0.0, -0.04, -1.25, Double.infinity, -.infinity, .nan] {
            for decimals in 0 ... 3 { #expect(DecimalText.fixed(value, decimals: decimals) == Self.printf(value, decimals), "\(value)") }
        }
    }

    @Test func extremeValuesAreWrittenInFull() {
        let values: [Double] = [.leastNonzeroMagnitude, .leastNormalMagnitude, 1e-300, 0.0005, 0.9995, 1e15, 1e16, 4_503_599_627_370_495.5,
                                9_007_199_254_740_992, 1e22, 1e23, 1e300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude]
        for value in values {
            for decimals in 0 ... DecimalText.maximumDecimals {
                #expect(DecimalText.fixed(value, decimals: decimals) == Self.printf(value, decimals), "\(value) with \(decimals)")
            }
        }
    }

    @Test func everyKindOfDoubleReadsAsPrintfWritesIt() {
        // SplitMix64: the same values on every run.
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var mismatches: [String] = []
        for _ in 0 ..< 20_000 {
            let bits = next()
            // Any double, one of a few thousand milliseconds, a thousandth (the ties of %.2f).
            let any = Double(bitPattern: bits)
            let milliseconds = Double(bits % 10_000_000) / 1024
            let thousandth = Double(Int64(bits % 2_000_001) - 1_000_000) / 1000
            for (value, decimals) in [(any, Int(bits >> 59) % (DecimalText.maximumDecimals + 1)), (milliseconds, 0), (milliseconds, 1),
                                      (thousandth, 2), (thousandth / 2, 3), (Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))), 2)]
                where value.isFinite {
                let mine = DecimalText.fixed(value, decimals: decimals), theirs = Self.printf(value, decimals)
                if mine != theirs { mismatches.append("\(value) with \(decimals): \(mine), printf \(theirs)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }
}

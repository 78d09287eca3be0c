import Foundation
import SnoozeFuseCore
import Testing

/// Core's JSONValueEncoder writes what Foundation's JSONEncoder (`.sortedKeys`,
/// `.withoutEscapingSlashes`) writes: the same text for the values the nap writes, read back the
/// same by JSONDecoder and by JSONValueDecoder.
@Suite("JSONValueEncoder: what JSONEncoder writes")
struct JSONValueEncoderTests {
    typealias Everything = JSONValueDecoderTests.Everything
    typealias Inner = JSONValueDecoderTests.Inner

    static let everything = Everything(
        flag: true, text: "a\"b\\c/d\n\t\r\u{8}\u{C}\u{1}\u{1F} 🌙 é", double: -1.5e-3, float: 0.1, int: -9_007_199_254_740_993, int8: -128, int16: 32767,
        int32: .min, int64: .max, uint: .max, uint8: 255, uint16: 65535, uint32: .max, uint64: .max, optional: nil, mood: .loud,
        moods: [.calm, .loud], inner: Inner(name: "x", level: nil), inners: [Inner(name: "y", level: 3), Inner(name: "", level: -1)],
        nested: [[1], [], [2, 3]], table: ["b": 2.5, "a": 1, "B": 0, "ab": 1e300, "é": -0.0], defaulted: 8, maybeFlag: false,
        maybeDouble: 123_456_789.125, maybeFloat: nil, maybeInt: -3, maybeInt32: 40, maybeUInt8: 200, maybeUInt64: 1, maybeInner: nil,
        maybeAbsent: nil)

    static func foundationText<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func everyKindOfValueReadsBackTheSameByBothDecoders() throws {
        let text = try JSONValueEncoder().encode(Self.everything)
        #expect(try JSONDecoder().decode(Everything.self, from: Data(text.utf8)) == Self.everything, "\(text)")
        #expect(try JSONValueDecoder().decode(Everything.self, from: text) == Self.everything, "\(text)")
        // Optionals that are nil are left out, as JSONEncoder leaves them.
        #expect(!text.contains("optional") && !text.contains("maybeInner") && !text.contains("\"level\":null"), "\(text)")
    }

    @Test func theTextIsJSONEncodersForValuesWithoutFractions() throws {
        var whole = Self.everything
        whole.double = -2
        whole.float = 0.25
        whole.table = ["b": 2, "a": 1, "ab": 1e14]
        whole.maybeDouble = 1_700_000_000
        let mine = try JSONValueEncoder().encode(whole), foundation = try Self.foundationText(whole)
        #expect(mine == foundation, "\(mine)\n\(foundation)")
        #expect(try JSONValueEncoder().encode(Inner(name: "n", level: 1)) == #"{"level":1,"name":"n"}"#)
    }

    @Test func numbersReadBackExactly() throws {
        let values: [Double] = [0, -0.0, 1, -1, 0.1, 1.0 / 3, 1e15, 1e15 + 1, -1e16, 2e-308, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                                9_007_199_254_740_992, 1_764_337_353.123, 10143.705172981]
        for value in values {
            let text = try JSONValueEncoder().encode([value])
            let back = try JSONDecoder().decode([Double].self, from: Data(text.utf8))
            #expect(back == [value], "\(value) written as \(text)")
            #expect(try JSONValueDecoder().decode([Double].self, from: text) == [value], "\(text)")
        }
    }

    @Test func aNumberThatIsNotFiniteIsRefusedWithWhere() {
        for value in [Double.nan, .infinity, -.infinity] {
            do {
                _ = try JSONValueEncoder().encode(["a": [1, value]])
                Issue.record("wrote \(value)")
            } catch let EncodingError.invalidValue(_, context) {
                #expect(context.codingPath.map(\.stringValue) == ["a", "Index 1"])
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Float.nan) }
    }

    @Test func stringsOfEveryKindReadBack() throws {
        var texts = ["", "/", "\\", "\"", "\u{0}", "\u{7F}", "\u{2028}", "🌙", "a\u{301}", "\r\n"]
        texts += (0 ..< 0x20).map { String(UnicodeScalar(UInt8($0))) }
        for text in texts {
            let written = try JSONValueEncoder().encode(["k": text])
            #expect(try JSONDecoder().decode([String: String].self, from: Data(written.utf8)) == ["k": text], "\(written)")
        }
    }

    /// A type whose own encoding uses every container: keyed, nested keyed and unkeyed, a key
    /// written twice (the last value counts, as with JSONEncoder), nil written on purpose, a super
    /// encoder and single values.
    struct Handmade: Encodable {
        enum Keys: String, CodingKey { case a, b, c, d, e }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(1, forKey: .a)
            try keyed.encode("again", forKey: .a)
            try keyed.encodeNil(forKey: .b)
            var nested = keyed.nestedContainer(keyedBy: Keys.self, forKey: .c)
            try nested.encode(true, forKey: .e)
            var list = keyed.nestedUnkeyedContainer(forKey: .d)
            try list.encode(UInt8(7))
            try list.encodeNil()
            var inner = list.nestedUnkeyedContainer()
            try inner.encode(Int16(-2))
            var last = list.nestedContainer(keyedBy: Keys.self)
            try last.encode(Int64.min, forKey: .a)
            #expect(list.count == 4)
            try Inner(name: "s", level: nil).encode(to: keyed.superEncoder(forKey: .e))
        }
    }

    @Test func everyContainerWritesWhatJSONEncoderWrites() throws {
        let mine = try JSONValueEncoder().encode(Handmade())
        #expect(mine == #"{"a":"again","b":null,"c":{"e":true},"d":[7,null,[-2],{"a":-9223372036854775808}],"e":{"name":"s"}}"#)
        #expect(try JSONSerialization.jsonObject(with: Data(mine.utf8)) as? NSDictionary
            == JSONSerialization.jsonObject(with: Data(Self.foundationText(Handmade()).utf8)) as? NSDictionary)
    }

    @Test func aValueThatEncodesNothingIsAnEmptyObject() throws {
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(try JSONValueEncoder().encode(Nothing()) == "{}")
        #expect(try JSONValueEncoder().encode([String: Int]()) == "{}")
        #expect(try JSONValueEncoder().encode([Int]()) == "[]")
    }
}

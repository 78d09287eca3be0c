import Foundation
import SnoozeFuseCore
import Testing

/// Core's JSONValueDecoder gives what Foundation's JSONDecoder gives on the same bytes: the same
/// value, or an error of the same kind.
@Suite("JSONValueDecoder: what JSONDecoder gives")
struct JSONValueDecoderTests {
    enum Mood: String, Codable, Equatable { case calm, loud }

    struct Inner: Codable, Equatable {
        var name: String
        var level: Int8?
    }

    struct Everything: Codable, Equatable {
        var flag: Bool
        var text: String
        var double: Double
        var float: Float
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var optional: String?
        var mood: Mood
        var moods: [Mood]?
        var inner: Inner
        var inners: [Inner]
        var nested: [[Int]]
        var table: [String: Double]?
        var defaulted = 7
        // An optional of each kind the decoder reads by its own decodeIfPresent.
        var maybeFlag: Bool?
        var maybeDouble: Double?
        var maybeFloat: Float?
        var maybeInt: Int?
        var maybeInt32: Int32?
        var maybeUInt8: UInt8?
        var maybeUInt64: UInt64?
        var maybeInner: Inner?
        var maybeAbsent: Int16?
    }

    /// The members of a document with every kind of value, as written.
    static let members: [(key: String, value: String)] = [
        ("flag", "true"), ("text", #""a\"b 🌙""#), ("double", "-1.5e-3"), ("float", "0.25"), ("int", "-9007199254740993"), ("int8", "-128"),
        ("int16", "32767"), ("int32", "-2147483648"), ("int64", "9223372036854775807"), ("uint", "18446744073709551615"), ("uint8", "255"),
        ("uint16", "65535"), ("uint32", "4294967295"), ("uint64", "18446744073709551615"), ("optional", "null"), ("mood", #""loud""#),
        ("moods", #"["calm","loud"]"#), ("inner", #"{"name":"x"}"#), ("inners", #"[{"name":"y","level":3},{"name":"z","level":null}]"#),
        ("nested", "[[1],[],[2,3]]"), ("table", #"{"a":1,"b":2.5}"#), ("defaulted", "8"), ("unknown", #"{"ignored":[1,2]}"#),
        ("maybeFlag", "false"), ("maybeDouble", "2.5"), ("maybeFloat", "null"), ("maybeInt", "-3"), ("maybeInt32", "4.0e1"),
        ("maybeUInt8", "200"), ("maybeUInt64", "18446744073709551615"), ("maybeInner", #"{"name":"m","level":-1}"#),
    ]

    static func document(_ members: [(key: String, value: String)]) -> String {
        "{" + members.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    static let full = document(members)

    func both<T: Decodable & Equatable>(_ type: T.Type, _ text: String) -> (mine: Result<T, any Error>, foundation: Result<T, any Error>) {
        (Result { try JSONValueDecoder().decode(type, from: text) }, Result { try JSONDecoder().decode(type, from: Data(text.utf8)) })
    }

    func kind(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .typeMismatch: "typeMismatch"
        case .valueNotFound: "valueNotFound"
        case .keyNotFound(let key, _): "keyNotFound(\(key.stringValue))"
        case .dataCorrupted: "dataCorrupted"
        default: "other"
        }
    }

    @Test func aDocumentWithEveryKindOfValueDecodesAsJSONDecoderDecodesIt() throws {
        let (mine, foundation) = both(Everything.self, Self.full)
        let value = try mine.get()
        #expect(value == (try foundation.get()))
        #expect(value.int64 == .max && value.uint64 == .max && value.int == -9_007_199_254_740_993 && value.optional == nil)
    }

    /// Each member of the full document replaced by a value of another kind, or removed: both
    /// decoders succeed alike or fail alike (with the same kind of error where it names a key).
    @Test func everyWrongOrMissingMemberFailsAlike() throws {
        let replacements = ["null", "true", "1", "-1", "1.5", "1e3", "300", "70000", "5000000000", "-5000000000", "1e30", "\"s\"", "\"calm\"",
                            "[]", "[1]", "[\"calm\"]", "{}", "{\"name\":\"n\"}", "{\"a\":\"b\"}"]
        var compared = 0
        for (index, member) in Self.members.enumerated() {
            var others = Self.members
            others.remove(at: index)
            let variants = [Self.document(others)] + replacements.map { Self.document(others + [(member.key, $0)]) }
            for variant in variants {
                let (mine, foundation) = both(Everything.self, variant)
                switch (mine, foundation) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(variant)")
                case (.failure(let a), .failure(let b)):
                    if case .keyNotFound = b as? DecodingError { #expect(kind(a) == kind(b), "\(variant)") }
                    // An optional's own decodeIfPresent fails as JSONDecoder's does.
                    if member.key.hasPrefix("maybe") { #expect(kind(a) == kind(b), "\(variant): \(a) against \(b)") }
                default: Issue.record("\(member.key): mine \(mine), JSONDecoder \(foundation), on \(variant)")
                }
                compared += 1
            }
        }
        #expect(compared > 400)
    }

    @Test func aKeyWrittenTwiceIsReadAsJSONDecoderReadsIt() throws {
        for text in [#"{"name":"first","name":"second"}"#, #"{"name":"x","level":1,"level":null}"#, #"{"level":null,"name":"y","level":2}"#] {
            let (mine, foundation) = both(Inner.self, text)
            #expect(try mine.get() == foundation.get(), "\(text)")
        }
    }

    @Test func errorsSayWhatAndWhere() throws {
        #expect(throws: JSONSyntaxError.self) { try JSONValueDecoder().decode(Inner.self, from: #"{"name":"x""#) }
        do {
            _ = try JSONValueDecoder().decode([Inner].self, from: #"[{"name":"x"},{"name":1}]"#)
            Issue.record("decoded a number as a name")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["Index 1", "name"])
        }
        do {
            _ = try JSONValueDecoder().decode([Inner].self, from: #"[{"name":"x","level":1000}]"#)
            Issue.record("decoded 1000 as an Int8")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.codingPath.map(\.stringValue) == ["Index 0", "level"], "an optional's path too")
        }
        do {
            _ = try JSONValueDecoder().decode(Inner.self, from: #"{"level":1}"#)
            Issue.record("decoded without a name")
        } catch let DecodingError.keyNotFound(key, _) {
            #expect(key.stringValue == "name")
        }
    }

    @Test(arguments: ["0", "42", "4.2e1", "42.0", "-0", "1e2"])
    func integersWrittenAsExactNumbersDecodeAsJSONDecoderDecodesThem(_ text: String) throws {
        let (mine, foundation) = both(Int.self, text)
        #expect(try mine.get() == foundation.get())
    }

    @Test(arguments: ["4.5", "1e20", "-1", "true", "\"4\"", "null"])
    func integersThatAreNotOneFailAsWithJSONDecoder(_ text: String) {
        let (mine, foundation) = both(UInt32.self, text)
        #expect(throws: (any Error).self) { try mine.get() }
        #expect(throws: (any Error).self) { try foundation.get() }
    }
}

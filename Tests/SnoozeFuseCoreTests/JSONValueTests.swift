import Foundation
import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// Core's JSON reader (issue 23: `status`, `stop`, `snooze` and `add` read the nap's JSON without
/// JSONDecoder): what it reads, what it refuses, and agreement with Foundation on the same bytes.
@Suite("JSONValue: reading JSON documents")
struct JSONValueTests {
    @Test(arguments: [
        ("null", JSONValue.null), ("true", .bool(true)), (" false ", .bool(false)), ("0", .number("0")), ("-0", .number("-0")),
        ("12.5e-3", .number("12.5e-3")), ("1E+2", .number("1E+2")), (#""""#, .string("")), ("\t[ ]\r\n", .array([])), ("{}", .object([])),
        (#""a\"b\\c\/d\b\f\n\r\t""#, .string("a\"b\\c/d\u{8}\u{C}\n\r\t")), (#""\u00e9\u20AC\ud83c\udf19""#, .string("é€🌙")),
        (#""été 🌙""#, .string("été 🌙")), (#""\u0000""#, .string("\u{0}")),
        (#"[1,"x",[null]]"#, .array([.number("1"), .string("x"), .array([.null])])),
        (#"{"a":1,"b":{"c":[]},"a":2}"#, .object([JSONMember(key: "a", value: .number("1")),
                                                  JSONMember(key: "b", value: .object([JSONMember(key: "c", value: .array([]))])),
                                                  JSONMember(key: "a", value: .number("2"))])),
    ])
    func readsWhatJSONAllows(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONValue(parsing: text) == expected)
    }

    /// The first one, as JSONDecoder takes it: the nap reads its control requests with this reader,
    /// which JSONDecoder read before, and a request with `command` twice is read as it was then.
    @Test func aKeyWrittenTwiceCountsOnceAndTheFirstOne() throws {
        let value = try JSONValue(parsing: #"{"a":1,"a":2}"#)
        #expect(value.member("a") == .number("1"))
        #expect(value.member("b") == nil)
    }

    @Test(arguments: [
        "", " ", "nul", "tru", "True", "+1", "01", "-", "1.", ".5", "1e", "1e+", "0x10", "NaN", "Infinity", "1 2", "[1,]", "[,1]", "{,}",
        #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, "{'a':1}", #"{"a":1"#, "[1", #""abc"#, #""\x""#, #""\u12""#, #""\u12G4""#,
        "\"tab\there\"", "\"new\nline\"", #""\ud83c""#, #""\ud83cx""#, #""\udf19""#, #""\ud83c\u0041""#, "[1]x", "// c\n1", "\u{FEFF}1",
    ])
    func refusesWhatJSONDoesNot(_ text: String) {
        #expect(throws: JSONSyntaxError.self, "\(text.debugDescription)") { try JSONValue(parsing: text) }
    }

    @Test func saysWhereItStopped() {
        #expect(throws: JSONSyntaxError(offset: 6, problem: "expected ',' or ']' in an array")) { try JSONValue(parsing: "[1, 2 3]") }
    }

    @Test(arguments: [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF0, 0x90, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80]] as [[UInt8]])
    func stringsThatAreNotUTF8AreRefused(_ bytes: [UInt8]) throws {
        #expect(throws: JSONSyntaxError(offset: 1, problem: "the string starting here is not UTF-8")) {
            try JSONValue(parsing: [0x22] + bytes + [0x22])
        }
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: [0x22, 0x5C, 0x6E] + bytes + [0x22]) }
        #expect(try JSONValue(parsing: [0x22, 0xC3, 0xA9, 0xF0, 0x9F, 0x8C, 0x99, 0x22]) == .string("é🌙"))
    }

    /// What `quoted` writes reads back as the text it was given, whatever the text holds.
    @Test func aQuotedTextReadsBackAsItWas() throws {
        var random = SeededRandom(seed: 0x0007_E57E)
        for text in ["", "plain", "\"q\" \\ /", "\u{0}\u{8}\t\n\r\u{1F}\u{7F}", "été 🌙 \u{2028}\u{FFFF}\u{10FFFF}"] + (0 ..< 500).map({ _ in random.string() }) {
            let quoted = JSONValue.quoted(text)
            #expect(!quoted.contains("\n"), "one line: \(quoted)")
            #expect(try JSONValue(parsing: quoted) == .string(text), "\(quoted)")
        }
    }

    /// Nesting is bounded (a hostile file or peer cannot exhaust the stack), at JSONDecoder's limit.
    @Test func nestingIsBounded() throws {
        let limit = JSONValue.depthLimit
        _ = try JSONValue(parsing: String(repeating: "[", count: limit) + String(repeating: "]", count: limit))
        #expect(throws: JSONSyntaxError.self) {
            try JSONValue(parsing: String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        }
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: String(repeating: "{\"a\":", count: 100_000)) }
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: String(repeating: "[", count: 1_000_000)) }
    }

    /// 2,000 random documents (fixed seed) written by Foundation's JSONSerialization: read back as
    /// the values written. Then each is cut or has a byte changed: whenever this reader takes the
    /// result, JSONSerialization takes it too and reads the same values.
    @Test func agreesWithFoundationOnRandomDocuments() throws {
        var random = SeededRandom(seed: 0x1507_2026)
        var taken = 0
        for _ in 0 ..< 2000 {
            let object = random.document(depth: 0)
            let data = try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed])
            let value = try JSONValue(parsing: [UInt8](data))
            #expect(Same.values(value, object), "\(String(decoding: data, as: UTF8.self))")

            var bytes = [UInt8](data)
            if random.next() % 2 == 0, !bytes.isEmpty {
                bytes.removeLast(Int(random.next() % UInt64(bytes.count)) + 1)
            } else if !bytes.isEmpty {
                let bytesToTry: [UInt8] = [0x22, 0x5C, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x30, 0x2D, 0x2E, 0x65, 0x20, 0x0A, 0x75, 0x00, 0xFF]
                bytes[Int(random.next() % UInt64(bytes.count))] = bytesToTry[Int(random.next() % UInt64(bytesToTry.count))]
            }
            // Foundation refuses a number beyond a Double's range where it reads it; this reader
            // keeps its text, and the decoding of a Double or an integer refuses it (tested with
            // JSONValueDecoder).
            guard let mutated = try? JSONValue(parsing: bytes), !Same.hasNumberBeyondDouble(mutated) else { continue }
            taken += 1
            let foundation = try #require(try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]),
                                          "read here, refused by Foundation: \(String(decoding: bytes, as: UTF8.self))")
            #expect(Same.values(mutated, foundation), "\(String(decoding: bytes, as: UTF8.self))")
        }
        // The mutations are not all refusals.
        #expect(taken > 100, "took \(taken) mutated documents")
    }
}

/// Random documents for the agreement test.
extension SeededRandom {
    mutating func string() -> String {
        let awkward: [Unicode.Scalar] = ["\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "\u{2028}", "\u{FFFF}", "🌙"]
        var scalars = String.UnicodeScalarView()
        for _ in 0 ..< next() % 12 {
            if next() % 3 == 0 {
                scalars.append(awkward[Int(next() % UInt64(awkward.count))])
            } else if let scalar = Unicode.Scalar(UInt32(0x20 + next() % 0x5F)) {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// A random JSON value as Foundation's objects.
    mutating func document(depth: Int) -> Any {
        switch next() % (depth > 3 ? 5 : 7) {
        case 0: return NSNull()
        case 1: return next() % 2 == 0
        case 2: return Int(truncatingIfNeeded: next()) >> Int(next() % 64)
        case 3: return Double(Int64(truncatingIfNeeded: next()) >> 20) / Double(1 + next() % 100_000)
        case 4: return string()
        case 5: return (0 ..< next() % 5).map { _ in document(depth: depth + 1) }
        default:
            var object: [String: Any] = [:]
            for _ in 0 ..< next() % 5 { object[string()] = document(depth: depth + 1) }
            return object
        }
    }
}

/// Whether a value read here is what Foundation read or wrote.
enum Same {
    static func hasNumberBeyondDouble(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let text): !(Double(text)?.isFinite ?? false)
        case .array(let elements): elements.contains(where: hasNumberBeyondDouble)
        case .object(let members): members.contains { hasNumberBeyondDouble($0.value) }
        case .null, .bool, .string: false
        }
    }

    static func values(_ value: JSONValue, _ object: Any) -> Bool {
        switch value {
        case .null: return object is NSNull
        case .bool(let bool): return (object as? Bool) == bool
        case .number(let text):
            guard let number = object as? NSNumber, let mine = Double(text) else { return false }
            return mine == number.doubleValue || abs(mine - number.doubleValue) <= abs(mine) * 1e-15
        case .string(let string): return (object as? String) == string
        case .array(let elements):
            guard let others = object as? [Any], others.count == elements.count else { return false }
            return zip(elements, others).allSatisfy { values($0, $1) }
        case .object(let members):
            guard let others = object as? [String: Any] else { return false }
            var last: [String: JSONValue] = [:]
            for member in members { last[member.key] = member.value }
            return last.count == others.count && last.allSatisfy { key, value in others[key].map { values(value, $0) } ?? false }
        }
    }
}

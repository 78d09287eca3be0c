/// A JSON document read into values (RFC 8259), for ``JSONValueDecoder``.
///
/// Why not Foundation's JSONDecoder: the commands a status bar or a key binding starts again and
/// again (`status`, `stop`, `snooze`, `add`) read a nap's live state or its answer, and
/// JSONDecoder's first use in a process names its own generic types by mangled string. The runtime
/// then checks their requirements by scanning every protocol conformance record of the binary, and
/// faults in pages all over it: a fifth of `status`'s instructions (issue 23). This reader is plain
/// code over bytes.
///
/// Strict where JSON is: one value with whitespace around it, no comments, no trailing commas,
/// strings in double quotes with JSON's escapes only, no raw control characters in strings,
/// numbers in JSON's grammar (no leading zeros, `+`, `NaN` or hexadecimal), strings in UTF-8.
/// Nesting deeper than ``depthLimit`` is refused, so hostile input cannot exhaust the stack. A
/// number keeps its text: one beyond a `Double`'s range is refused when it is decoded.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number as written: the type it is decoded as converts it (an `Int` stays exact).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// The members in the order written. A key written twice: the first one counts, as with
    /// JSONDecoder.
    case object([JSONMember])

    /// Arrays and objects nested deeper than this are refused (JSONDecoder's limit too).
    public static let depthLimit = 512

    /// Reads `bytes` as one JSON document.
    public init(parsing bytes: [UInt8]) throws(JSONSyntaxError) {
        self = try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSONValue in
            var reader = JSONReader(bytes: buffer)
            reader.skipWhitespace()
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.error("more after the value") }
            return value
        }
    }

    /// Reads `text` as one JSON document.
    public init(parsing text: String) throws(JSONSyntaxError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// `text` as a JSON string, in double quotes: what the reader reads back as `text`. Quotes,
    /// backslashes and control characters are escaped (in JSONEncoder's short forms where JSON
    /// has one); everything else is written as it is.
    /// For the lines written by hand where JSONEncoder would cost more than the line (issue 23).
    public static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case "\r": quoted += "\\r"
            case "\u{8}": quoted += "\\b"
            case "\u{C}": quoted += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// The member `key` of an object (the first one written), or nil.
    public func member(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

/// One `"key": value` of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// Bytes that are not a JSON document: what was wrong and at which byte.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset (from 0) where reading stopped.
    public var offset: Int
    public var problem: String

    public init(offset: Int, problem: String) {
        self.offset = offset
        self.problem = problem
    }

    public var description: String { "not JSON at byte \(offset): \(problem)" }
}

/// The reader's position over the bytes. Recursive descent, one byte of look-ahead.
private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ problem: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, problem: problem) }

    var atEnd: Bool { index >= bytes.count }
    var current: UInt8 { bytes[index] }

    mutating func skipWhitespace() {
        while !atEnd, current == 0x20 || current == 0x0A || current == 0x0D || current == 0x09 { index += 1 }
    }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard !atEnd else { throw error("the document ends where a value should be") }
        switch current {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try word("true"); return .bool(true)
        case UInt8(ascii: "f"): try word("false"); return .bool(false)
        case UInt8(ascii: "n"): try word("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"): return .number(try number())
        default: throw error("a value cannot start with byte \(current)")
        }
    }

    mutating func word(_ expected: StaticString) throws(JSONSyntaxError) {
        let count = expected.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw error("expected \(expected)") }
        for offset in 0 ..< count where bytes[index + offset] != expected.utf8Start[offset] {
            throw error("expected \(expected)")
        }
        index += count
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= JSONValue.depthLimit else { throw error("nested deeper than \(JSONValue.depthLimit)") }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if !atEnd, current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard !atEnd, current == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
            let key = try string()
            skipWhitespace()
            guard !atEnd, current == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try value(depth: depth)))
            skipWhitespace()
            guard !atEnd else { throw error("the document ends inside an object") }
            if current == UInt8(ascii: ",") {
                index += 1
            } else if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}' in an object")
            }
        }
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= JSONValue.depthLimit else { throw error("nested deeper than \(JSONValue.depthLimit)") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if !atEnd, current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard !atEnd else { throw error("the document ends inside an array") }
            if current == UInt8(ascii: ",") {
                index += 1
            } else if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']' in an array")
            }
        }
    }

    /// A number's text, checked against JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard !atEnd, isDigit(current) else { throw error("a number needs a digit") }
        if current == UInt8(ascii: "0") {
            index += 1
            if !atEnd, isDigit(current) { throw error("a number cannot have a leading zero") }
        } else {
            skipDigits()
        }
        if !atEnd, current == UInt8(ascii: ".") {
            index += 1
            guard !atEnd, isDigit(current) else { throw error("a fraction needs a digit") }
            skipDigits()
        }
        if !atEnd, current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if !atEnd, current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard !atEnd, isDigit(current) else { throw error("an exponent needs a digit") }
            skipDigits()
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< index]), as: UTF8.self)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func skipDigits() {
        while !atEnd, isDigit(current) { index += 1 }
    }

    /// A string from its opening quote, escapes resolved.
    mutating func string() throws(JSONSyntaxError) -> String {
        index += 1
        let start = index
        // Most strings have no escape: taken as they are.
        var bits: UInt8 = 0
        while !atEnd, current != UInt8(ascii: "\""), current != UInt8(ascii: "\\"), current >= 0x20 {
            bits |= current
            index += 1
        }
        guard !atEnd else { throw error("the document ends inside a string") }
        if current == UInt8(ascii: "\"") {
            index += 1
            let utf8 = UnsafeBufferPointer(rebasing: bytes[start ..< index - 1])
            // ASCII (most keys and values) is UTF-8 as it is: no validation to run, which
            // String(validating:) does in generic code (88 k instructions of `status`; issue 23).
            if bits < 0x80 { return String(decoding: utf8, as: UTF8.self) }
            return try text(utf8, at: start)
        }
        var utf8 = Array(bytes[start ..< index])
        while true {
            guard !atEnd else { throw error("the document ends inside a string") }
            let byte = current
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try utf8.withUnsafeBufferPointer { (utf8) throws(JSONSyntaxError) in try text(utf8, at: start) }
            case UInt8(ascii: "\\"):
                try escape(into: &utf8)
            case 0 ..< 0x20:
                index -= 1
                throw error("a control character (byte \(byte)) inside a string must be escaped")
            default:
                utf8.append(byte)
            }
        }
    }

    /// A string's bytes as text; bytes that are not UTF-8 are refused, as JSON (and JSONDecoder) do.
    func text(_ utf8: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONSyntaxError) -> String {
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw JSONSyntaxError(offset: start, problem: "the string starting here is not UTF-8")
        }
        return text
    }

    /// The escape after a backslash, appended as UTF-8.
    mutating func escape(into utf8: inout [UInt8]) throws(JSONSyntaxError) {
        guard !atEnd else { throw error("the document ends inside an escape") }
        let byte = current
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hexQuad())
            if (0xD800 ..< 0xDC00).contains(scalar) {
                // A high surrogate: a low one must follow as another \u escape.
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a high surrogate escape without its low surrogate")
                }
                index += 2
                let low = UInt32(try hexQuad())
                guard (0xDC00 ..< 0xE000).contains(low) else { throw error("a high surrogate escape without its low surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00 ..< 0xE000).contains(scalar) {
                throw error("a low surrogate escape without its high surrogate")
            }
            appendUTF8(scalar, to: &utf8)
        default:
            index -= 1
            throw error("\\\(Unicode.Scalar(byte)) is not a JSON escape")
        }
    }

    /// A scalar (never a surrogate here, at most 0x10FFFF) as UTF-8.
    func appendUTF8(_ scalar: UInt32, to utf8: inout [UInt8]) {
        switch scalar {
        case 0 ..< 0x80:
            utf8.append(UInt8(scalar))
        case 0x80 ..< 0x800:
            utf8.append(UInt8(0xC0 | scalar >> 6))
            utf8.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800 ..< 0x10000:
            utf8.append(UInt8(0xE0 | scalar >> 12))
            utf8.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            utf8.append(UInt8(0x80 | scalar & 0x3F))
        default:
            utf8.append(UInt8(0xF0 | scalar >> 18))
            utf8.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            utf8.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            utf8.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    mutating func hexQuad() throws(JSONSyntaxError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw error("a \\u escape needs four hexadecimal digits") }
        var value: UInt16 = 0
        for _ in 0 ..< 4 {
            let byte = current
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hexadecimal digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}

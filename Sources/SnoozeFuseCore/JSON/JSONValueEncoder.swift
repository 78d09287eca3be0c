/// Encodes `Encodable` values as JSON text: what Foundation's JSONEncoder with `.sortedKeys` and
/// `.withoutEscapingSlashes` writes for the types the nap writes (their own keys, numbers, strings,
/// booleans, optionals left out, arrays, nested structs, enums by raw value), read back the same
/// by JSONDecoder and by ``JSONValueDecoder``.
///
/// Why not JSONEncoder: a nap writes its live state at every change and a line for each event,
/// while it naps and while its alarm rings. JSONEncoder's code, with the `URL` and `Data` around
/// it, was mapped back into a nap that had given its set-up's pages back: 0.8 MiB of a ringing
/// nap's memory (issue 23). This writer is plain code over strings.
///
/// What it does not do: JSONEncoder's special forms for Foundation's types (`Date` is written as
/// its own `Codable` gives it, a number of seconds, as JSONEncoder's default; `URL`, `Data` and
/// `Decimal` are not written as JSONEncoder would), key or date strategies, user info. Keys are
/// sorted by their UTF-8 bytes. A number that is not finite is refused, as JSONEncoder does.
public struct JSONValueEncoder: Sendable {
    public init() {}

    /// `value` as one line of JSON text.
    public func encode<T: Encodable>(_ value: T) throws -> String {
        try encodedValue(value).text
    }

    /// `value` as a document, before it is written.
    public func encodedValue<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = EncodedNode()
        try value.encode(to: ValueEncoding(node: root, codingPath: []))
        return root.value
    }
}

extension JSONValue {
    /// The document as one line of JSON: no spaces, object members sorted by their keys' UTF-8
    /// bytes (a key written twice keeps its first value), strings as ``quoted(_:)`` writes them.
    public var text: String {
        var text = ""
        write(into: &text)
        return text
    }

    private func write(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let digits): text += digits
        case .string(let value): text += JSONValue.quoted(value)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            var written: [String] = []
            for member in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) where written.last != member.key {
                if !written.isEmpty { text += "," }
                written.append(member.key)
                text += JSONValue.quoted(member.key) + ":"
                member.value.write(into: &text)
            }
            text += "}"
        }
    }

    /// A finite `Double` as JSON's number: a whole one of at most 15 digits without a fraction
    /// (`3`, as JSONEncoder writes it), any other as Swift's shortest text that reads back the same.
    static func number(_ value: Double) -> JSONValue? {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 1e15 { return .number(String(Int64(value))) }
        return .number(value.description)
    }
}

/// What has been encoded at one place of the document: containers hand out nested containers that
/// are filled after they are made, so each place is a reference filled in place.
private final class EncodedNode {
    enum Content {
        case unset
        case value(JSONValue)
        case object([(key: String, node: EncodedNode)])
        case array([EncodedNode])
    }

    var content = Content.unset

    var value: JSONValue {
        switch content {
        case .unset: .object([])
        case .value(let value): value
        case .object(let members): .object(members.map { JSONMember(key: $0.key, value: $0.node.value) })
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    /// The node of `key` in this object, made when new; a key encoded again starts over.
    func member(_ key: String) -> EncodedNode {
        guard case .object(var members) = content else {
            let node = EncodedNode()
            content = .object([(key, node)])
            return node
        }
        let node = EncodedNode()
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].node = node
        } else {
            members.append((key, node))
        }
        content = .object(members)
        return node
    }

    /// A new element at the end of this array.
    func appended() -> EncodedNode {
        let node = EncodedNode()
        guard case .array(var elements) = content else {
            content = .array([node])
            return node
        }
        elements.append(node)
        content = .array(elements)
        return node
    }

    func becomeObject() {
        if case .object = content { return }
        content = .object([])
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }

    var count: Int {
        if case .array(let elements) = content { return elements.count }
        return 0
    }
}

/// Encodes one value into `node`.
private struct ValueEncoding: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(ObjectEncoding<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return ArrayEncoding(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleEncoding(node: node, codingPath: codingPath) }
}

/// A finite number, or the error JSONEncoder throws for one that is not.
private func finite(_ value: Double, _ path: [any CodingKey]) throws -> JSONValue {
    guard let number = JSONValue.number(value) else {
        throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: path, debugDescription: "\(value) is not a JSON number"))
    }
    return number
}

/// Writes a value of one of the basic types, or encodes any other into `node`.
private func put<T: Encodable>(_ value: T, into node: EncodedNode, at path: [any CodingKey]) throws {
    switch value {
    case let value as String: node.content = .value(.string(value))
    case let value as Bool: node.content = .value(.bool(value))
    case let value as Double: node.content = .value(try finite(value, path))
    case let value as Float: node.content = .value(try finite(Double(value), path))
    // Every integer type the standard library encodes through a single value of its own type
    // (each would come back here as itself): cast by name, which looks up no conformance.
    case let value as Int: node.content = .value(.number(String(value)))
    case let value as Int8: node.content = .value(.number(String(value)))
    case let value as Int16: node.content = .value(.number(String(value)))
    case let value as Int32: node.content = .value(.number(String(value)))
    case let value as Int64: node.content = .value(.number(String(value)))
    case let value as UInt: node.content = .value(.number(String(value)))
    case let value as UInt8: node.content = .value(.number(String(value)))
    case let value as UInt16: node.content = .value(.number(String(value)))
    case let value as UInt32: node.content = .value(.number(String(value)))
    case let value as UInt64: node.content = .value(.number(String(value)))
    default: try value.encode(to: ValueEncoding(node: node, codingPath: path))
    }
}

private struct ObjectEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    func encodeNil(forKey key: Key) { node.member(key.stringValue).content = .value(.null) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try put(value, into: node.member(key.stringValue), at: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = node.member(key.stringValue)
        nested.becomeObject()
        return KeyedEncodingContainer(ObjectEncoding<NestedKey>(node: nested, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = node.member(key.stringValue)
        nested.becomeArray()
        return ArrayEncoding(node: nested, codingPath: codingPath + [key])
    }

    func superEncoder() -> any Encoder {
        ValueEncoding(node: node.member(PathKey.superKey.stringValue), codingPath: codingPath + [PathKey.superKey])
    }

    func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoding(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct ArrayEncoding: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    private var nextPath: [any CodingKey] { codingPath + [PathKey(intValue: node.count)] }

    func encodeNil() { node.appended().content = .value(.null) }

    func encode<T: Encodable>(_ value: T) throws {
        let path = nextPath
        try put(value, into: node.appended(), at: path)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath, nested = node.appended()
        nested.becomeObject()
        return KeyedEncodingContainer(ObjectEncoding<NestedKey>(node: nested, codingPath: path))
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath, nested = node.appended()
        nested.becomeArray()
        return ArrayEncoding(node: nested, codingPath: path)
    }

    func superEncoder() -> any Encoder {
        let path = nextPath
        return ValueEncoding(node: node.appended(), codingPath: path)
    }
}

private struct SingleEncoding: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    func encodeNil() { node.content = .value(.null) }

    func encode<T: Encodable>(_ value: T) throws { try put(value, into: node, at: codingPath) }
}

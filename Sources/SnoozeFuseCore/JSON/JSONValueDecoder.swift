/// Decodes `Decodable` values from JSON read by ``JSONValue``: what Foundation's JSONDecoder with
/// its default strategies gives for the types the nap writes (their own keys, numbers, strings,
/// booleans, optionals, arrays, nested structs, enums by raw value), without its start-up cost
/// (issue 23; see ``JSONValue``). Round trips through JSONEncoder are tested for every type read
/// with it.
///
/// What it does not do: JSONDecoder's special forms for Foundation's types (`Date` is decoded as
/// its own `Codable` gives it, a number of seconds, as JSONDecoder's default; `URL`, `Data` and
/// `Decimal` are not read as JSONDecoder would), key or date strategies, user info.
public struct JSONValueDecoder: Sendable {
    public init() {}

    /// A `T` from the JSON document `bytes`.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decode(type, from: JSONValue(parsing: bytes))
    }

    /// A `T` from the JSON document `text`.
    public func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try decode(type, from: JSONValue(parsing: text))
    }

    /// A `T` from a document already read.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoding(value: value, codingPath: []))
    }
}

/// A string key for the coding path of an array element or a super decoder (or encoder).
struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue }

    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    static let superKey = PathKey(stringValue: "super")
}

/// The conversions of one value to the types a container is asked for, shared by the three.
extension JSONValue {
    fileprivate func context(_ path: [any CodingKey], _ what: String) -> DecodingError.Context {
        DecodingError.Context(codingPath: path, debugDescription: what)
    }

    fileprivate func mismatch(_ type: Any.Type, _ path: [any CodingKey]) -> DecodingError {
        if case .null = self {
            return .valueNotFound(type, context(path, "expected \(type), found null"))
        }
        return .typeMismatch(type, context(path, "expected \(type), found \(kindName)"))
    }

    fileprivate func bool(_ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let value) = self else { throw mismatch(Bool.self, path()) }
        return value
    }

    fileprivate func string(_ path: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let value) = self else { throw mismatch(String.self, path()) }
        return value
    }

    fileprivate func double(_ path: @autoclosure () -> [any CodingKey]) throws -> Double {
        guard case .number(let text) = self, let value = Double(text), value.isFinite else { throw mismatch(Double.self, path()) }
        return value
    }

    fileprivate func float(_ path: @autoclosure () -> [any CodingKey]) throws -> Float {
        guard case .number(let text) = self, let value = Float(text), value.isFinite else { throw mismatch(Float.self, path()) }
        return value
    }

    /// An integer written as one (`42`), or as a number that is exactly one (`42.0`, `4.2e1`).
    fileprivate func integer<T: FixedWidthInteger>(_ path: @autoclosure () -> [any CodingKey]) throws -> T {
        guard case .number(let text) = self else { throw mismatch(T.self, path()) }
        if let value = T(text, radix: 10) { return value }
        guard let double = Double(text), let value = T(exactly: double) else {
            throw DecodingError.dataCorrupted(context(path(), "\(text) is not a \(T.self)"))
        }
        return value
    }
}

/// The decoder of one value.
private struct ValueDecoding: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw value.mismatch([String: Any].self, codingPath)
        }
        return KeyedDecodingContainer(ObjectContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw value.mismatch([Any].self, codingPath) }
        return ArrayContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(value: value, codingPath: codingPath) }
}

/// An object's members by key.
private struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [JSONMember]
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        var keys: [Key] = []
        for member in members {
            if let key = Key(stringValue: member.key) { keys.append(key) }
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    func lookup(_ key: Key) -> JSONValue? { member(named: key.stringValue) }

    func value(_ key: Key) throws -> JSONValue {
        guard let value = lookup(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "no key \"\(key.stringValue)\""))
        }
        return value
    }

    func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key).bool(path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key).string(path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key).double(path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(key).float(path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key).integer(path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key).integer(path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key).integer(path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key).integer(path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key).integer(path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key).integer(path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key).integer(path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key).integer(path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key).integer(path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key).integer(path(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try T(from: ValueDecoding(value: value(key), codingPath: path(key)))
    }

    // decodeIfPresent for each type, rather than the standard library's default: that one is
    // generic code reached through the container's box, which looked up `Optional<T>`'s metadata
    // at every optional field (a fifth of `status` reading the live state; issue 23). The same
    // answers: nil for a key that is absent or null.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key)?.bool(path(key)) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key)?.string(path(key)) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(key)?.double(path(key)) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try present(key)?.float(path(key)) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try present(key)?.integer(path(key)) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try present(key)?.integer(path(key)) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = present(key) else { return nil }
        return try T(from: ValueDecoding(value: value, codingPath: path(key)))
    }

    /// The value of `key` unless it is absent or null.
    private func present(_ key: Key) -> JSONValue? {
        guard let value = lookup(key) else { return nil }
        if case .null = value { return nil }
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoding(value: value(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoding(value: value(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoding(value: member(named: PathKey.superKey.stringValue) ?? .null, codingPath: codingPath + [PathKey.superKey])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoding(value: lookup(key) ?? .null, codingPath: path(key))
    }

    /// The first member called `name`, as JSONDecoder takes it.
    private func member(named name: String) -> JSONValue? { members.first { $0.key == name }?.value }
}

/// An array's elements in order.
private struct ArrayContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element (taken only when its decoding succeeds, as JSONDecoder does).
    mutating func next<T>(_ type: T.Type, _ convert: (JSONValue, [any CodingKey]) throws -> T) throws -> T {
        let path = codingPath + [PathKey(intValue: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: path, debugDescription: "the array has no more elements"))
        }
        let value = try convert(elements[currentIndex], path)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, DecodingError.Context(codingPath: codingPath, debugDescription: "the array has no more elements"))
        }
        guard case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.bool($1) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.string($1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.double($1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.float($1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.integer($1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.integer($1) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(type) { try T(from: ValueDecoding(value: $0, codingPath: $1)) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try ValueDecoding(value: $0, codingPath: $1).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try ValueDecoding(value: $0, codingPath: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { ValueDecoding(value: $0, codingPath: $1) }
    }
}

/// One value on its own (an enum by its raw value, a wrapper type).
private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try value.bool(codingPath) }
    func decode(_ type: String.Type) throws -> String { try value.string(codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try value.double(codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try value.float(codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try value.integer(codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try value.integer(codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try value.integer(codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try value.integer(codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try value.integer(codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try value.integer(codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try value.integer(codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try value.integer(codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try value.integer(codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try value.integer(codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: ValueDecoding(value: value, codingPath: codingPath)) }
}

/// One JSON object's members, read by hand into a type's fields: for the one document a short
/// command reads every time it starts (a nap's live state, which `status` reads each time a status
/// bar asks). The answers are ``JSONValueDecoder``'s (and so JSONDecoder's) for a synthesized
/// `Decodable` with the same keys: a required member absent or null is refused, an optional one
/// absent or null is nil, a member of the wrong kind is refused either way, unknown members are
/// ignored, and a key written twice counts once, the first time.
///
/// Why not ``JSONValueDecoder`` there: `Decodable`'s containers are generic code, and their first
/// use instantiates the metadata of every container and optional they meet: 0.26 M of the 0.4 M
/// instructions `status` spent reading the state (callgrind, issue 23). These are plain functions.
public struct JSONFields: Sendable {
    /// The members as written.
    public let members: [JSONMember]
    /// Where the object is in the document (`setup`, `alarm.due`), for errors; empty at the top.
    public let path: String

    /// The object `value`; anything else is refused.
    public init(_ value: JSONValue, path: String = "") throws(JSONFieldError) {
        guard case .object(let members) = value else {
            throw JSONFieldError(path: path, problem: "is \(value.kindName), not an object")
        }
        self.members = members
        self.path = path
    }

    /// The object that the JSON document `bytes` is.
    public init(parsing bytes: [UInt8]) throws(JSONFieldError) {
        let value: JSONValue
        do throws(JSONSyntaxError) {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw JSONFieldError(path: "", problem: error.description, isSyntax: true)
        }
        try self.init(value)
    }

    /// The first member called `key`, null included; nil when there is none.
    public func value(_ key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// `key` as a path in the document.
    private func pathOf(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    private func required(_ key: String) throws(JSONFieldError) -> JSONValue {
        guard let value = value(key) else { throw JSONFieldError(path: pathOf(key), problem: "is missing") }
        if case .null = value { throw JSONFieldError(path: pathOf(key), problem: "is null") }
        return value
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = value(key) else { return nil }
        if case .null = value { return nil }
        return value
    }

    private func mismatch(_ key: String, _ value: JSONValue, _ expected: String) -> JSONFieldError {
        JSONFieldError(path: pathOf(key), problem: "is \(value.kindName), not \(expected)")
    }

    // MARK: - Required members

    public func string(_ key: String) throws(JSONFieldError) -> String { try string(key, try required(key)) }
    public func bool(_ key: String) throws(JSONFieldError) -> Bool { try bool(key, try required(key)) }
    public func double(_ key: String) throws(JSONFieldError) -> Double { try double(key, try required(key)) }
    public func int(_ key: String) throws(JSONFieldError) -> Int { try int(key, try required(key)) }
    public func int32(_ key: String) throws(JSONFieldError) -> Int32 { try int32(key, try required(key)) }

    /// The member `key`, an object.
    public func object(_ key: String) throws(JSONFieldError) -> JSONFields { try JSONFields(try required(key), path: pathOf(key)) }

    /// A member whose string is one of a type's raw values: `make` gives the value, or nil for a
    /// string that is none of them (refused, as JSONDecoder refuses it).
    public func choice<T>(_ key: String, _ make: (String) -> T?) throws(JSONFieldError) -> T {
        try choice(key, try required(key), make)
    }

    // MARK: - Optional members (nil when absent or null)

    public func string(ifPresent key: String) throws(JSONFieldError) -> String? { try ifPresent(key, string) }
    public func bool(ifPresent key: String) throws(JSONFieldError) -> Bool? { try ifPresent(key, bool) }
    public func double(ifPresent key: String) throws(JSONFieldError) -> Double? { try ifPresent(key, double) }
    public func int(ifPresent key: String) throws(JSONFieldError) -> Int? { try ifPresent(key, int) }
    public func int32(ifPresent key: String) throws(JSONFieldError) -> Int32? { try ifPresent(key, int32) }

    public func object(ifPresent key: String) throws(JSONFieldError) -> JSONFields? {
        try ifPresent(key) { (key, value) throws(JSONFieldError) in try JSONFields(value, path: pathOf(key)) }
    }

    /// As ``choice(_:_:)``, nil when the member is absent or null.
    public func choice<T>(ifPresent key: String, _ make: (String) -> T?) throws(JSONFieldError) -> T? {
        try ifPresent(key) { (key, value) throws(JSONFieldError) in try choice(key, value, make) }
    }

    /// The member `key`, an array of objects.
    public func objects(ifPresent key: String) throws(JSONFieldError) -> [JSONFields]? {
        guard let value = present(key) else { return nil }
        guard case .array(let elements) = value else { throw mismatch(key, value, "an array") }
        var objects: [JSONFields] = []
        objects.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            objects.append(try JSONFields(element, path: pathOf(key) + "[\(index)]"))
        }
        return objects
    }

    /// `convert` of the member `key`, or nil when it is absent or null.
    private func ifPresent<T>(_ key: String, _ convert: (String, JSONValue) throws(JSONFieldError) -> T) throws(JSONFieldError) -> T? {
        guard let value = present(key) else { return nil }
        return try convert(key, value)
    }

    // MARK: - Conversions (JSONValueDecoder's)

    private func string(_ key: String, _ value: JSONValue) throws(JSONFieldError) -> String {
        guard case .string(let text) = value else { throw mismatch(key, value, "a string") }
        return text
    }

    private func bool(_ key: String, _ value: JSONValue) throws(JSONFieldError) -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(key, value, "a boolean") }
        return flag
    }

    private func double(_ key: String, _ value: JSONValue) throws(JSONFieldError) -> Double {
        guard case .number(let text) = value else { throw mismatch(key, value, "a number") }
        guard let number = Double(text), number.isFinite else {
            throw JSONFieldError(path: pathOf(key), problem: "\(text) is beyond a Double's range")
        }
        return number
    }

    private func choice<T>(_ key: String, _ value: JSONValue, _ make: (String) -> T?) throws(JSONFieldError) -> T {
        let text = try string(key, value)
        guard let choice = make(text) else { throw JSONFieldError(path: pathOf(key), problem: "\"\(text)\" is not one of its values") }
        return choice
    }

    private func int32(_ key: String, _ value: JSONValue) throws(JSONFieldError) -> Int32 {
        let integer = try int(key, value)
        guard let narrow = Int32(exactly: integer) else { throw JSONFieldError(path: pathOf(key), problem: "\(integer) is not an Int32") }
        return narrow
    }

    /// An integer written as one (`42`), or as a number that is exactly one (`42.0`, `4.2e1`).
    private func int(_ key: String, _ value: JSONValue) throws(JSONFieldError) -> Int {
        guard case .number(let text) = value else { throw mismatch(key, value, "a number") }
        if let integer = Int(text, radix: 10) { return integer }
        guard let number = Double(text), let integer = Int(exactly: number) else {
            throw JSONFieldError(path: pathOf(key), problem: "\(text) is not an integer in range")
        }
        return integer
    }
}

/// A JSON document that is not the object a type reads: which member (its path) and what is
/// wrong with it, or where the bytes stop being JSON.
public struct JSONFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The member's path (`setup.volume`, `sinkFixes[1].sink`); empty for the document itself.
    public var path: String
    public var problem: String
    /// The bytes are not JSON at all (``problem`` says where), rather than JSON of another shape.
    public var isSyntax: Bool

    public init(path: String, problem: String, isSyntax: Bool = false) {
        self.path = path
        self.problem = problem
        self.isSyntax = isSyntax
    }

    public var description: String { path.isEmpty ? problem : "\(path) \(problem)" }
}

extension JSONValue {
    /// What kind of value this is, for messages: `a string`, `null`.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

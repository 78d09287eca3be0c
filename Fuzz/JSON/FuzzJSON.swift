// libFuzzer entry for Core's JSON reader (JSONValue), its decoder (JSONValueDecoder) and its
// members read by hand (JSONFields), which read a nap's live state file and its answers on the
// control socket: bytes anyone could have damaged. Whatever the bytes, reading ends (nesting is
// bounded), and a document it takes is one it takes again, with the same values, once written back
// out; decoding a nested type never traps; and a type read by hand with JSONFields is read exactly
// as the decoder reads it (the same value, or refused by both). Anything else (a crash, a trap, a
// sanitizer report, a difference) is a bug.

/// A type with a bit of everything the nap's state has: optionals, enums, arrays, nested objects.
struct Probe: Decodable {
    enum Kind: String, Decodable { case nap, guardian }
    struct Inner: Decodable {
        var at: Double
        var count: Int32?
    }
    var kind: Kind?
    var name: String?
    var flag: Bool?
    var level: UInt8?
    var inner: Inner?
    var list: [Inner]?
    var table: [String: Int64]?
}

/// A type of the live state's kinds of members, read both ways: through Decodable, and by hand.
struct ByHand: Decodable, Equatable {
    enum Kind: String, Decodable { case nap, guardian }
    struct Inner: Decodable, Equatable {
        var at: Double
        var count: Int32?

        init(_ fields: JSONFields) throws(JSONFieldError) {
            at = try fields.double("at")
            count = try fields.int32(ifPresent: "count")
        }
    }
    var kind: Kind
    var other: Kind?
    var name: String
    var label: String?
    var flag: Bool
    var maybe: Bool?
    var pid: Int32
    var number: Int?
    var inner: Inner
    var spare: Inner?
    var list: [Inner]?

    init(_ fields: JSONFields) throws(JSONFieldError) {
        kind = try fields.choice("kind", Kind.init(rawValue:))
        other = try fields.choice(ifPresent: "other", Kind.init(rawValue:))
        name = try fields.string("name")
        label = try fields.string(ifPresent: "label")
        flag = try fields.bool("flag")
        maybe = try fields.bool(ifPresent: "maybe")
        pid = try fields.int32("pid")
        number = try fields.int(ifPresent: "number")
        inner = try Inner(try fields.object("inner"))
        spare = try fields.object(ifPresent: "spare").map { (spare) throws(JSONFieldError) in try Inner(spare) }
        list = try fields.objects(ifPresent: "list").map { (list) throws(JSONFieldError) in
            var inners: [Inner] = []
            for fields in list { inners.append(try Inner(fields)) }
            return inners
        }
    }
}

/// `value` written back as JSON text.
func written(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let bool): return bool ? "true" : "false"
    case .number(let text): return text
    case .string(let text): return JSONValue.quoted(text)
    case .array(let elements):
        var text = "["
        for (index, element) in elements.enumerated() { text += (index > 0 ? "," : "") + written(element) }
        return text + "]"
    case .object(let members):
        var text = "{"
        for (index, member) in members.enumerated() { text += (index > 0 ? "," : "") + JSONValue.quoted(member.key) + ":" + written(member.value) }
        return text + "}"
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? JSONValue(parsing: bytes) {
        let again = written(value)
        guard let reread = try? JSONValue(parsing: again) else { preconditionFailure("refused its own writing: \(again)") }
        precondition(reread == value, "read back differently: \(again)")
        _ = try? JSONValueDecoder().decode(Probe.self, from: value)
        _ = try? JSONValueDecoder().decode([Probe].self, from: value)
        let decoded = try? JSONValueDecoder().decode(ByHand.self, from: value)
        let byHand = try? ByHand(try JSONFields(value))
        precondition(decoded == byHand, "read by hand as \(String(describing: byHand)), decoded as \(String(describing: decoded)): \(again)")
    }
    return 0
}

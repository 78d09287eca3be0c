// libFuzzer entry for Core's JSON reader (JSONValue) and decoder (JSONValueDecoder), which read a
// nap's live state file and its answers on the control socket: bytes anyone could have damaged.
// Whatever the bytes, reading ends (nesting is bounded), and a document it takes is one it takes
// again, with the same values, once written back out; decoding a nested type never traps. Anything
// else (a crash, a trap, a sanitizer report) is a bug.

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
    }
    return 0
}

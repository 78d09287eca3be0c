// libFuzzer entry for Core's JSON reader (JSONValue), its decoder (JSONValueDecoder) and its
// members read by hand (JSONFields), which read a nap's live state file and its answers on the
// control socket: bytes anyone could have damaged. Whatever the bytes, reading ends (nesting is
// bounded), and a document it takes is one it takes again, with the same values, once written back
// out; decoding a nested type never traps; and a type read by hand with JSONFields is read exactly
// as the decoder reads it (the same value, or refused by both).
//
// And the live state's ranges (LiveStateRange, the table the runtime's reader checks): on any
// document, and on a whole state with an extreme number (±1e300, 2^63, -0, 1e999, NaN spelled out
// as a string…) planted at the member the input's first two bytes choose, a number beyond its range
// is refused, and every number the table lets through is turned into what the runtime turns it
// into (nanoseconds since boot, milliseconds of a timer, a pid, a percentage) without a trap.
// Anything else (a crash, a trap, a sanitizer report, a difference) is a bug.

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

/// A live state with every member, where the extremes are planted.
let wholeState = #"{"alarm":{"due":{"bootSeconds":45054.36,"wall":"2026-11-27T22:26:34.297Z","wallSeconds":1795818394.29},"reason":"nap"},"bootID":"b","detached":true,"guardianPid":22923,"history":{"created":1795814793.29,"hold":"desktop","holdMode":true,"holder":"nap","idleAfter":30,"lastRelease":1795814793.297,"napID":"n","napping":1795814794.297,"snoozes":2,"started":1795814793.297,"fellAsleep":1795814795.5,"firstRing":1795818394.3,"latenessMs":0.25,"ended":1795818400},"holder":"guardian","maxDeadline":{"bootSeconds":48653.36,"wall":"w","wallSeconds":1795821993.29},"phase":"ringing","phaseEnds":{"bootSeconds":45054.36,"wall":"w","wallSeconds":1795818394.29},"phaseSeconds":3600,"pid":22916,"ringingSince":{"bootSeconds":45054.4,"wall":"w","wallSeconds":1795818394.4},"setup":{"device":"null","fadeInSeconds":10,"maxSeconds":7200,"napSeconds":3600,"presetName":"basic","releaseSeconds":1,"snoozeSeconds":300,"soundName":"beep","volume":80,"systemVolume":60,"ringLimitSeconds":120},"sinkFixes":[{"sink":"a","mutedBefore":true,"volumeBefore":35,"volumeSet":60}],"snoozes":2,"started":{"bootSeconds":41453.36,"wall":"w","wallSeconds":1795814793.29},"updated":{"bootSeconds":41454.36,"wall":"w","wallSeconds":1795814794.29},"version":1}"#

/// Numbers no nap writes, and what is not a number where one goes (NaN cannot be a JSON number).
let extremes = ["1e300", "-1e300", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e10", "-1e10",
                "-1", "-0", "0", "-0.0", "0.5", "1e-300", "4194305", "604801", "1001", "1e999", "-1e999", "4102444801",
                "1000000001", "1e12", "-1e12", "1000000000001", #""NaN""#, #""Infinity""#, "null", "true", "[]", "{}"]

/// `document` with `text` (JSON) at `path` (a LiveStateRange member; `[]`: the array's first
/// element, made when missing).
func planted(_ text: String, at path: ArraySlice<Substring>, in document: JSONValue) -> JSONValue {
    guard let step = path.first else { return (try? JSONValue(parsing: text)) ?? .null }
    let each = step.hasSuffix("[]")
    let key = each ? String(step.dropLast(2)) : String(step)
    var members: [JSONMember] = []
    if case .object(let existing) = document { members = existing }
    let inner = members.first(where: { $0.key == key })?.value ?? (each ? .array([.object([])]) : .object([]))
    let value: JSONValue
    if each {
        var elements: [JSONValue] = []
        if case .array(let existing) = inner { elements = existing }
        if elements.isEmpty { elements = [.object([])] }
        elements[0] = planted(text, at: path.dropFirst(), in: elements[0])
        value = .array(elements)
    } else {
        value = planted(text, at: path.dropFirst(), in: inner)
    }
    members.removeAll { $0.key == key }
    return .object(members + [JSONMember(key: key, value: value)])
}

/// The numbers of `document` at `path`.
func numbers(at path: ArraySlice<Substring>, in document: JSONValue) -> [Double] {
    guard let step = path.first else {
        if case .number(let text) = document, let number = Double(text) { return [number] }
        return []
    }
    let each = step.hasSuffix("[]")
    let key = each ? String(step.dropLast(2)) : String(step)
    guard case .object(let members) = document, let inner = members.first(where: { $0.key == key })?.value else { return [] }
    guard each else { return numbers(at: path.dropFirst(), in: inner) }
    guard case .array(let elements) = inner else { return [] }
    return elements.flatMap { numbers(at: path.dropFirst(), in: $0) }
}

/// Turns each finite number of an accepted state into what the runtime makes of it; a value the
/// table should have refused traps here.
func useAsTheRuntimeDoes(_ document: JSONValue) {
    var sink: Int64 = 0
    for (path, range) in LiveStateRange.members {
        for number in numbers(at: path.split(separator: ".")[...], in: document) where number.isFinite {
            switch range {
            case LiveStateRange.bootSeconds:
                // SavedInstant.instant: nanoseconds since boot; and how far it is from now.
                let instant = Int64((number * 1e9).rounded())
                sink &+= instant.subtractingReportingOverflow(Int64(1e18)).partialValue
            case LiveStateRange.wallSeconds:
                // From the wall clock (another boot): nanoseconds from now; and written out.
                sink &+= Int64(((number - 1.8e9) * 1e9).rounded())
                sink &+= Int64(WallClockText.iso8601(secondsSince1970: number).utf8.count)
            case LiveStateRange.timerSeconds:
                // SavedAlarmSetup.timers and the fade-in: milliseconds.
                let milliseconds = Int64(number * 1000)
                sink &+= Duration.milliseconds(milliseconds).components.seconds
            case LiveStateRange.pid:
                sink &+= Int64(Int32(number))
            case LiveStateRange.latenessMs:
                sink &+= Int64(number * 1e6)
            default:
                sink &+= Int64(Int(number))
            }
        }
    }
    withExtendedLifetime(sink) {}
}

/// The live state's ranges: any document is checked without a trap; what passes is used as the
/// runtime uses it; an extreme planted at a member is refused exactly when it is a finite number
/// beyond that member's range.
func fuzzLiveStateRanges(_ bytes: [UInt8], document: JSONValue?) {
    if let document, (try? LiveStateRange.check(document: document)) != nil { useAsTheRuntimeDoes(document) }
    guard bytes.count >= 2, let whole = try? JSONValue(parsing: wholeState) else { return }
    let members = LiveStateRange.members
    let (path, range) = members[Int(bytes[0]) % members.count]
    // The extreme from the list, or the rest of the input as the member's JSON.
    let text = bytes[1] < 200 ? extremes[Int(bytes[1]) % extremes.count] : String(decoding: bytes.dropFirst(2), as: UTF8.self)
    let state = planted(text, at: path.split(separator: ".")[...], in: whole)
    let refusal: JSONFieldError?
    do throws(JSONFieldError) {
        try LiveStateRange.check(document: state)
        refusal = nil
    } catch {
        refusal = error
    }
    let number: Double? = if case .number(let written)? = try? JSONValue(parsing: text) { Double(written) } else { nil }
    let beyond = number.map { $0.isFinite && !range.contains($0) } ?? false
    precondition((refusal != nil) == beyond, "\(path) = \(text): \(refusal.map { "\($0)" } ?? "accepted")")
    // Named as the planted member (the first element of an array: `sinkFixes[0].volumeSet`).
    let named = path.split(separator: "[]", omittingEmptySubsequences: false).joined(separator: "[0]")
    if let refusal { precondition(refusal.path == named, "\(refusal.path) for \(path)") }
    if refusal == nil { useAsTheRuntimeDoes(state) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let document = try? JSONValue(parsing: bytes)
    if let value = document {
        let again = written(value)
        guard let reread = try? JSONValue(parsing: again) else { preconditionFailure("refused its own writing: \(again)") }
        precondition(reread == value, "read back differently: \(again)")
        _ = try? JSONValueDecoder().decode(Probe.self, from: value)
        _ = try? JSONValueDecoder().decode([Probe].self, from: value)
        let decoded = try? JSONValueDecoder().decode(ByHand.self, from: value)
        let byHand = try? ByHand(try JSONFields(value))
        precondition(decoded == byHand, "read by hand as \(String(describing: byHand)), decoded as \(String(describing: decoded)): \(again)")
    }
    fuzzLiveStateRanges(bytes, document: document)
    return 0
}

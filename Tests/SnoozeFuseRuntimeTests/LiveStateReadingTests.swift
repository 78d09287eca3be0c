import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// The live state and the nap's answers are read with Core's JSONValueDecoder (issue 23), and the
/// state is written with its JSONValueEncoder: every state reads back as it was written (by both
/// readers), and on any file, damaged or not, the reader gives what JSONDecoder gives.
@Suite("The live state read without JSONDecoder")
struct LiveStateReadingTests {
    /// A nap's state with every member present (a guardian's pid, a terminal, a history, sink fixes).
    static let everyMember = #"""
    {"alarm":{"due":{"bootSeconds":45054.365985571,"wall":"2026-11-27T22:26:34.297Z","wallSeconds":1795818394.297765},"reason":"nap"},
    "bootID":"a7c4ca35-d651-4779-9d5f-adf64487a18b","detached":true,"guardianPid":22923,
    "history":{"created":1795814793.2907019,"hold":"desktop","holdMode":true,"holder":"nap","idleAfter":30,"lastRelease":1795814793.297,
    "napID":"2ad6aee8","napping":1795814794.297,"preset":"basic","snoozes":2,"sound":"beep","started":1795814793.297,"fellAsleep":1795814795.5,
    "firstRing":1795818394.3,"reason":"nap","latenessMs":0.25,"output":"sound server","rungBy":"nap","takenOverBy":"guardian",
    "outcome":"stopped","ended":1795818400,"origin":1795814793},
    "holder":"guardian","maxDeadline":{"bootSeconds":48653.365985571,"wall":"2026-11-27T23:26:33.297Z","wallSeconds":1795821993.297765},
    "phase":"ringing","phaseEnds":{"bootSeconds":45054.365985571,"wall":"2026-11-27T22:26:34.297Z","wallSeconds":1795818394.297765},
    "phaseSeconds":3600,"pid":22916,"ringingSince":{"bootSeconds":45054.4,"wall":"2026-11-27T22:26:34.4Z","wallSeconds":1795818394.4},
    "setup":{"device":"null","dismissal":"word","fadeInSeconds":10,"fixesVolume":true,"plain":false,"maxSeconds":7200,"napSeconds":3600,
    "presetName":"basic","releaseSeconds":1,"route":"wake","snoozeSeconds":300,"soundName":"beep","soundPath":"/s/b\u00e9ep \"1\".caf",
    "volume":80,"systemVolume":60,"ringLimitSeconds":120},
    "sinkFixes":[{"sink":"alsa_output.pci","mutedBefore":true,"volumeBefore":35,"volumeSet":60},{"sink":"headset"}],
    "snoozes":2,"started":{"bootSeconds":41453.365985571,"wall":"2026-11-27T21:26:33.297Z","wallSeconds":1795814793.297765},
    "terminal":"/dev/pts/3","updated":{"bootSeconds":41454.366675397,"wall":"2026-11-27T21:26:34.298Z","wallSeconds":1795814794.2984548},
    "version":1}
    """#

    /// What the nap writes after its own first save: no history, no optional member.
    static let fewestMembers = #"""
    {"bootID":"b","detached":false,"holder":"nap","phase":"holding","pid":1,"setup":{"device":"default","fadeInSeconds":0,"maxSeconds":1,
    "napSeconds":1,"presetName":"p","releaseSeconds":1,"snoozeSeconds":1,"soundName":"tone","volume":0},"snoozes":0,
    "updated":{"bootSeconds":0,"wall":"","wallSeconds":0},"version":1}
    """#

    func foundation(_ text: String) -> LiveSessionState? { foundation(Array(text.utf8)) }

    func foundation(_ bytes: [UInt8]) -> LiveSessionState? { try? JSONDecoder().decode(LiveSessionState.self, from: Data(bytes)) }

    /// What JSONDecoder reads, where its numbers are in the ranges a nap writes (the reader refuses
    /// the others, naming the member).
    func foundationInRange(_ bytes: [UInt8]) -> LiveSessionState? {
        foundation(bytes).flatMap { state in (try? state.checkRanges()) != nil ? state : nil }
    }

    @Test(arguments: [everyMember, fewestMembers])
    func aStateReadsAsJSONDecoderReadsItAndBackAsItWasWritten(_ text: String) throws {
        let state = try #require(LiveSessionState.decode(Data(text.utf8)))
        #expect(state == foundation(text))
        #expect(LiveSessionState.decode(Data(state.encoded())) == state)
        // Written without JSONEncoder: JSONDecoder reads it the same, and it is JSONEncoder's text.
        #expect(foundation(state.encoded()) == state)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: state.encoded(), as: UTF8.self) == String(decoding: try encoder.encode(state), as: UTF8.self))
    }

    /// The state with every member has every member: each optional of the state and of the types
    /// inside it is set. A member added to a type and not to this state fails here, before the
    /// hand-written reader (LiveSessionState.read) can miss it unnoticed.
    @Test func theStateWithEveryMemberHasEveryMember() throws {
        let state = try #require(foundation(Self.everyMember))
        var unset: [String] = []
        func walk(_ value: Any, _ path: String) {
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else {
                    // NapHistoryFacts.origin is not among its CodingKeys: never read, never written.
                    if path != "history.origin" { unset.append(path) }
                    return
                }
                walk(wrapped, path)
                return
            }
            guard mirror.displayStyle == .struct || mirror.displayStyle == .collection else { return }
            for (index, child) in mirror.children.enumerated() {
                walk(child.value, path + (mirror.displayStyle == .collection ? "[\(index)]" : (path.isEmpty ? "" : ".") + (child.label ?? "?")))
            }
        }
        walk(state, "")
        // The second sink fix changed nothing: its two optionals are nil by design.
        #expect(unset == ["sinkFixes[1].mutedBefore", "sinkFixes[1].volumeBefore", "sinkFixes[1].volumeSet"])
    }

    /// Where the reader refuses, it names the member and what is wrong with it.
    @Test func aRefusalNamesTheMember() throws {
        func refusal(_ text: String) -> String? {
            do { _ = try LiveSessionState.read(Array(text.utf8)); return nil } catch { return error.description }
        }
        #expect(refusal(Self.fewestMembers.replacingOccurrences(of: #""volume":0"#, with: #""volume":"loud""#)) == "setup.volume is a string, not a number")
        #expect(refusal(Self.fewestMembers.replacingOccurrences(of: #""phase":"holding""#, with: #""phase":"dozing""#)) == #"phase "dozing" is not one of its values"#)
        #expect(refusal(Self.fewestMembers.replacingOccurrences(of: #""pid":1,"#, with: "")) == "pid is missing")
        #expect(refusal(Self.fewestMembers.replacingOccurrences(of: #""pid":1"#, with: #""pid":4294967296"#)) == "pid 4294967296 is not an Int32")
        #expect(refusal(Self.everyMember.replacingOccurrences(of: #"{"sink":"headset"}"#, with: #"{"sink":null}"#)) == "sinkFixes[1].sink is null")
        #expect(refusal(String(Self.fewestMembers.dropLast(5)))?.hasPrefix("not JSON at byte") == true)
        #expect(refusal(Self.fewestMembers) == nil)
    }

    /// Every number of the state, set to values no nap writes (±1e300, 2^63, 1e10, -1): the state
    /// is refused naming that member, never read into a time or a duration that traps (status,
    /// resume and stop died with SIGILL on `phaseEnds.bootSeconds` 1e10). Negative zero and the
    /// ends of each range read.
    @Test func everyNumberOutOfItsRangeIsRefusedNamingItsMember() throws {
        let base = try #require(try JSONSerialization.jsonObject(with: Data(Self.everyMember.utf8)) as? [String: Any])
        // The paths of every number of the state.
        var paths: [[String]] = []
        func walk(_ value: Any, _ path: [String]) {
            if let object = value as? [String: Any] {
                for (key, inner) in object { walk(inner, path + [key]) }
            } else if let array = value as? [Any] {
                for (index, inner) in array.enumerated() { walk(inner, path + ["\(index)"]) }
            } else if value is NSNumber, !["detached", "holdMode", "fixesVolume", "plain", "mutedBefore"].contains(path.last ?? "") {
                paths.append(path)
            }
        }
        walk(base, [])
        // `version` is any integer, and `history.origin` is never read.
        paths.removeAll { $0 == ["version"] || $0 == ["history", "origin"] }
        #expect(paths.count == 36, "\(paths.map { $0.joined(separator: ".") }.sorted())")
        // Core's table (which the JSON fuzz target checks) has each of them, and nothing else.
        let tabled = Set(paths.map { path in path.map { Int($0) != nil ? "[]" : $0 }.joined(separator: ".").replacingOccurrences(of: ".[]", with: "[]") })
        #expect(tabled == Set(LiveStateRange.members.map(\.path)), "\(tabled.symmetricDifference(LiveStateRange.members.map(\.path)).sorted())")
        func setting(_ value: Any, at path: [String], in object: Any) -> Any {
            guard let key = path.first else { return value }
            if var array = object as? [Any], let index = Int(key) {
                array[index] = setting(value, at: Array(path.dropFirst()), in: array[index])
                return array
            }
            var dictionary = object as? [String: Any] ?? [:]
            dictionary[key] = setting(value, at: Array(path.dropFirst()), in: dictionary[key] as Any)
            return dictionary
        }
        func named(_ path: [String]) -> String {
            path.reduce("") { name, key in Int(key) != nil ? "\(name)[\(key)]" : name.isEmpty ? key : "\(name).\(key)" }
        }
        for path in paths {
            for extreme in ["1e300", "-1e300", "9223372036854775808", "10000000000", "-1"] {
                let marker = "\u{1}EXTREME\u{1}"
                let object = setting(marker, at: path, in: base)
                let text = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
                    .replacingOccurrences(of: "\"\\u0001EXTREME\\u0001\"", with: extreme)
                #expect(text.contains(extreme), "\(text)")
                // Only a lateness may be 1e10 ms (115 days: a `resume` that late); it and an instant
                // since boot may be negative (an alarm due before a reboot, resumed after it).
                let allowed = (["-1", "10000000000"].contains(extreme) && path.last == "latenessMs")
                    || (extreme == "-1" && path.last == "bootSeconds")
                do {
                    let state = try LiveSessionState.read(Array(text.utf8))
                    #expect(allowed, "\(named(path)) = \(extreme) was read: \(state)")
                } catch {
                    // And what is allowed is read: a range made narrower by mistake is caught here.
                    #expect(!allowed && error.path == named(path), "\(named(path)) = \(extreme): \(error)")
                }
            }
            let object = setting(-0.0, at: path, in: base)
            let text = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            let zero = Result { () throws(JSONFieldError) in try LiveSessionState.read([UInt8](text)) }
            // Zero is out of range only for a pid.
            #expect((try? zero.get()) != nil || ["pid", "guardianPid"].contains(path.last ?? ""), "\(named(path)) = -0.0: \(zero)")
        }
    }

    /// Bytes that are not UTF-8 inside a string (`é` written raw, its second byte changed): JSONDecoder
    /// refuses the state, and so does this reader; written whole, both read it. (A test that gave
    /// JSONDecoder the text repaired by `String(decoding:)` and this reader the bytes found them
    /// "disagreeing" here.)
    @Test func aStringThatIsNotUTF8IsRefusedByBoth() throws {
        let escaped = Array(#"\u00e9"#.utf8)
        let text = Array(Self.everyMember.utf8)
        let at = try #require(text.indices.first { text[$0...].starts(with: escaped) })
        func with(_ accent: [UInt8]) -> [UInt8] { Array(text[..<at]) + accent + Array(text[(at + escaped.count)...]) }
        let whole = with([0xC3, 0xA9]), broken = with([0xC3, UInt8(ascii: "0")])
        #expect(foundation(whole) != nil)
        #expect(LiveSessionState.decode(Data(whole)) == foundation(whole))
        #expect(foundation(broken) == nil)
        #expect(LiveSessionState.decode(Data(broken)) == nil)
    }

    /// 3,000 variations of the full state (fixed seed; the members written in sorted order, so the
    /// same variations every run): members removed, replaced by values of another kind, awkward
    /// strings and numbers, the text cut short or a byte changed. Wherever JSONDecoder reads a
    /// state whose numbers are in range, this reader reads the same one from the same bytes, and
    /// where it refuses, so does this.
    @Test func anyVariationReadsAsJSONDecoderReadsIt() throws {
        var random = SeededRandom(seed: 0x11FE_5747_E000)
        func next() -> UInt64 { random.next() }
        let base = try #require(try JSONSerialization.jsonObject(with: Data(Self.everyMember.utf8)) as? [String: Any])
        let values: [Any] = [NSNull(), true, false, 0, -1, 1.5, 1e300, Int64.max, 4_294_967_296, "", "nap", "ringing", "\u{0}\"\\é🌙",
                             [Any](), [1], [String: Any](), ["sink": "s"], ["due": ["bootSeconds": 1, "wall": "w", "wallSeconds": 2], "reason": "max"]]
        var read = 0
        for round in 0 ..< 3000 {
            var object = base
            // Change one to three members, at the top or one level down.
            for _ in 0 ... next() % 3 {
                let keys = object.keys.sorted()
                let key = keys[Int(next() % UInt64(keys.count))]
                let value = values[Int(next() % UInt64(values.count))]
                if var inner = object[key] as? [String: Any], next() % 2 == 0, !inner.isEmpty {
                    let innerKeys = inner.keys.sorted()
                    let innerKey = innerKeys[Int(next() % UInt64(innerKeys.count))]
                    inner[innerKey] = next() % 4 == 0 ? nil : value
                    object[key] = inner
                } else {
                    object[key] = next() % 4 == 0 ? nil : value
                }
            }
            var bytes = [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            if round % 5 == 0 {
                bytes.removeLast(Int(next() % 40))
            } else if round % 5 == 1 {
                bytes[Int(next() % UInt64(bytes.count))] = [0x22, 0x2C, 0x7D, 0x30, 0x5C][Int(next() % 5)]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let mine = LiveSessionState.decode(Data(bytes))
            #expect(mine == foundationInRange(bytes), "\(text)")
            if mine != nil { read += 1 }
        }
        // The variations are not all refusals.
        #expect(read > 100, "read \(read) of 3000")
    }
}

import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// A request goes to the nap as a line of JSON written by ``ControlRequest/jsonLine`` and read by
/// the nap with Core's JSONValueDecoder (and by JSONDecoder alike, a script's reader): they must
/// agree on every request, whatever its answer holds. The nap's reply goes back the same way.
@Suite("Control requests: the line a command writes is the request the nap reads")
struct ControlRequestLineTests {
    func readBack(_ request: ControlRequest) throws -> ControlRequest {
        let line = try #require(request.jsonLine)
        #expect(!line.contains("\n"), "one line: \(line)")
        let read = try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
        // Core's reader (what the nap reads requests with) reads it alike.
        #expect(try JSONValueDecoder().decode(ControlRequest.self, from: line) == read, "\(line)")
        return read
    }

    @Test func everyKindOfRequestReadsBackAsItWas() throws {
        let requests = [
            ControlRequest(.status), ControlRequest(.add, seconds: 60), ControlRequest(.add, seconds: -1.5),
            ControlRequest(.add, seconds: 1e-5), ControlRequest(.add, seconds: 86_400 * 365), ControlRequest(.snooze, seconds: 30),
            ControlRequest(.snooze), ControlRequest(.stop), ControlRequest(.stop, confirmed: true), ControlRequest(.stop, confirmed: false),
            ControlRequest(.stop, answer: "held"), ControlRequest(.stop, answer: ""),
            ControlRequest(.stop, answer: #"a "quoted" \ back\slash"#), ControlRequest(.stop, answer: "tab\tnew\nline\r\u{0}\u{1F}\u{7F}"),
            ControlRequest(.stop, answer: "été 🌙 \u{2028}\u{2029} \u{FEFF}"), ControlRequest(.stop, answer: "/slash/"),
        ]
        for request in requests {
            #expect(try readBack(request) == request, "\(request.jsonLine ?? "nil")")
        }
    }

    /// 1,000 answers of random characters (control characters, quotes, backslashes, any plane) and
    /// random lengths, from a fixed seed.
    @Test func randomAnswersAndLengthsReadBackAsTheyWere() throws {
        var random = SeededRandom(seed: 0x5EED_2026_1127)
        func next() -> UInt64 { random.next() }
        let awkward: [Unicode.Scalar] = ["\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{C}", "\u{1F}", "\u{7F}", "\u{2028}", "\u{FFFF}", "\u{10FFFF}"]
        for _ in 0 ..< 1000 {
            var answer = String.UnicodeScalarView()
            for _ in 0 ..< next() % 24 {
                let pick = next()
                if pick % 3 == 0 {
                    answer.append(awkward[Int(next() % UInt64(awkward.count))])
                } else if let scalar = Unicode.Scalar(UInt32(next() % (pick % 2 == 0 ? 0x80 : 0x11_0000))) {
                    answer.append(scalar)
                }
            }
            let seconds = Double(Int64(bitPattern: next()) % 10_000_000) / Double(1 + next() % 1000)
            let request = ControlRequest(.stop, seconds: seconds, answer: String(answer), confirmed: next() % 2 == 0)
            #expect(try readBack(request) == request, "\(request.jsonLine ?? "nil")")
        }
    }

    /// The nap answers with ``ControlReply/jsonLine``: JSONDecoder (a script's reader) and Core's
    /// reader (the commands') read every kind of reply back as it was, the live state included.
    @Test func everyKindOfReplyReadsBackAsItWas() throws {
        let text = """
            {"bootID":"b","detached":false,"holder":"nap","phase":"napping","pid":1,"setup":{"device":"default","fadeInSeconds":0,\
            "maxSeconds":1,"napSeconds":1,"presetName":"p","releaseSeconds":1,"snoozeSeconds":1,"soundName":"tone","volume":0},\
            "snoozes":0,"updated":{"bootSeconds":0,"wall":"","wallSeconds":0},"version":1}
            """
        let state = try JSONDecoder().decode(LiveSessionState.self, from: Data(text.utf8))
        var replies = [
            ControlReply(ok: true, message: "napping", state: state), ControlReply(ok: true, message: "alarm moved", state: nil),
            ControlReply(ok: false, message: "wrong answer: the alarm stops when its word is typed", state: nil, needs: .word, word: "lantern"),
            ControlReply(ok: false, message: "the alarm stops when a key is held for 3 s", state: nil, needs: .hold),
            ControlReply(ok: false, message: "cancelling the nap needs a confirmation", state: nil, needs: .confirmation),
            ControlReply(ok: false, message: #"not a request: expected one JSON object such as {"command":"stop"}"#, state: nil),
        ]
        var random = SeededRandom(seed: 0x5EED_2026_1128)
        for _ in 0 ..< 300 {
            var message = String.UnicodeScalarView(), word = String.UnicodeScalarView()
            for _ in 0 ..< random.next() % 20 { Unicode.Scalar(UInt32(random.next() % 0x11_0000)).map { message.append($0) } }
            for _ in 0 ..< random.next() % 6 { Unicode.Scalar(UInt32(random.next() % 0x80)).map { word.append($0) } }
            replies.append(ControlReply(ok: random.next() % 2 == 0, message: String(message), state: nil,
                                        needs: random.next() % 2 == 0 ? .word : nil, word: random.next() % 2 == 0 ? String(word) : nil))
        }
        for reply in replies {
            let line = reply.jsonLine
            #expect(!line.contains("\n"), "one line: \(line)")
            #expect(try JSONDecoder().decode(ControlReply.self, from: Data(line.utf8)) == reply, "\(line)")
            let fields = try JSONValue(parsing: line)
            #expect(fields.member("ok") == .bool(reply.ok) && fields.member("message") == .string(reply.message), "\(line)")
        }
    }

    /// Without a state, and in text JSON writes without escapes, the line is JSONEncoder's with
    /// sorted keys, byte for byte.
    @Test func aReplyLineIsJSONEncodersWithSortedKeys() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let replies = [
            ControlReply(ok: true, message: "alarm moved", state: nil),
            ControlReply(ok: false, message: #"wrong answer: "été" / 🌙"#, state: nil, needs: .word, word: "lantern"),
            ControlReply(ok: false, message: "the alarm stops when a key is held for 3 s", state: nil, needs: .hold),
            ControlReply(ok: false, message: "", state: nil, needs: .confirmation, word: ""),
        ]
        for reply in replies {
            #expect(reply.jsonLine == String(decoding: try encoder.encode(reply), as: UTF8.self))
        }
    }

    /// Lines a script might write by hand: the nap's reader and JSONDecoder read them alike, or
    /// both refuse them.
    @Test func handWrittenRequestsReadAsJSONDecoderReadsThem() {
        let lines = [
            #"{"command":"add","seconds":5}"#, #"{"command":"add","seconds":"5"}"#, #"{"command":"stop","confirmed":1}"#,
            #"{"command":"stop","command":"add","seconds":1}"#, #"{"command":"add","seconds":1e400}"#,
            #"{"command":"add","seconds":-0.0}"#, #"{"command":"nap"}"#, #"{"seconds":1}"#, #"["stop"]"#, #"{"command":"stop"} x"#,
            #"{"command":"stop","answer":null,"extra":[1,{"a":2}]}"#, #" {"command" : "status"} "#,
        ]
        for line in lines {
            let mine = try? JSONValueDecoder().decode(ControlRequest.self, from: line)
            let foundation = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
            #expect(mine == foundation, "\(line): \(String(describing: mine)) against \(String(describing: foundation))")
        }
        // Where they differ: JSONDecoder takes a trailing comma, the nap's reader keeps to JSON.
        let trailingComma = "{\"command\":\"stop\",}"
        #expect((try? JSONDecoder().decode(ControlRequest.self, from: Data(trailingComma.utf8))) == ControlRequest(.stop))
        #expect((try? JSONValueDecoder().decode(ControlRequest.self, from: trailingComma)) == nil)
    }

    @Test func aLengthThatIsNotANumberHasNoLine() {
        #expect(ControlRequest(.add, seconds: .nan).jsonLine == nil)
        #expect(ControlRequest(.add, seconds: .infinity).jsonLine == nil)
    }
}

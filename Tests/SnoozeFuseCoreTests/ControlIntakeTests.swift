import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// The control socket's intake on virtual time: each connection has its own second, none waits
/// for another, and what arrives in pieces is one request.
@Suite("ControlIntake: every connection on its own deadline")
struct ControlIntakeTests {
    typealias Intake = ControlIntake<Instant>

    func at(_ milliseconds: Int64) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func aRequestInPiecesIsOneLineAndEndsTheConnectionsWait() {
        var intake = Intake()
        #expect(intake.accepted(5, at: at(0)).isEmpty)
        #expect(intake.received(Array("{\"command\":".utf8), on: 5) == .waiting)
        #expect(intake.received(Array("\"add\"}\nrest".utf8), on: 5) == .request("{\"command\":\"add\"}"))
        #expect(intake.open.isEmpty)
        #expect(intake.nextDeadline == nil)
        #expect(intake.expire(at: at(5_000)).isEmpty)
    }

    @Test func eachConnectionHasItsOwnSecondAndATrickleDoesNotExtendIt() {
        var intake = Intake(timeLimit: .seconds(1))
        _ = intake.accepted(3, at: at(0))
        _ = intake.accepted(4, at: at(600))
        #expect(intake.nextDeadline == at(1_000))
        // A byte now and then does not buy more time.
        for _ in 0 ..< 4 { #expect(intake.received([UInt8(ascii: "{")], on: 3) == .waiting) }
        #expect(intake.expire(at: at(999)).isEmpty)
        #expect(intake.expire(at: at(1_000)) == [3])
        #expect(intake.nextDeadline == at(1_600))
        #expect(intake.received(Array("{}\n".utf8), on: 4) == .request("{}"))
        #expect(intake.expire(at: at(10_000)).isEmpty)
    }

    @Test func pastCapacityTheOldestWaitingConnectionMakesRoom() {
        var intake = Intake(capacity: 3)
        for id in Int32(10) ..< 13 { #expect(intake.accepted(id, at: at(Int64(id))).isEmpty) }
        #expect(intake.accepted(13, at: at(20)) == [10])
        #expect(intake.open == [11, 12, 13])
    }

    @Test func tooLongEmptyAndUnterminatedLines() {
        var intake = Intake(lineLimit: 8)
        _ = intake.accepted(1, at: at(0))
        #expect(intake.received(Array("123456789".utf8), on: 1) == .tooLong)
        _ = intake.accepted(2, at: at(0))
        #expect(intake.ended(2) == .empty)
        _ = intake.accepted(3, at: at(0))
        #expect(intake.received(Array("{}".utf8), on: 3) == .waiting)
        // Closed after its line without a newline: the line is the request.
        #expect(intake.ended(3) == .request("{}"))
        #expect(intake.open.isEmpty)
    }
}

import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// `nap --until 14:30`: the time of day as typed, and a session whose alarm is an instant rather
/// than a nap's length (on virtual time).
@Suite("Waking at a time of day: the time as typed, and the session that rings then")
struct WakeAtTimeTests {
    @Test("times of day people type", arguments: [
        ("14:30", 14, 30, 0), ("7:05", 7, 5, 0), ("07:05", 7, 5, 0), ("0:00", 0, 0, 0), ("23:59:59", 23, 59, 59),
        ("14:30:15", 14, 30, 15), (" 14:30 ", 14, 30, 0), ("2:30pm", 14, 30, 0), ("2:30 PM", 14, 30, 0), ("7am", 7, 0, 0),
        ("7 a.m.", 7, 0, 0), ("12am", 0, 0, 0), ("12:15am", 0, 15, 0), ("12pm", 12, 0, 0), ("12:45 p.m.", 12, 45, 0),
        ("11:59:30pm", 23, 59, 30),
    ])
    func accepted(_ text: String, _ hour: Int, _ minute: Int, _ second: Int) throws {
        let time = try ClockTime(parsing: text)
        #expect((time.hour, time.minute, time.second) == (hour, minute, second))
        // What it says of itself reads back as the same time.
        #expect(try ClockTime(parsing: time.description) == time)
    }

    @Test("what is not a time of day is refused, saying why and how to write one", arguments: [
        ("", ClockTimeParseError.Reason.empty), ("14", .bareNumber), ("24:00", .outOfRange), ("7:60", .outOfRange),
        ("13pm", .outOfRange), ("0am", .outOfRange), ("14:3", .malformed), ("14:300", .malformed), ("123:00", .malformed),
        ("1:2:3:4", .malformed), ("-1:00", .malformed), ("14h30", .malformed), ("pm", .malformed), ("noon", .malformed),
        ("14:30:60", .outOfRange), ("٢:٣٠", .malformed), ("14:30 tomorrow", .malformed),
    ])
    func refused(_ text: String, _ reason: ClockTimeParseError.Reason) {
        #expect(throws: ClockTimeParseError(input: text, reason: reason)) { try ClockTime(parsing: text) }
        let message = ClockTimeParseError(input: text, reason: reason).description
        #expect(message.contains(ClockTime.acceptedForms))
    }

    @Test func aNumberAloneSaysHowToWriteItAsATime() {
        #expect(ClockTimeParseError(input: "7", reason: .bareNumber).description.contains("write 7:00, 7am or 7pm"))
        #expect(ClockTimeParseError(input: "14", reason: .bareNumber).description.contains("write 14:00)"))
    }

    /// The alarm is the instant named, however late the first hold comes and however long it
    /// lasts; the nap is what the release leaves of it.
    @Test func theAlarmRingsAtTheInstantNamedWhenTheHoldStartsOrEnds() {
        let timers = SessionTimers(release: .seconds(30), nap: .seconds(570), max: .seconds(600))
        var session = Session<Instant>(timers: timers, alarmAt: at(600))
        // The first hold comes 40 s after the command, and lasts 100 s.
        _ = session.handle(.holdBegan, at: at(40))
        #expect(session.maxDeadline == at(600), "the failsafe is the time named, not 600 s after the first hold")
        #expect(session.expectedAlarm == at(600))
        _ = session.handle(.holdEnded, at: at(140))
        #expect(session.undisturbedAlarm == at(600))
        #expect(phases(session.handle(.timeElapsed, at: at(170))) == [.napping])
        #expect(session.napDeadline == at(600), "not the release's end + 570 s (740 s)")
        #expect(session.handle(.timeElapsed, at: at(600)).first == .alarmStarted(reason: .nap, due: at(600)))
    }

    /// A hold that lasts past the time named: the failsafe rings then, for the nap (the person
    /// asked to be woken at that time), and a nap taken over in the release keeps that reason.
    @Test func aHoldThatLastsPastTheTimeRingsAtIt() {
        var session = Session<Instant>(timers: SessionTimers(release: .seconds(30), nap: .seconds(70), max: .seconds(100)), alarmAt: at(100))
        _ = session.handle(.holdBegan, at: at(0))
        // A guardian taking it over now rings it for the nap too.
        #expect(session.alarmToKeep(now: at(50))?.due == at(100) && session.alarmToKeep(now: at(50))?.reason == .nap)
        #expect(session.handle(.timeElapsed, at: at(100)).first == .alarmStarted(reason: .nap, due: at(100)))
        // A release that ends past it, likewise.
        var late = Session<Instant>(timers: SessionTimers(release: .seconds(30), nap: .seconds(70), max: .seconds(100)), alarmAt: at(100))
        _ = late.handle(.holdBegan, at: at(0))
        _ = late.handle(.holdEnded, at: at(90))
        #expect(late.undisturbedAlarm == at(100))
        #expect(late.alarmToKeep(now: at(95))?.reason == .nap && late.alarmToKeep(now: at(95))?.due == at(100))
        #expect(late.handle(.timeElapsed, at: at(120)).first == .alarmStarted(reason: .nap, due: at(100)))
    }

    /// The failsafe is the time named, so nothing says a failsafe shorter than release and nap
    /// will end the nap early; and the alarm moves with + and - like any other.
    @Test func itWarnsOfNoFailsafeAndMovesLikeAnyAlarm() {
        var session = Session<Instant>(timers: SessionTimers(release: .seconds(2), nap: .seconds(500), max: .seconds(1)), alarmAt: at(60))
        let started = session.handle(.start, at: at(0))
        #expect(!started.contains { if case .maxEndsNapEarly = $0 { true } else { false } })
        _ = session.handle(.timeElapsed, at: at(2))
        #expect(session.handle(.adjust(.seconds(60)), at: at(3)) == [.adjusted(by: .seconds(60), to: at(120))])
        #expect(session.maxDeadline == at(120))
        #expect(session.handle(.adjust(.seconds(-30)), at: at(4)) == [.adjusted(by: .seconds(-30), to: at(90))])
        #expect(session.maxDeadline == at(90))
        #expect(session.handle(.timeElapsed, at: at(90)).first == .alarmStarted(reason: .nap, due: at(90)))
    }

    /// No hold ever comes (the person lay down without holding a key): at the time named it rings
    /// all the same, for the nap. Its guardian and `resume` keep that alarm from the start; a nap
    /// with no time named still waits for its first hold, however long.
    @Test func withNoHoldAtAllItRingsAtTheTimeNamed() {
        var session = Session<Instant>(timers: SessionTimers(release: .seconds(30), nap: .seconds(70), max: .seconds(100)), alarmAt: at(600))
        #expect(session.nextDeadline == at(600) && session.expectedAlarm == at(600))
        #expect(session.alarmToKeep(now: at(5))?.due == at(600) && session.alarmToKeep(now: at(5))?.reason == .nap)
        #expect(TakeOver<Instant>.plan(phase: .ready, alarm: at(600), reason: .nap, now: at(5)) == .ring(at: at(600), reason: .nap, late: .zero))
        #expect(session.handle(.timeElapsed, at: at(599)).isEmpty)
        let effects = session.handle(.timeElapsed, at: at(601))
        #expect(phases(effects) == [.ringing])
        #expect(effects.contains(.alarmStarted(reason: .nap, due: at(600))), "\(effects)")
        #expect(session.startedAt == at(600) && session.alarmReason == .nap)
        // Without a time named, ready has no deadline and nothing to keep.
        var plain = Session<Instant>(timers: SessionTimers(release: .seconds(30), nap: .seconds(70), max: .seconds(100)))
        #expect(plain.nextDeadline == nil && plain.expectedAlarm == nil && plain.alarmToKeep(now: at(5)) == nil)
        #expect(plain.handle(.timeElapsed, at: at(100_000)).isEmpty)
        #expect(plain.phase == .ready)
    }
}

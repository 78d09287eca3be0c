import SnoozeFuseCore
import Testing

@Suite("The guardian's watch over a nap that lives: woken, then ended, when it does not ring")
struct GuardianWatchTests {
    private let second: Int64 = 1_000_000_000

    @Test func aNapThatDoesNotRingIsWokenThenEndedASecondApart() {
        var watch = GuardianWatch()
        #expect(watch.nextCheck == nil, "nothing to watch before the nap says anything")
        watch.read(Array("due \(10 * second)\n".utf8))
        #expect(watch.nextCheck == 11 * second)
        #expect(watch.timeElapsed(now: 10 * second) == nil, "not before a second after it was due")
        #expect(watch.timeElapsed(now: 11 * second) == .wake)
        #expect(watch.nextCheck == 12 * second)
        #expect(watch.timeElapsed(now: 11 * second + 5) == nil)
        #expect(watch.timeElapsed(now: 12 * second) == .end)
        #expect(watch.nextCheck == nil, "ended: only the pipe's end is awaited")
        #expect(watch.timeElapsed(now: 20 * second) == nil)
    }

    @Test func aNapThatRingsOnceWokenIsLeftAlone() {
        var watch = GuardianWatch()
        watch.read(Array("due \(5 * second)\n".utf8))
        #expect(watch.timeElapsed(now: 6 * second) == .wake)
        watch.read(Array("ringing\n".utf8))
        #expect(watch.nextCheck == nil)
        #expect(watch.timeElapsed(now: 100 * second) == nil)
        // Snoozed: the end of the snooze is watched again, from scratch.
        watch.read(Array("due \(200 * second)\n".utf8))
        #expect(watch.nextCheck == 201 * second)
        #expect(watch.timeElapsed(now: 201 * second) == .wake)
    }

    @Test func linesSplitAnywhereAndTheLatestWins() {
        var watch = GuardianWatch()
        let text = "due \(3 * second)\ndue \(9 * second)\nbogus line\n" + String(repeating: "x", count: 500) + "\nid"
        for byte in text.utf8 { watch.read([byte]) }
        #expect(watch.due == 9 * second, "unknown and over-long lines are ignored")
        watch.read(Array("le\n".utf8))
        #expect(watch.due == nil && watch.nextCheck == nil, "idle: nothing to watch")
        watch.read(Array("due notanumber\ndue \(Int64.max)\n".utf8))
        #expect(watch.due == Int64.max && watch.nextCheck == Int64.max, "no overflow past the last instant")
    }

    @Test func theNapsLinesAreWhatTheWatchReads() {
        #expect(GuardianWatch.line(due: 42, ringing: false) == "due 42\n")
        #expect(GuardianWatch.line(due: 42, ringing: true) == "ringing\n")
        #expect(GuardianWatch.line(due: nil, ringing: false) == "idle\n")
        var watch = GuardianWatch()
        watch.read(Array(GuardianWatch.line(due: 7 * second, ringing: false).utf8))
        #expect(watch.due == 7 * second)
    }
}

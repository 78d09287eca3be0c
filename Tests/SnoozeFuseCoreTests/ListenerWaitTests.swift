import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// A command that finds nobody listening, on virtual time: it waits for a nap that is held (starting,
/// or being taken over by its guardian), and only for so long; a nap nobody holds is none.
@Suite("ListenerWait: waiting for a held nap to listen")
struct ListenerWaitTests {
    typealias Wait = ListenerWait<Instant>

    func at(_ milliseconds: Int64) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func aNapNobodyHoldsIsNoneAtOnce() {
        let wait = Wait(from: at(0))
        #expect(wait.nobodyListened(at: at(0), held: false) == .noNap)
        #expect(wait.nobodyListened(at: at(4_000), held: false) == .noNap)
    }

    @Test func aHeldNapIsTriedAgainEachIntervalUntilThePatienceIsUp() {
        let wait = Wait(from: at(1_000), patience: .seconds(5), interval: .milliseconds(50))
        #expect(wait.nobodyListened(at: at(1_000), held: true) == .retry(at: at(1_050)))
        #expect(wait.nobodyListened(at: at(3_210), held: true) == .retry(at: at(3_260)))
        // The last try is at the deadline itself, never after it.
        #expect(wait.nobodyListened(at: at(5_980), held: true) == .retry(at: at(6_000)))
        #expect(wait.nobodyListened(at: at(6_000), held: true) == .giveUp)
        #expect(wait.nobodyListened(at: at(9_000), held: true) == .giveUp)
        // A holder gone meanwhile: no nap, whatever the time.
        #expect(wait.nobodyListened(at: at(2_000), held: false) == .noNap)
    }

    @Test func everyRetryIsSoonerThanTheIntervalAndNeverPastTheDeadline() {
        for patience in [0, 1, 49, 50, 51, 5_000] {
            let wait = Wait(from: at(0), patience: .milliseconds(Int64(patience)), interval: .milliseconds(50))
            var now = at(0)
            var tries = 0
            while case .retry(let next) = wait.nobodyListened(at: now, held: true) {
                #expect(next > now && next <= wait.deadline && now.duration(to: next) <= .milliseconds(50))
                now = next
                tries += 1
            }
            #expect(wait.nobodyListened(at: now, held: true) == .giveUp)
            #expect(tries == (patience + 49) / 50, "patience \(patience) ms")
        }
    }
}

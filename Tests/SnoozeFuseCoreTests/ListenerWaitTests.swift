import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// A command that finds nobody listening, on virtual time: it waits for a guardian taking the nap
/// over, briefly for a nap's own process (it may be starting), and not at all when nobody holds it.
@Suite("ListenerWait: waiting for a held nap to listen")
struct ListenerWaitTests {
    typealias Wait = ListenerWait<Instant>

    func at(_ milliseconds: Int64) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func aNapNobodyHoldsIsNoneAtOnce() {
        let wait = Wait(from: at(0))
        #expect(wait.nobodyListened(at: at(0), holder: .nobody) == .noNap)
        #expect(wait.nobodyListened(at: at(4_000), holder: .nobody) == .noNap)
    }

    @Test func aGuardianTakingOverIsTriedAgainEachIntervalForFiveSeconds() {
        let wait = Wait(from: at(1_000), patience: .seconds(1), takeOverPatience: .seconds(5), interval: .milliseconds(50))
        #expect(wait.nobodyListened(at: at(1_000), holder: .guardian) == .retry(at: at(1_050)))
        #expect(wait.nobodyListened(at: at(3_210), holder: .guardian) == .retry(at: at(3_260)))
        // The last try is at the deadline itself, never after it.
        #expect(wait.nobodyListened(at: at(5_980), holder: .guardian) == .retry(at: at(6_000)))
        #expect(wait.nobodyListened(at: at(6_000), holder: .guardian) == .giveUp)
        #expect(wait.nobodyListened(at: at(9_000), holder: .guardian) == .giveUp)
        // A holder gone meanwhile: no nap, whatever the time.
        #expect(wait.nobodyListened(at: at(2_000), holder: .nobody) == .noNap)
    }

    @Test func aNapsOwnProcessIsGivenOnlyTheShortPatience() {
        let wait = Wait(from: at(0), patience: .seconds(1), takeOverPatience: .seconds(5))
        #expect(wait.nobodyListened(at: at(500), holder: .process) == .retry(at: at(550)))
        #expect(wait.nobodyListened(at: at(1_000), holder: .process) == .giveUp)
        // The same instant, a guardian still has time.
        #expect(wait.nobodyListened(at: at(1_000), holder: .guardian) == .retry(at: at(1_050)))
    }

    @Test func everyRetryIsSoonerThanTheIntervalAndNeverPastTheDeadline() {
        for patience in [0, 1, 49, 50, 51, 5_000] {
            for holder in [Wait.Holder.process, .guardian] {
                let wait = Wait(from: at(0), patience: .milliseconds(Int64(patience)), takeOverPatience: .milliseconds(Int64(patience)),
                                interval: .milliseconds(50))
                var now = at(0)
                var tries = 0
                while case .retry(let next) = wait.nobodyListened(at: now, holder: holder) {
                    #expect(next > now && next <= wait.deadline(for: holder) && now.duration(to: next) <= .milliseconds(50))
                    now = next
                    tries += 1
                }
                #expect(wait.nobodyListened(at: now, holder: holder) == .giveUp)
                #expect(tries == (patience + 49) / 50, "patience \(patience) ms")
            }
        }
    }
}

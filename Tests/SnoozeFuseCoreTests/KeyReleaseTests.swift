import Testing
import SnoozeFuseCore
import SnoozeFuseTestSupport

@Suite("A held key's true release: the key state of its keyboard, and what the keys then mean")
struct KeyReleaseTests {
    @Test func theHeldKeyIsTheOneDownThatIsNoModifierAndItsGoingUpIsTheRelease() {
        var release = KeyRelease<Instant>()
        #expect(release.holdBegan(at: at(0)) == at(0))
        // Shift is down with space: space (57) is the held key.
        let first = release.sample(keysDown: [42, 57], at: at(0))
        #expect(!first.released && first.next == at(0.02) && first.leftToTheGap == nil)
        #expect(release.heldKey == 57)
        // Shift coming up is not the release; another key going down is not either.
        #expect(release.sample(keysDown: [57, 30], at: at(0.5)).released == false)
        let up = release.sample(keysDown: [30], at: at(1.2))
        #expect(up.released && up.next == nil && up.leftToTheGap == nil)
        #expect(release.heldKey == nil)
        #expect(release.sample(keysDown: [], at: at(1.3)).next == nil, "nothing to read until the next hold")
    }

    @Test func twoKeysDownAreNoHeldKeyUntilOneIsLeft() {
        var release = KeyRelease<Instant>()
        _ = release.holdBegan(at: at(0))
        // A stuck key (or another keyboard's) beside the held one: which is held is not known.
        #expect(release.sample(keysDown: [30, 57], at: at(0)).next == at(0.02))
        #expect(release.heldKey == nil)
        #expect(release.sample(keysDown: [57], at: at(0.1)).released == false)
        #expect(release.heldKey == 57)
        var stuck = KeyRelease<Instant>()
        _ = stuck.holdBegan(at: at(0))
        let gaveUp = stuck.sample(keysDown: [30, 57], at: at(0.5))
        #expect(!gaveUp.released && gaveUp.next == nil && stuck.heldKey == nil, "still two after half a second: left to the gap")
        #expect(gaveUp.leftToTheGap == .severalKeysDown)
    }

    @Test func aHoldWhoseKeyNeverShowsIsLeftToTheTerminal() {
        var release = KeyRelease<Instant>()
        _ = release.holdBegan(at: at(10))
        #expect(release.sample(keysDown: [29], at: at(10.2)).next == at(10.22), "only Ctrl: still looking")
        let late = release.sample(keysDown: [], at: at(10.5))
        #expect(!late.released && late.next == nil, "half a second without the key: given up")
        #expect(late.leftToTheGap == .noKeyDown)
    }

    /// NapKeys, KeyRelease and the Session together on virtual time: a space held for 1.2 s.
    @Test func theReleaseStartsAtTheKeyUpNotTheReleaseGapAndItsLastBytesStartNoNewHold() {
        var keys = NapKeys<Instant>(holdMode: true, dismissal: .word)
        var session = Session<Instant>(timers: SessionTimers(release: .seconds(2), nap: .seconds(5), max: .seconds(60)))
        func apply(_ events: [SessionEvent], _ now: Instant) { for event in events { _ = session.handle(event, at: now) } }
        apply(keys.events(for: .bytes([32]), in: session.phase, at: at(0)), at(0))
        #expect(session.phase == .holding)
        var release = KeyRelease<Instant>()
        var next: Instant? = release.holdBegan(at: at(0))
        var now = at(0)
        while let due = next, due <= at(2) {
            now = due
            let down: Set<UInt16> = now < at(1.2) ? [57] : []
            let step = release.sample(keysDown: down, at: now)
            if step.released { apply(keys.events(for: .released, in: session.phase, at: now), now) }
            next = step.next
        }
        #expect(session.phase == .releasing)
        #expect(session.releaseDeadline == now.advanced(by: .seconds(2)) && now <= at(1.22), "released at \(now)")
        // An autorepeat byte already on its way, then the terminal's gap: neither is a hold.
        apply(keys.events(for: .bytes([32]), in: session.phase, at: now.advanced(by: .milliseconds(10))), now.advanced(by: .milliseconds(10)))
        apply(keys.events(for: .quiet, in: session.phase, at: at(1.95)), at(1.95))
        #expect(session.phase == .releasing)
        // A new press after that is a new hold.
        apply(keys.events(for: .bytes([32]), in: session.phase, at: at(2.5)), at(2.5))
        #expect(session.phase == .holding)
    }
}

import SnoozeFuseSystem
import Foundation
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// What a ``FakeInhibitor`` did, in order: `take nap`, `release nap`.
final class InhibitorJournal: Sendable {
    private let lines = Locked<[String]>([])

    var entries: [String] { lines.withLock { $0 } }

    func write(_ line: String) { lines.withLock { $0.append(line) } }
}

/// An inhibitor that writes down what is taken and released, and can refuse, or take its time,
/// like a bus that is absent or slow. (The real one crosses the bus: see the CLI's keep-awake tests.)
final class FakeInhibitor: SleepInhibitor {
    let journal = InhibitorJournal()
    let refuses: Bool
    let delayMicroseconds: UInt32

    init(refuses: Bool = false, delayMicroseconds: UInt32 = 0) {
        self.refuses = refuses
        self.delayMicroseconds = delayMicroseconds
    }

    func inhibit(why: String) throws(InhibitorError) -> any InhibitorLock {
        if delayMicroseconds > 0 { usleep(delayMicroseconds) }
        journal.write("take \(why)")
        if refuses { throw InhibitorError("no bus here", isUnavailable: true) }
        return Lock(why: why, journal: journal)
    }

    final class Lock: InhibitorLock {
        let why: String
        let journal: InhibitorJournal
        let released = Locked(false)

        init(why: String, journal: InhibitorJournal) {
            self.why = why
            self.journal = journal
        }

        func release() {
            let first = released.withLock { released -> Bool in
                defer { released = true }
                return !released
            }
            if first { journal.write("release \(why)") }
        }
    }
}

/// Warnings a service gave.
final class Warnings: Sendable {
    private let lines = Locked<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

@Suite("Keep-awake: holders, reasons, one inhibitor, released with the last hold")
struct KeepAwakeTests {
    @Test func theFirstHoldTakesTheInhibitorAndTheLastReleasesIt() async throws {
        let inhibitor = FakeInhibitor(), warnings = Warnings()
        let service = KeepAwake(inhibitor: inhibitor, warn: warnings.add)
        let seen = try await onOwnThread { () -> [String: [String]] in
            var seen: [String: [String]] = [:]
            let first = service.hold(.nap)
            let second = service.hold(.nap)
            service.settled(waitingAtMost: .seconds(5))
            seen["two naps"] = inhibitor.journal.entries + [service.inhibiting ?? "none"]
            first.release()
            first.release()
            service.settled(waitingAtMost: .seconds(5))
            seen["one left"] = inhibitor.journal.entries + [service.inhibiting ?? "none"]
            second.release()
            service.settled(waitingAtMost: .seconds(5))
            seen["none left"] = inhibitor.journal.entries + [service.inhibiting ?? "none", service.reasons ?? "nothing held"]
            return seen
        }
        #expect(seen["two naps"] == ["take nap", "nap"])
        #expect(seen["one left"] == ["take nap", "nap"], "a second release of the same hold counts once")
        #expect(seen["none left"] == ["take nap", "release nap", "none", "nothing held"])
        #expect(warnings.all.isEmpty)
    }

    @Test func whenTheReasonsChangeANewInhibitorNamesThemAllBeforeTheOldOneGoes() async throws {
        let inhibitor = FakeInhibitor()
        let service = KeepAwake(inhibitor: inhibitor, warn: { _ in })
        let seen = try await onOwnThread { () -> [String: [String]] in
            var seen: [String: [String]] = [:]
            let nap = service.hold(.nap)
            service.settled(waitingAtMost: .seconds(5))
            let alarm = service.hold(.alarm)
            let importing = service.hold(.import)
            service.settled(waitingAtMost: .seconds(5))
            seen["all three"] = [service.inhibiting ?? "none"]
            nap.release()
            importing.release()
            service.settled(waitingAtMost: .seconds(5))
            seen["alarm only"] = [service.inhibiting ?? "none"]
            alarm.release()
            service.settled(waitingAtMost: .seconds(5))
            seen["journal"] = inhibitor.journal.entries
            return seen
        }
        #expect(seen["all three"] == ["nap, alarm, import"])
        #expect(seen["alarm only"] == ["alarm"])
        // Each change is settled by the last reconciliation queued for it: intermediate sets may
        // be skipped, but a new inhibitor is always taken before the one it replaces is released,
        // and everything taken is released once.
        let journal = seen["journal"] ?? []
        #expect(journal.first == "take nap")
        #expect(journal.last == "release alarm")
        let taken = journal.filter { $0.hasPrefix("take ") }.map { $0.dropFirst(5) }
        let released = journal.filter { $0.hasPrefix("release ") }.map { $0.dropFirst(8) }
        #expect(taken.sorted() == released.sorted(), "\(journal)")
        // No gap: until the last hold let go, some inhibitor was held at every moment.
        var held = 0
        for (index, entry) in journal.enumerated() {
            held += entry.hasPrefix("take ") ? 1 : -1
            if index + 1 < journal.count { #expect(held > 0, "nothing held after \(entry): \(journal)") }
        }
    }

    @Test func aHoldThatGoesAwayUnreleasedLetsGo() async throws {
        let inhibitor = FakeInhibitor()
        let service = KeepAwake(inhibitor: inhibitor, warn: { _ in })
        let journal = try await onOwnThread { () -> [String] in
            do {
                let hold = service.hold(.import)
                service.settled(waitingAtMost: .seconds(5))
                withExtendedLifetime(hold) {}
            }
            service.settled(waitingAtMost: .seconds(5))
            return inhibitor.journal.entries
        }
        #expect(journal == ["take import", "release import"])
    }

    @Test func withoutAnInhibitorItWarnsOnceAndTriesNoMore() async throws {
        let inhibitor = FakeInhibitor(refuses: true), warnings = Warnings()
        let service = KeepAwake(inhibitor: inhibitor, warn: warnings.add)
        let journal = try await onOwnThread { () -> [String] in
            let nap = service.hold(.nap)
            service.settled(waitingAtMost: .seconds(5))
            let alarm = service.hold(.alarm)
            nap.release()
            service.settled(waitingAtMost: .seconds(5))
            alarm.release()
            _ = service.hold(.nap)
            service.settled(waitingAtMost: .seconds(5))
            return inhibitor.journal.entries
        }
        #expect(journal == ["take nap"])
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.contains("nothing keeps this machine awake") == true, "\(warnings.all)")
        #expect(warnings.all.first?.contains("no bus here") == true)
    }

    @Test func holdingNeverWaitsForTheInhibitorAndALetGoDuringTheCallReleasesWhatItBrings() async throws {
        let inhibitor = FakeInhibitor(delayMicroseconds: 500_000)
        let service = KeepAwake(inhibitor: inhibitor, warn: { _ in })
        let (took, journal) = try await onOwnThread { () -> (Duration, [String]) in
            var start = ContinuousClock.now
            let hold = service.hold(.nap)
            var took = ContinuousClock.now - start
            // The inhibitor is being taken (it takes half a second): let go meanwhile.
            usleep(100_000)
            start = ContinuousClock.now
            hold.release()
            took = max(took, ContinuousClock.now - start)
            service.settled(waitingAtMost: .seconds(5))
            return (took, inhibitor.journal.entries)
        }
        #expect(took < .milliseconds(50), "hold or release took \(took)")
        #expect(journal == ["take nap", "release nap"])
    }

    @Test func aHoldLetGoBeforeTheCallStartsTakesNothing() async throws {
        let inhibitor = FakeInhibitor(delayMicroseconds: 200_000)
        let service = KeepAwake(inhibitor: inhibitor, warn: { _ in })
        let journal = try await onOwnThread { () -> [String] in
            let busy = service.hold(.import)
            usleep(50_000)
            // The import's inhibitor is being taken; the nap comes and goes meanwhile.
            service.hold(.nap).release()
            busy.release()
            service.settled(waitingAtMost: .seconds(5))
            return inhibitor.journal.entries
        }
        #expect(journal == ["take import", "release import"])
    }
}

import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// The sink watch's driver on a manual clock, with an output that only records: it stamps what the
/// output sees with the clock's time, says what the watch reports, keeps the ledger, and hands the
/// server's part back.
@Suite("The sink watch's driver on a manual clock")
struct SinkWatchDriverTests {
    private final class Said: Sendable {
        let reports = Locked<[SinkReport]>([])
        let ledgers = Locked<[[SinkLevelFix]]>([])
    }

    private func driver(clock: ManualClock, said: Said, floor: Int? = 60,
                        ledger: SinkFixLedger = SinkFixLedger()) -> SinkWatchDriver<ManualClock.Instant> {
        let plan = SinkPlan(route: .defaultSink, floorPercent: floor, ledger: ledger,
                            watcher: { _ in fatalError("the test makes its driver itself") },
                            ledgerChanged: { fixes in said.ledgers.withLock { $0.append(fixes) } },
                            report: { report in said.reports.withLock { $0.append(report) } })
        return SinkWatchDriver(plan: plan, now: { clock.now })
    }

    @Test func reportsGoToThePlanTheLedgerIsKeptAndTheServersPartComesBack() async {
        let clock = ManualClock(), said = Said(), ledger = SinkFixLedger()
        let driver = driver(clock: clock, said: said, ledger: ledger)
        let sink = SinkDescription(name: "s", muted: true, volumePercent: 30, monitor: "s.monitor")
        #expect(driver.handle(.opened(sinks: [sink], defaultSink: "s")) == [.play("s")])
        #expect(driver.handle(.playing(sink: "s", stream: StreamLevel(muted: false, volumePercent: 100), monitor: .reading))
            == [.setSinkLevel("s", unmute: true, volume: 60)])
        #expect(ledger.all == [SinkLevelFix(sink: "s", mutedBefore: true, volumeBefore: 30, volumeSet: 60)])
        #expect(said.ledgers.withLock { $0 } == [[SinkLevelFix(sink: "s", mutedBefore: true, volumeBefore: 30, volumeSet: 60)]])
        #expect(said.reports.withLock { $0.count } == 2, "routed, fixed")
    }

    @Test func itsDeadlineFollowsTheClockAndEscalatesOnIt() async {
        let clock = ManualClock(), said = Said()
        let driver = driver(clock: clock, said: said, floor: nil)
        _ = driver.handle(.opened(sinks: [SinkDescription(name: "s", monitor: "m")], defaultSink: "s"))
        _ = driver.handle(.playing(sink: "s", stream: nil, monitor: .reading))
        #expect(driver.timeToDeadline == nil, "nothing is due before the alarm starts")
        await clock.advance(by: .seconds(1))
        _ = driver.handle(.started)
        #expect(driver.timeToDeadline == .seconds(2))
        await clock.advance(by: .milliseconds(1_500))
        #expect(driver.timeToDeadline == .milliseconds(500))
        #expect(driver.handle(.carried(sink: "s", level: 0.2, writtenSeconds: 0.4)).isEmpty)
        #expect(said.reports.withLock { $0.last } == .heard(sink: "s", level: 0.2, after: .milliseconds(1_500)))
        await clock.advance(by: .seconds(2))
        #expect(driver.timeToDeadline == .zero)
        #expect(driver.handle(.timeElapsed) == [.checkStream("s"), .rereadSinks])
        #expect(said.reports.withLock { $0.suffix(2) }.map { if case .escalated(let step, _) = $0 { step.rawValue } else if case .unheard = $0 { "unheard" } else { "?" } }
            == ["unheard", "fix_levels"])
        #expect(clock.sleeperCount == 0, "the driver never sleeps: the output keeps its time")
    }
}

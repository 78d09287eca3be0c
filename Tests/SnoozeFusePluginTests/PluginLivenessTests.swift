import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

/// The decisions that make a plugin's process hung, on virtual time: the same state machines the
/// audio thread (sources) and the pulse driver (emitters) feed on CLOCK_BOOTTIME.
@Suite("Plugin liveness on virtual time")
struct PluginLivenessTests {
    typealias Instant = ManualClock.Instant

    static func at(_ milliseconds: Int64) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func aSourceThatKeepsUpIsNeverHung() {
        var liveness = SourceLiveness(started: Self.at(0))
        for time in stride(from: Int64(0), through: 60_000, by: 25) {
            #expect(liveness.read(complete: true, at: Self.at(time)) == .onTime)
        }
        #expect(liveness.gapSince == nil)
    }

    @Test func missingFramesDuringStartupAreFilledButNeverAGap() {
        var liveness = SourceLiveness(started: Self.at(0))
        for time in stride(from: Int64(0), to: 2000, by: 25) {
            #expect(liveness.read(complete: false, at: Self.at(time)) == .starting)
        }
        #expect(liveness.gapSince == nil)
        // The first short read after start-up begins a gap; it is hung a budget (1 s) later, not before.
        #expect(liveness.read(complete: false, at: Self.at(2000)) == .behind(began: true))
        #expect(liveness.read(complete: false, at: Self.at(2999)) == .behind(began: false))
        #expect(liveness.read(complete: false, at: Self.at(3000)) == .hung(waited: .seconds(1)))
    }

    @Test func aGapThatEndsInTimeStartsAgainFromZero() {
        var liveness = SourceLiveness(started: Self.at(0))
        #expect(liveness.read(complete: false, at: Self.at(5000)) == .behind(began: true))
        #expect(liveness.read(complete: false, at: Self.at(5900)) == .behind(began: false))
        #expect(liveness.read(complete: true, at: Self.at(5950)) == .onTime)
        // A new gap: its own second, counted from its own start.
        #expect(liveness.read(complete: false, at: Self.at(6000)) == .behind(began: true))
        #expect(liveness.read(complete: false, at: Self.at(6900)) == .behind(began: false))
        #expect(liveness.read(complete: false, at: Self.at(7100)) == .hung(waited: .milliseconds(1100)))
    }

    @Test func aSourceSlowerThanRealTimeIsHungAfterOneSecondOfShortReads() {
        // Every read gets some frames but never all of them: one long gap.
        var liveness = SourceLiveness(started: Self.at(0))
        var verdicts: [SourceLiveness<Instant>.Verdict] = []
        for time in stride(from: Int64(10_000), through: 11_000, by: 25) {
            verdicts.append(liveness.read(complete: false, at: Self.at(time)))
        }
        #expect(verdicts.first == .behind(began: true))
        #expect(verdicts.dropFirst().dropLast().allSatisfy { $0 == .behind(began: false) })
        #expect(verdicts.last == .hung(waited: .seconds(1)))
    }

    @Test func anEmitterThatAnswersEveryPulseIsAlive() {
        var liveness = EmitterLiveness(started: Self.at(0))
        for (tag, time) in stride(from: Int64(5000), to: 30_000, by: 500).enumerated() {
            liveness.sent(UInt64(tag), lasting: .milliseconds(200), at: Self.at(time))
            #expect(liveness.verdict(at: Self.at(time + 100)) == .alive)
            liveness.answered(UInt64(tag))
        }
        #expect(liveness.outstanding.isEmpty)
        #expect(liveness.verdict(at: Self.at(1_000_000)) == .alive)
    }

    @Test func aPulseWhoseEmitNeverReturnsIsHungOnceItsLengthPlusTheBudgetHasPassed() {
        var liveness = EmitterLiveness(started: Self.at(0))
        liveness.sent(7, lasting: .milliseconds(250), at: Self.at(10_000))
        // Dropped pulses are answered at once; the stuck one is not.
        liveness.sent(8, lasting: .milliseconds(200), at: Self.at(10_500))
        liveness.answered(8)
        #expect(liveness.verdict(at: Self.at(11_250)) == .alive)
        #expect(liveness.verdict(at: Self.at(11_251)) == .hung(tag: 7, length: .milliseconds(250), late: .milliseconds(1)))
        #expect(liveness.verdict(at: Self.at(12_000)) == .hung(tag: 7, length: .milliseconds(250), late: .milliseconds(750)))
    }

    @Test func pulsesSentWhileTheEmitterStartsAreTimedFromTheEndOfStartup() {
        var liveness = EmitterLiveness(started: Self.at(0))
        liveness.sent(1, lasting: .milliseconds(120), at: Self.at(100))
        // Start-up (3 s) + length + budget: due at 4.12 s, not 1.22 s.
        #expect(liveness.verdict(at: Self.at(4120)) == .alive)
        #expect(liveness.verdict(at: Self.at(4121)) == .hung(tag: 1, length: .milliseconds(120), late: .milliseconds(1)))
        liveness.answered(1)
        #expect(liveness.verdict(at: Self.at(4121)) == .alive)
    }
}

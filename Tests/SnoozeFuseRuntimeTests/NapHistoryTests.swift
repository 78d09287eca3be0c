import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import Testing

/// A record of the session at `t`, its wall time `origin + t`.
func record(_ event: SessionRecord.Kind, _ phase: Phase? = nil, at t: Double, origin: Double = 1_800_000_000) -> SessionRecord {
    var record = SessionRecord(event: event, phase: phase, t: t, wall: WallClockText.iso8601(secondsSince1970: origin + t))
    if event == .alarm {
        record.latenessMs = 0.3
        record.output = "ALSA null"
        record.reason = .nap
    }
    return record
}

func historyNap(_ id: String, started: Double, fallAsleep: Double? = nil, reason: String? = "nap", snoozes: Int = 0) -> NapHistoryEntry {
    NapHistoryEntry(napID: id, startedAt: WallClockText.iso8601(secondsSince1970: started), endedAt: WallClockText.iso8601(secondsSince1970: started + 60),
                    fallAsleepSeconds: fallAsleep, napSeconds: 1200, latenessMs: 0.2, outcome: "dismissed", alarmReason: reason,
                    snoozes: snoozes, sound: "beep", output: "ALSA default", rungBy: reason == nil ? nil : "nap", recordedBy: "nap")
}

@Suite("What the history keeps of a nap, and what it shows")
struct NapHistoryTests {
    /// Held, let go, held again, let go for good: the time to fall asleep runs from the first hold
    /// to the final release; the nap from the start of the nap timer to the first alarm.
    @Test func aNapsFactsComeFromItsRecords() throws {
        var facts = NapHistoryFacts(holder: "nap", holdMode: true, sound: "chime", preset: "basic", created: 1_799_999_990)
        for record in [
            record(.phase, .holding, at: 0), record(.phase, .releasing, at: 5), record(.phase, .holding, at: 6),
            record(.phase, .releasing, at: 9.5), record(.phase, .napping, at: 39.5), record(.phase, .ringing, at: 100),
            record(.alarm, at: 100.001), record(.phase, .snoozed, at: 110), record(.phase, .ringing, at: 410),
            record(.alarm, at: 410.002), record(.phase, .finished, at: 420),
        ] { facts.observe(record) }
        var end = record(.end, .finished, at: 420)
        end.outcome = .dismissed
        facts.observe(end)

        // Saved in the live state and read back by whoever takes the nap over: the same facts.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let saved = try JSONDecoder().decode(NapHistoryFacts.self, from: encoder.encode(facts))
        #expect(try encoder.encode(saved) == encoder.encode(facts))
        #expect(facts.started == 1_800_000_000)
        #expect(facts.fellAsleep == 1_800_000_009.5)
        #expect(facts.napping == 1_800_000_039.5)
        #expect(facts.firstRing == 1_800_000_100)
        #expect(facts.snoozes == 1)
        #expect(facts.latenessMs == 0.3 && facts.output == "ALSA null" && facts.reason == "nap" && facts.rungBy == "nap")
        #expect(facts.outcome == "dismissed")
    }

    /// A desktop hold ends --idle-after after the last input: that is when the person fell asleep.
    /// A hold given up because the idle time could not be read says nothing of the last input:
    /// the time to fall asleep then ends at the release.
    @Test(arguments: [(false, 1_800_000_030.0), (true, 1_800_000_040.0)])
    func aDesktopHoldFallsAsleepAtTheLastInputUnlessItWasGivenUp(_ givenUp: Bool, _ fellAsleep: Double) {
        var facts = NapHistoryFacts(holder: "nap", holdMode: true, hold: "desktop", idleAfter: 10, sound: nil, preset: "basic",
                                    created: 1_799_999_990)
        facts.observe(record(.phase, .holding, at: 0))
        if givenUp {
            var hold = record(.hold, at: 40)
            hold.what = "none"
            facts.observe(hold)
        }
        facts.observe(record(.phase, .releasing, at: 40))
        facts.observe(record(.phase, .napping, at: 60))
        #expect(facts.fellAsleep == fellAsleep)
    }

    /// A guardian takes the nap over from its saved facts: its own session's clock starts anew,
    /// the first ring is the guardian's, and the snoozes add up.
    @Test func aTakenOverNapKeepsItsStartAndAddsWhatHappensNext() {
        var facts = NapHistoryFacts(holder: "nap", holdMode: false, sound: nil, preset: "quick-test", created: 1_800_000_000)
        facts.observe(record(.phase, .releasing, at: 0))
        facts.observe(record(.phase, .napping, at: 2))
        facts.takeOver(by: "guardian")
        let later = 1_800_000_050.0
        // What the guardian says as it takes the nap over, 45 s before the alarm it keeps, on a
        // time line of its own: it must not set the times (NAPPED read 2 s of a 5 s nap).
        facts.observe(record(.warning, at: 0, origin: later - 45))
        facts.observe(record(.phase, .ringing, at: 0, origin: later))
        facts.observe(record(.alarm, at: 0.001, origin: later))
        facts.observe(record(.phase, .snoozed, at: 5, origin: later))
        var end = record(.end, .cancelled, at: 9, origin: later)
        end.outcome = .cancelled
        facts.observe(end)
        #expect(facts.started == 1_800_000_000)
        #expect(facts.fellAsleep == nil, "no hold: no time to fall asleep")
        #expect(facts.firstRing == later)
        #expect(facts.rungBy == "guardian")
        #expect(facts.snoozes == 1)
        #expect(facts.ended == later + 9)
    }

    @Test func theSummaryCountsWhatItSays() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let naps = [
            historyNap("old", started: 1_800_000_000 - 10 * 86_400, fallAsleep: 300, reason: "max"),
            historyNap("a", started: 1_800_000_000 - 3 * 86_400, fallAsleep: 100, snoozes: 2),
            historyNap("b", started: 1_800_000_000 - 86_400, fallAsleep: nil, reason: nil),
            historyNap("c", started: 1_800_000_000 - 3600, fallAsleep: 200, reason: "max"),
            historyNap("d", started: 1_800_000_000 - 60, fallAsleep: 400),
        ]
        let summary = NapHistorySummary(naps, now: now)
        #expect(summary.naps == 5)
        #expect(summary.napsThisWeek == 4)
        #expect(summary.medianFallAsleepSeconds == 250)
        #expect(summary.napsWithFallAsleep == 4)
        #expect(summary.alarms == 4)
        #expect(summary.maxAlarms == 2)
        #expect(summary.snoozedAlarms == 1)
        #expect(summary.fallAsleepLast30 == [300, 100, nil, 200, 400])
        #expect(NapHistorySummary(Array(repeating: historyNap("x", started: 0, fallAsleep: 1), count: 45)).fallAsleepLast30.count == 30)
    }

    @Test func theChartIsBlocksOrPlainSeconds() {
        #expect(NapHistoryChart.blocks([0, 400, nil, 200, 50]) == "▁█ ▅▂")
        #expect(NapHistoryChart.numbers([0, 399.6, nil, 200]) == "0 400 - 200")
        #expect(NapHistoryChart.blocks([]) == "")
        // Times no nap records (a database edited by hand): clamped, or `-`, never a trap.
        #expect(NapHistoryChart.blocks([-100, 10, .infinity]) == "▁▁█")
        #expect(NapHistoryChart.numbers([1e300, -3, .infinity]) == "- -3 -")
    }

    @Test func theCSVIsRFC4180() {
        var nap = historyNap("a", started: 1_800_000_000, fallAsleep: 12.5)
        nap.sound = "/home/me/my \"best\", sound.wav"
        let lines = NapHistoryCSV.text([nap]).components(separatedBy: "\r\n")
        #expect(lines[0] == "napId,startedAt,endedAt,fallAsleepSeconds,napSeconds,latenessMs,outcome,alarmReason,snoozes,sound,output,rungBy,recordedBy,preset,takenOverBy,hold")
        #expect(lines[1] == "a,2027-01-15T08:00:00.000Z,2027-01-15T08:01:00.000Z,12.5,1200,0.2,dismissed,nap,0,\"/home/me/my \"\"best\"\", sound.wav\",ALSA default,nap,nap,,,")
        #expect(lines.count == 3 && lines[2].isEmpty)
    }

    @Test func sinceTakesDatesAndHowFarBack() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try HistorySince.parse("7d", now: now) == now.addingTimeInterval(-7 * 86_400))
        #expect(try HistorySince.parse("1w 2d", now: now) == now.addingTimeInterval(-9 * 86_400))
        #expect(try HistorySince.parse("36h", now: now) == now.addingTimeInterval(-36 * 3600))
        #expect(try HistorySince.parse("25:00", now: now) == now.addingTimeInterval(-1500))
        // Before 1970 (it trapped, turned into milliseconds): since 1970, before every nap.
        #expect(try HistorySince.parse("20000000000w", now: now) == Date(timeIntervalSince1970: 0))
        #expect(try HistorySince.parse("0001-01-01", now: now) == Date(timeIntervalSince1970: 0))
        var components = DateComponents()
        (components.year, components.month, components.day, components.hour, components.minute) = (2026, 11, 1, 14, 30)
        #expect(try HistorySince.parse("2026-11-01T14:30", now: now) == Calendar.current.date(from: components))
        let bad = #expect(throws: NapSetupError.self) { try HistorySince.parse("last tuesday", now: now) }
        #expect(bad?.kind == .usage)
        #expect(bad?.lines.first?.contains("--since takes a date") == true)
    }
}

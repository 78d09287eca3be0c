import Foundation
import SnoozeFuseTestSupport
import Testing

/// A nap killed mid-alarm: its guardian goes on with the same alarm, not a new one (issue 21,
/// item 5). The ring limit counts from the first ring, the fade-in is not played again, and the
/// history says who rang it and who took it over.
@Suite("The guardian continues a ringing alarm where it was")
struct GuardianTakeOverTests {
    @Test func theRingLimitCountsFromTheFirstRingAndTheFadeInIsNotRepeated() async throws {
        let seen = try await script { home, seen in
            let recording = home.folder.path("alarm.wav")
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "8", "--fade-in", "4",
                                       "--volume", "100", "--device", "file:FILE=\(recording),FORMAT=wav",
                                       "--events", "jsonl", "--quiet", "--dismiss", "key"])
            let events = home.folder.path("events.jsonl")
            seen.steps["rang"] = waitFor { home.lines(events).contains { $0["event"] as? String == "alarm" } }
            let firstRing = home.lines(events).first { $0["event"] as? String == "alarm" }.flatMap(wallTime)
            seen.steps["guarded"] = waitFor { home.state()?["guardianPid"] != nil }
            usleep(3_000_000)
            nap.signal(SIGKILL)
            nap.wait()
            // The guardian rings the rest, then records the nap and removes the state.
            seen.steps["ended"] = waitFor(.seconds(30)) { home.lines(home.guardianLog).contains { $0["event"] as? String == "end" } }
            let end = home.lines(home.guardianLog).last { $0["event"] as? String == "end" }.flatMap(wallTime)
            if let firstRing, let end { seen.numbers["rang for"] = end.timeIntervalSince(firstRing) }
            seen.texts["guardian"] = home.lines(home.guardianLog).map { "\($0)" }.joined(separator: "\n")
            // What the guardian wrote (it reopened the same file): loud from its first 200 ms.
            let wav = try WAVFile(contentsOf: URL(fileURLWithPath: recording))
            let samples = wav.formatTag == 3 || wav.bitsPerSample == 32 ? rawFloats(in: wav.data) : rawS16AsFloats(in: wav.data)
            let window = wav.sampleRate / 5 * wav.channels
            if samples.count > window * 10 {
                seen.numbers["first 200 ms"] = rms(samples[0 ..< window])
                seen.numbers["later"] = rms(samples[window * 5 ..< window * 10])
            }
            seen.steps["gone"] = waitFor { home.state() == nil }
            // The guardian records the nap just after it removes the state.
            _ = waitFor(.seconds(10)) { ((try? home.run(["history", "--json"]))?.standardOutput ?? "").contains("\"rungBy\"") }
            let history = try home.run(["history", "--json"])
            let document = try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any]
            let nap0 = (document?["naps"] as? [[String: Any]])?.last
            seen.texts["rungBy"] = nap0?["rungBy"] as? String
            seen.texts["takenOverBy"] = nap0?["takenOverBy"] as? String
            seen.texts["recordedBy"] = nap0?["recordedBy"] as? String
            seen.texts["history"] = history.standardOutput
        }
        #expect(seen["rang"] && seen["guarded"] && seen["ended"], "\(seen.texts)")
        // 8 s from the first ring (the guardian's take-over inside them), not 8 s from the take-over.
        let rangFor = try #require(seen.numbers["rang for"], "\(seen.texts)")
        #expect(rangFor > 7.5 && rangFor < 9.5, "rang for \(rangFor) s: \(seen.texts["guardian"] ?? "")")
        // No second fade-in: the guardian's first 200 ms are as loud as later ones.
        let first = try #require(seen.numbers["first 200 ms"], "\(seen.numbers)")
        let later = try #require(seen.numbers["later"], "\(seen.numbers)")
        #expect(first > later * 0.7, "first 200 ms RMS \(first), later \(later)")
        #expect(seen.texts["rungBy"] == "nap" && seen.texts["takenOverBy"] == "guardian" && seen.texts["recordedBy"] == "guardian",
                "\(seen.texts["history"] ?? "")")
    }
}

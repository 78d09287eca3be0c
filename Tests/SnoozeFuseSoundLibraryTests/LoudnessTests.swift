import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseSoundLibrary
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// A sound's loudness (EBU R 128 through libebur128, checked against ffmpeg's own ebur128 filter):
/// measured at import in every stored encoding, kept in the index and inside the stored file (so
/// a rebuilt index has it), shown by `sounds list` and `sounds validate`, and said at import.
@Suite("Loudness measured at import and validation (libebur128, checked against ffmpeg)")
struct LoudnessTests {
    /// ffmpeg's integrated loudness of `path`, as a mono sound plays (both speakers).
    private func ffmpegLoudness(_ path: String) throws -> Double {
        let result = try runToolResult("ffmpeg", ["-hide_banner", "-nostats", "-i", path, "-af", "pan=stereo|c0=c0|c1=c0,ebur128", "-f", "null", "-"])
        let line = try #require(result.split(separator: "\n").last { $0.contains(" I: ") && $0.contains("LUFS") })
        return try #require(Double(line.split(separator: " ").first { Double($0) != nil } ?? ""))
    }

    @Test(arguments: [["-b", "16"], ["-b", "24"], ["-b", "32", "-e", "signed-integer"], ["-b", "32", "-e", "floating-point"],
                      ["-b", "64", "-e", "floating-point"]])
    func importMeasuresWhatItStoresInEveryEncoding(_ options: [String]) throws {
        let scratch = try Scratch()
        let source = scratch.path("tone.wav")
        // A 1 kHz sine at -20 dBFS peak, mono: about -20 LUFS as it plays on two speakers.
        try runTool("sox", ["-n", "-r", "48000", "-c", "1"] + options + [source, "synth", "3", "sine", "1000", "vol", "0.1"])
        let result = try scratch.library().importSound(at: source)
        let loudness = try #require(result.sound.loudness)
        #expect(abs(loudness - (try ffmpegLoudness(source))) < 0.3, "\(loudness) LUFS")
        #expect(abs(try #require(result.sound.truePeak) - -20) < 0.2)
        #expect(result.loudnessFailure == nil)
    }

    @Test func theIssuesWhisperIsMeasuredKeptInTheFileAndTheIndexAndListed() throws {
        let scratch = try Scratch()
        let source = scratch.path("quiet.wav")
        try runTool("sox", ["-n", "-r", "44100", "-c", "1", source, "synth", "4", "sine", "1000", "vol", "0.005"])
        let library = try scratch.library()
        let imported = try library.importSound(at: source)
        #expect(abs((imported.sound.loudness ?? 0) - -46) < 0.3)
        #expect(abs((imported.sound.truePeak ?? 0) - -46) < 0.2)
        let gain = AlarmLoudness.gain(integrated: imported.sound.loudness, truePeak: imported.sound.truePeak ?? 0)
        #expect(gain.decibels == AlarmLoudness.largestGain && gain.limit == .largestGain)
        // Inside the file: a rebuilt index has it too.
        let path = storedPath(scratch, imported.sound)
        #expect(try metadataInFile(path)?.loudness.map { abs($0 - imported.sound.loudness!) < 0.01 } == true)
        try FileManager.default.removeItem(atPath: scratch.database)
        let rebuilt = try scratch.library().list().first { $0.name == "quiet" }
        #expect(rebuilt?.loudness.map { abs($0 - imported.sound.loudness!) < 0.01 } == true)
        #expect(rebuilt?.truePeak.map { abs($0 - imported.sound.truePeak!) < 0.01 } == true)
    }

    @Test func validateMeasuresTheWholeFile() throws {
        let scratch = try Scratch()
        let source = scratch.path("chord.flac")
        try runTool("sox", ["-n", "-r", "44100", "-c", "2", source, "synth", "2", "sine", "880", "sine", "1320", "vol", "0.6"])
        let validation = try SoundValidation.validate(path: source)
        let loudness = try #require(validation.loudness)
        #expect(abs(loudness - (try ffmpegStereoLoudness(source))) < 0.3)
        #expect(validation.truePeak.map { $0 > -5 && $0 < 0 } == true, "\(String(describing: validation.truePeak))")
        #expect(validation.loudnessFailure == nil)
    }

    /// What the CLI says: the loudness at import (a warning when the sound cannot reach the alarm's
    /// loudness), a column of `sounds list`, the fields of `--json`, a line of `sounds validate`.
    @Test func theCommandsSayIt() async throws {
        let scratch = try Scratch()
        let quiet = scratch.path("quiet.wav"), peaky = scratch.path("peaky.wav")
        try runTool("sox", ["-n", "-r", "44100", "-c", "1", quiet, "synth", "2", "sine", "1000", "vol", "0.0316"])
        // Clicks on silence: peaks at full scale, hardly any loudness.
        try runTool("sox", ["-n", "-r", "44100", "-c", "1", peaky, "synth", "2", "square", "2", "vol", "0.9", "highpass", "5000"])
        let imported = try await scratch.run(["sounds", "import", quiet])
        #expect(imported.standardError.contains("snoozefuse: loudness: -30.0 LUFS, true peak -30.0 dBTP: plays +25.0 dB, at the alarm's loudness (-5.0 LUFS)."), "\(imported.standardError)")
        let held = try await scratch.run(["sounds", "import", peaky])
        #expect(held.standardError.contains("snoozefuse: warning: loudness: "), "\(held.standardError)")
        #expect(held.standardError.contains("its peaks keep it"), "\(held.standardError)")
        let list = try await scratch.run(["sounds", "list"])
        #expect(list.standardOutput.contains("quiet\timported\t2.00 s\t-30.0 LUFS, peak -30.0 dBTP"), "\(list.standardOutput)")
        let json = try await scratch.run(["sounds", "list", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
        let entry = try #require(entries.first { $0["name"] as? String == "quiet" })
        #expect(entry["loudnessLufs"] as? Double == -30 && entry["truePeakDbtp"] as? Double == -30 && entry["alarmGainDb"] as? Double == 25)
        let validated = try await scratch.run(["sounds", "validate", quiet])
        #expect(validated.standardOutput.contains("  loudness: -30.0 LUFS, true peak -30.0 dBTP: plays +25.0 dB"), "\(validated.standardOutput)")
    }

    /// What `name arguments…` writes on standard error (ffmpeg's report).
    private func runToolResult(_ name: String, _ arguments: [String]) throws -> String {
        let quoted = ([name] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try runTool("sh", ["-c", quoted + " 2>&1"])
    }

    private func ffmpegStereoLoudness(_ path: String) throws -> Double {
        let result = try runToolResult("ffmpeg", ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128", "-f", "null", "-"])
        let line = try #require(result.split(separator: "\n").last { $0.contains(" I: ") && $0.contains("LUFS") })
        return try #require(Double(line.split(separator: " ").first { Double($0) != nil } ?? ""))
    }
}

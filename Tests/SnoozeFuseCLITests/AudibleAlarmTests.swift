import Foundation
import SnoozeFuseTestSupport
import Testing

/// Frames of a WAV file (any sample format) and its samples as floats.
func wavContents(_ path: String) throws -> (seconds: Double, samples: [Float]) {
    let wav = try WAVFile(contentsOf: URL(fileURLWithPath: path))
    let samples = wav.formatTag == 3 ? rawFloats(in: wav.data) : rawS16AsFloats(in: wav.data)
    return (Double(samples.count / max(wav.channels, 1)) / Double(max(wav.sampleRate, 1)), samples)
}

/// An alarm is heard or it is not an alarm; a device without a clock records real time, not hours.
@Suite("An audible alarm, paced to real time on devices without a clock")
struct AudibleAlarmTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse")

    @Test func aThreeSecondRingOnTheFilePCMRecordsThreeSeconds() async throws {
        let folder = try TemporaryFolder()
        let capture = folder.path("ring.wav")
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "3s",
                                                       "--fade-in", "0", "--device", "file:FILE=\(capture),FORMAT=wav", "--quiet"])
        #expect(result.status == 0, "\(result.standardError)")
        let recorded = try wavContents(capture)
        #expect(abs(recorded.seconds - 3) <= 0.3, "recorded \(recorded.seconds) s")
        #expect(rms(recorded.samples) > 0.05)
    }

    @Test func aTwoSecondPreviewOnTheFilePCMRecordsTwoSeconds() async throws {
        let folder = try TemporaryFolder()
        let capture = folder.path("preview.wav")
        let result = try await runProcess(snoozefuse, ["sounds", "play", "chime", "--duration", "2s",
                                                       "--device", "file:FILE=\(capture),FORMAT=wav"])
        #expect(result.status == 0, "\(result.standardError)")
        let recorded = try wavContents(capture)
        #expect(abs(recorded.seconds - 2) <= 0.3, "recorded \(recorded.seconds) s")
    }

    @Test func aTenSecondRingOnNullCostsUnderFivePercentOfItsTime() throws {
        let folder = try TemporaryFolder()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = folder.path("state")
        environment["XDG_RUNTIME_DIR"] = folder.url.path
        environment["XDG_DATA_HOME"] = folder.path("data")
        let start = ContinuousClock.now
        let nap = try BackgroundProcess(snoozefuse, ["nap", "--no-hold", "--release", "0", "--nap", "0", "--ring-limit", "10s",
                                                     "--device", "null", "--quiet"], environment: environment,
                                        standardOutput: folder.path("out"), standardError: folder.path("err"))
        let (status, cpu) = nap.waitWithUsage()
        let wall = start.duration(to: .now)
        #expect(status == 0)
        let share = cpu / (Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18)
        #expect(share < 0.05, "\(cpu) s of CPU over \(wall)")
    }

    @Test func volumeZeroIsRefused() async throws {
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--volume", "0", "--device", "null"])
        #expect(result.status == 64)
        #expect(result.standardError.contains("--volume 0 would make the alarm silent"), "\(result.standardError)")
    }

    @Test func aSilentSoundIsReplacedByTheBuiltInOneAndHeard() async throws {
        let folder = try TemporaryFolder()
        let silent = folder.path("silent.wav"), capture = folder.path("ring.wav")
        try runTool("sox", ["-D", "-n", "-r", "44100", "-c", "1", "-b", "16", silent, "trim", "0", "2"])
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "2s",
                                                       "--fade-in", "0", "--sound", silent, "--device", "file:FILE=\(capture),FORMAT=wav",
                                                       "--events", "jsonl", "--quiet"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("is silent in its first 60 s"), "\(result.standardOutput)")
        #expect(rms(try wavContents(capture).samples) > 0.05, "the built-in sound was heard")
    }

    @Test func aSoundThatFallsSilentWhileRingingGivesWayToTheBuiltInTone() async throws {
        let folder = try TemporaryFolder()
        let sound = folder.path("beep-then-silence.wav"), capture = folder.path("ring.wav")
        // One second of tone, then seven of silence (no dither): loud enough to be accepted, silent while it rings.
        try runTool("sox", ["-D", "-n", "-r", "48000", "-c", "1", "-b", "16", sound, "synth", "1", "sine", "440", "pad", "0", "7"])
        let result = try await runProcess(snoozefuse, ["nap", "--no-hold", "--release", "0", "--nap", "1", "--ring-limit", "7s",
                                                       "--fade-in", "0", "--sound", sound, "--device", "file:FILE=\(capture),FORMAT=wav",
                                                       "--events", "jsonl", "--quiet"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("stayed below -50 dBFS for 4 s"), "\(result.standardOutput)")
        let samples = try wavContents(capture).samples
        // The last second (past 1 s of tone and 4 s of silence) holds the built-in tone.
        #expect(rms(samples.suffix(48_000)) > 0.05, "the end of the ring is not silent")
    }
}

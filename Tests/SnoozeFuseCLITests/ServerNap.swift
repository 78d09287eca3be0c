import Foundation
import SnoozeFuseTestSupport

/// `snoozefuse nap` on the sound server's own output (no `--device`), its events and messages
/// collected. Its waits block: run it from a script on its own thread (`onOwnThread`).
struct ServerNap {
    let process: Process
    let events: LineCollector
    let messages: LineCollector

    init(on pulse: PrivatePulse, ringLimit: Int, options: [String] = [], environment: [String: String] = [:]) throws {
        let arguments = ["nap", "--preset", "quick-test", "--no-hold", "--release", "0", "--nap", "1", "--fade-in", "0",
                         "--volume", "80", "--ring-limit", "\(ringLimit)", "--dismiss", "key", "--events", "jsonl", "--quiet"] + options
        process = try pulse.launch(BuiltProducts.executable("snoozefuse"), arguments, extraEnvironment: environment)
        events = LineCollector(process.standardOutput)
        messages = LineCollector(process.standardError)
    }

    func waitForEnd() throws -> Int32 {
        _ = try events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
        for _ in 0 ..< 1_000 where process.isRunning { usleep(20_000) }
        return process.isRunning ? -1 : process.terminationStatus
    }
}

/// The RMS of a capture's left channel over its loudest second, and the share of 100 ms windows
/// louder than -40 dBFS.
func loudness(_ capture: URL) throws -> (loudestSecond: Double, loudShare: Double) {
    let windows = try PrivatePulse.windowRMS(ofS16Stereo: capture, windowFrames: 4_800)
    guard !windows.isEmpty else { return (0, 0) }
    let seconds = stride(from: 0, to: max(windows.count - 9, 1), by: 1).map { first in
        windows[first ..< min(first + 10, windows.count)].reduce(0, +) / Double(min(10, windows.count - first))
    }
    return (seconds.max() ?? 0, Double(windows.filter { $0 > 0.01 }.count) / Double(windows.count))
}

/// An ALSA configuration whose `sysdefault` (the sound card itself) is ALSA's file PCM, recording
/// what it is given to `card.wav`: pass `configuration` as `ALSA_CONFIG_PATH`.
func cardAsFilePCM(in directory: URL) throws -> (card: URL, configuration: URL) {
    let card = directory.appendingPathComponent("card.wav")
    let configuration = directory.appendingPathComponent("asound.conf")
    try """
    pcm.sysdefault {
        type file
        slave.pcm { type null }
        file "\(card.path)"
        format "wav"
    }
    """.write(to: configuration, atomically: true, encoding: .utf8)
    return (card, configuration)
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// `snoozefuse devices` against the test's own PulseAudio daemon: answering, then stopped (SIGSTOP).
@Suite("snoozefuse devices with a PulseAudio daemon (answering, and stopped)", .serialized)
struct DevicesPulseTests {
    @Test("with the server answering, the pulse PCM is listed and opens")
    func pulseOpens() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let run = try await onOwnThread { () throws -> DevicesRun in
            try pulse.startDaemon()
            return try DevicesRun(on: pulse)
        }
        #expect(run.status == 0, "\(run.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        let pcm = try #require(entries.first { $0["name"] as? String == "pulse" }, "\(run.stdout)")
        #expect(pcm["opens"] as? Bool == true, "\(pcm)")
    }

    @Test("with the server stopped, the PCMs on it fail with ETIMEDOUT after 1 s each instead of hanging")
    func stoppedServerDoesNotHang() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let run = try await onOwnThread { () throws -> DevicesRun in
            try pulse.startDaemon()
            pulse.pauseDaemon()
            return try DevicesRun(on: pulse)
        }
        #expect(run.status == 0, "exit \(run.status); stderr \(run.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        for name in ["pulse", "default"] {
            let pcm = try #require(entries.first { $0["name"] as? String == name }, "\(run.stdout)")
            #expect(pcm["opens"] as? Bool == false, "\(pcm)")
            #expect((pcm["error"] as? String ?? "").contains("ETIMEDOUT"), "\(pcm)")
            #expect((pcm["error"] as? String ?? "").contains("no answer within 1"), "\(pcm)")
        }
        let null = try #require(entries.first { $0["name"] as? String == "null" })
        #expect(null["opens"] as? Bool == true)
        #expect(run.seconds < 15, "took \(run.seconds) s")
    }

    /// alsa-lib's configuration, when it cannot be read, hangs the listing itself: here a hook
    /// loads a FIFO that nobody writes (its open blocks for ever).
    @Test("a listing that never returns gives up after 3 s with exit 69 and says why")
    func hungListingGivesUp() async throws {
        let pulse = try PrivatePulse()   // for its folder and environment; no daemon
        defer { pulse.cleanUp() }
        let fifo = pulse.directory.appendingPathComponent("never-written")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let config = pulse.directory.appendingPathComponent("alsa.conf")
        try """
        @hooks [ { func load files [ "\(fifo.path)" ] errors false } ]
        pcm.null { type null }
        """.write(to: config, atomically: true, encoding: .utf8)
        let run = try await onOwnThread { () throws -> DevicesRun in
            try DevicesRun(on: pulse, extraEnvironment: ["ALSA_CONFIG_PATH": config.path])
        }
        #expect(run.status == 69, "exit \(run.status); stdout \(run.stdout); stderr \(run.stderr)")
        #expect(run.stderr.contains("ETIMEDOUT"), "\(run.stderr)")
        #expect(run.stderr.contains("did not list the PCMs within 3"), "\(run.stderr)")
        #expect(run.stderr.contains("does not answer"), "\(run.stderr)")
        #expect(run.seconds < 15, "took \(run.seconds) s")
    }
}

/// `snoozefuse devices --json` on the private daemon, stopped if it runs past 30 s.
struct DevicesRun: Sendable {
    var status: Int32 = -1
    var stdout = ""
    var stderr = ""
    var seconds = 0.0

    init(on pulse: PrivatePulse, extraEnvironment: [String: String] = [:]) throws {
        let started = Date()
        let process = try pulse.launch(BuiltProducts.executable("snoozefuse"), ["devices", "--json"],
                                       extraEnvironment: extraEnvironment)
        let output = LineCollector(process.standardOutput)
        let errors = LineCollector(process.standardError)
        for _ in 0 ..< 1_500 where process.isRunning { usleep(20_000) }
        seconds = Date().timeIntervalSince(started)
        pulse.stop(process)
        status = process.terminationStatus
        usleep(100_000) // the collectors read to end of file
        stdout = output.text
        stderr = errors.text
    }
}

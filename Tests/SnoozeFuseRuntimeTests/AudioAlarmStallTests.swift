import Foundation
import SnoozeFuseTestSupport
import Testing

/// A sound server that stops answering (the test's own PulseAudio daemon, frozen with SIGSTOP):
/// writes to it block and opens hang in the handshake, with no error from alsa-lib, ever.
@Suite("Audio alarm through a PulseAudio daemon that stops answering (SIGSTOP)", .serialized)
struct AudioAlarmStallTests {
    @Test("a server that stalls mid-alarm hands over to the bell, and the device comes back after SIGCONT")
    func stalledServerHandsOverAndComesBack() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let nap = try PulseNap(on: pulse, ringLimit: 15)
        let (events, messages) = (nap.events, nap.messages)
        try await nap.waitUntilPlayingOnPulse()

        // Freeze the server: the audio thread's blocking write never returns; no error comes.
        pulse.pauseDaemon()
        let pausedAt = ContinuousClock.now
        let lost = try await events.wait(for: "the hand-over to the bell") {
            $0["event"] as? String == "output" && $0["output"] as? String == "terminal bell"
        }
        let handOver = pausedAt.duration(to: .now)
        let lostMessage = lost["message"] as? String ?? ""
        #expect(lostMessage.contains("ALSA pulse was lost mid-alarm"), "\(lost)")
        #expect(lostMessage.contains("stalled: it accepted no frames for 3s"), "\(lost)")
        // The stall limit is 3 s from the last accepted write (at most a period before the pause).
        #expect(handOver > .seconds(2) && handOver < .seconds(4.5), "handed over \(handOver) after the pause")
        _ = try await messages.wait(for: "the bell after the stall") { _ in
            messages.text.components(separatedBy: "was lost").last?.contains("ALARM") == true
        }

        // The first reconnect (2 s after the loss) hangs in the handshake: it gives up after 1 s
        // and says so, and is not opened again while that open still hangs.
        let retry = try await events.wait(for: "the failed reopen") {
            $0["event"] as? String == "output" && ($0["message"] as? String)?.hasPrefix("reopening") == true
        }
        #expect((retry["message"] as? String)?.contains("did not return within 1s") == true, "\(retry)")
        let lostAt = try #require(lost["t"] as? Double)
        let retryAt = try #require(retry["t"] as? Double)
        #expect(retryAt - lostAt >= 2.9, "the reopen gave up \(retryAt - lostAt) s after the loss (2 s + 1 s)")

        // The server answers again: the open that hung completes and the alarm moves back to it.
        pulse.resumeDaemon()
        let resumedAt = ContinuousClock.now
        let restored = try await events.wait(for: "the output change back to pulse") {
            $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
        }
        let backAfter = resumedAt.duration(to: .now)
        #expect(backAfter < .seconds(3), "back on pulse \(backAfter) after SIGCONT")
        #expect((restored["message"] as? String)?.contains("ALSA pulse is back") == true, "\(restored)")
        let capture = try pulse.startCapture(name: "after.raw")
        try await Task.sleep(for: .seconds(1.5))
        pulse.stop(capture)

        try await nap.expectRingLimitEnd(pulse)
        let after = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("after.raw"))
        #expect(after > 0.05, "capture after the server came back: RMS \(after)")
    }

    @Test("a device whose open hangs at arming falls through, and the alarm still sounds on time")
    func hungOpenAtArmingFallsThroughOnTime() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        pulse.pauseDaemon()
        let nap = try PulseNap(on: pulse, ringLimit: 5)
        let (events, messages) = (nap.events, nap.messages)

        let started = try await events.wait(for: "the alarm") { $0["event"] as? String == "alarm" }
        let output = started["output"] as? String ?? ""
        #expect(output != "ALSA pulse", "\(started)")
        // Armed 2 s ahead: the hung open gives up after 1 s and the chain goes on in time.
        let lateness = try #require(started["lateness_ms"] as? Double)
        #expect(lateness < 500, "the alarm was \(lateness) ms late; stderr: \(messages.text)")
        let fallbacks = try await events.wait(for: "the record of the hung open") {
            $0["event"] as? String == "output" && ($0["message"] as? String)?.hasPrefix("ALSA pulse failed") == true
        }
        #expect((fallbacks["message"] as? String)?.contains("ALSA open on PCM 'pulse' did not return within 1s") == true,
                "\(fallbacks)")
        if output == "terminal bell" {
            _ = try await messages.wait(for: "the bell") { _ in messages.text.contains("ALARM") }
        }

        // When the server answers, the open that hung completes and the alarm moves to it.
        pulse.resumeDaemon()
        let restored = try await events.wait(for: "the alarm moving to pulse") {
            $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
        }
        #expect((restored["message"] as? String)?.contains("ALSA pulse is back") == true, "\(restored)")
        try await nap.expectRingLimitEnd(pulse)
    }

    @Test("dismissing while the server is stopped and the write is blocked returns at once, and the process exits")
    func dismissWhileStalledDoesNotHang() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        try pulse.startDaemon()
        let driver = pulse.directory.appendingPathComponent("dismiss.py")
        try Self.dismissDriver.write(to: driver, atomically: true, encoding: .utf8)
        let nap = try PulseNap(on: pulse, ringLimit: 30, through: [executableInPath("python3").path, driver.path])
        let (session, events) = (nap.process, nap.events)
        try await nap.waitUntilPlayingOnPulse()
        // Frozen for 1 s: the 0.4 s buffer is full, so the audio thread is blocked in its write;
        // the stall limit (3 s) has not run out, so nothing has handed over yet.
        pulse.pauseDaemon()
        try await Task.sleep(for: .seconds(1))
        kill(session.processIdentifier, SIGUSR1) // the driver types `d` on the terminal: dismiss
        let dismissedAt = ContinuousClock.now
        let exited = await PulseNap.exits(session, within: .seconds(20))
        let exitedAfter = dismissedAt.duration(to: .now)
        #expect(exited, "still running \(exitedAfter) after the dismissal")
        #expect(exitedAfter < .seconds(3), "exited \(exitedAfter) after the dismissal")
        pulse.stop(session) // when it hangs, the test fails instead of hanging too
        #expect(session.terminationStatus == 0, "exit status \(session.terminationStatus); events: \(events.text)")
        let end = try await events.wait(for: "the end of the session") { $0["event"] as? String == "end" }
        #expect(end["outcome"] as? String == "dismissed")
        // The dismissal came during the stall, before the watchdog: no output change at all.
        #expect(!events.text.contains("\"event\":\"output\""), "\(events.text)")
    }

    /// Runs a program on a pseudo-terminal with its standard output passed through (for the
    /// events); SIGUSR1 types `d` on the terminal. Exits with the program's status. The program
    /// is killed if the driver dies.
    static let dismissDriver = #"""
    import ctypes, os, pty, select, signal, sys
    command = sys.argv[1:]
    events = os.dup(1)
    pid, fd = pty.fork()
    if pid == 0:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        os.dup2(events, 1)
        os.execv(command[0], command)
    os.close(events)
    signal.signal(signal.SIGUSR1, lambda *_: os.write(fd, b"d"))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])  # the test runner may spawn it blocked
    status = None
    while status is None:
        try:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                os.read(fd, 4096)
        except OSError:
            pass
        done, waited = os.waitpid(pid, os.WNOHANG)
        if done:
            status = waited
    sys.exit(os.waitstatus_to_exitcode(status))
    """#
}

/// `snoozefuse nap` with its alarm on the private daemon's `pulse` device (run directly, or through
/// a driver program given its command line), its events and messages collected.
struct PulseNap {
    let process: Process
    let events: LineCollector
    let messages: LineCollector

    init(on pulse: PrivatePulse, ringLimit: Int, through driver: [String] = []) throws {
        let nap = [BuiltProducts.executable("snoozefuse").path, "nap", "--preset", "quick-test", "--no-hold",
                   "--device", "pulse", "--fade-in", "1", "--volume", "80", "--ring-limit", "\(ringLimit)",
                   "--events", "jsonl", "--quiet"]
        let command = driver + nap
        process = try pulse.launch(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        events = LineCollector(process.standardOutput)
        messages = LineCollector(process.standardError)
    }

    /// Waits until the alarm plays on `ALSA pulse`, then past the null sink's start-up (it holds a
    /// new stream's writes for up to 1.7 s), so the stream is in its steady state.
    func waitUntilPlayingOnPulse() async throws {
        let started = try await events.wait(for: "the alarm on pulse") { $0["event"] as? String == "alarm" }
        #expect(started["output"] as? String == "ALSA pulse", "\(started); stderr: \(messages.text)")
        try await Task.sleep(for: .seconds(2.5))
    }

    /// Waits for the session to end at its ring limit and the process to exit with status 0.
    func expectRingLimitEnd(_ pulse: PrivatePulse) async throws {
        let end = try await events.wait(for: "the end of the session") { $0["event"] as? String == "end" }
        #expect(end["outcome"] as? String == "ring_limit")
        #expect(await Self.exits(process, within: .seconds(10)), "still running after the end of the session")
        pulse.stop(process)
        #expect(process.terminationStatus == 0, "stderr: \(messages.text)")
    }

    /// Waits (polling) until `process` has exited, at most `limit`; `false` if it is still running.
    static func exits(_ process: Process, within limit: Duration) async -> Bool {
        let start = ContinuousClock.now
        while process.isRunning, start.duration(to: .now) < limit {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !process.isRunning
    }
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// A sound server that stops answering (the test's own PulseAudio daemon, frozen with SIGSTOP):
/// writes to it block and opens hang in the handshake, with no error from alsa-lib, ever.
///
/// Each test's script (signals at given moments, waits for events) runs on a thread of its own, and
/// delays are measured from the events' own `wall` times: suites running in parallel can hold up
/// Swift's shared pool for seconds, and that must not move the signals or the measurements.
@Suite("Audio alarm through a PulseAudio daemon that stops answering (SIGSTOP)", .serialized)
struct AudioAlarmStallTests {
    @Test("a server that stalls mid-alarm hands over to the bell, and the device comes back after SIGCONT")
    func stalledServerHandsOverAndComesBack() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> Seen in
            var seen = Seen()
            try pulse.startDaemon()
            let nap = try PulseNap(on: pulse, ringLimit: 15)
            seen.startedOn = try nap.waitUntilPlayingOnPulse()

            // Freeze the server: the audio thread's blocking write never returns; no error comes.
            pulse.pauseDaemon()
            let pausedAt = Date()
            let lost = try nap.events.waitBlocking(for: "the hand-over to the bell") {
                $0["event"] as? String == "output" && $0["output"] as? String == "terminal bell"
            }
            seen.lost = lost["message"] as? String ?? ""
            seen.handOver = wallTime(lost).map { $0.timeIntervalSince(pausedAt) }
            _ = try nap.messages.waitBlocking(for: "the bell after the stall") { _ in
                nap.messages.text.components(separatedBy: "was lost").last?.contains("ALARM") == true
            }
            // The first reopen (2 s after the loss) hangs in the handshake and gives up after 1 s.
            let retry = try nap.events.waitBlocking(for: "the failed reopen") {
                $0["event"] as? String == "output" && ($0["message"] as? String)?.hasPrefix("reopening") == true
            }
            seen.retry = retry["message"] as? String ?? ""
            seen.retryAfterLoss = (retry["t"] as? Double ?? 0) - (lost["t"] as? Double ?? 0)

            // The server answers again: the open that hung completes and the alarm moves back to it.
            pulse.resumeDaemon()
            let resumedAt = Date()
            let restored = try nap.events.waitBlocking(for: "the output change back to pulse") {
                $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
            }
            seen.restored = restored["message"] as? String ?? ""
            seen.backAfter = wallTime(restored).map { $0.timeIntervalSince(resumedAt) }
            let capture = try pulse.startCapture(name: "after.raw")
            usleep(1_500_000)
            pulse.stop(capture)
            seen.rms = try PrivatePulse.rms(ofS16Stereo: pulse.directory.appendingPathComponent("after.raw"))
            try nap.waitForTheEnd(into: &seen)
            return seen
        }
        #expect(seen.startedOn == "ALSA pulse")
        #expect(seen.lost.contains("ALSA pulse was lost mid-alarm"), "\(seen.lost)")
        #expect(seen.lost.contains("stalled: it accepted no frames for 3s"), "\(seen.lost)")
        // The stall limit is 3 s from the last accepted write (at most a period before the pause).
        let handOver = try #require(seen.handOver)
        #expect(handOver > 2 && handOver < 4.5, "handed over \(handOver) s after the pause")
        #expect(seen.retry.contains("did not return within 1s"), "\(seen.retry)")
        #expect(seen.retryAfterLoss >= 2.9, "the reopen gave up \(seen.retryAfterLoss) s after the loss (2 s + 1 s)")
        let backAfter = try #require(seen.backAfter)
        #expect(backAfter < 3, "back on pulse \(backAfter) s after SIGCONT")
        #expect(seen.restored.contains("ALSA pulse is back"), "\(seen.restored)")
        #expect(seen.rms > 0.05, "capture after the server came back: RMS \(seen.rms)")
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "\(seen.stderr)")
    }

    @Test("a device whose open hangs at arming falls through, and the alarm still sounds on time")
    func hungOpenAtArmingFallsThroughOnTime() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> Seen in
            var seen = Seen()
            try pulse.startDaemon()
            pulse.pauseDaemon()
            let nap = try PulseNap(on: pulse, ringLimit: 5)
            let started = try nap.events.waitBlocking(for: "the alarm") { $0["event"] as? String == "alarm" }
            seen.startedOn = started["output"] as? String ?? ""
            seen.lateness = started["lateness_ms"] as? Double
            let fallback = try nap.events.waitBlocking(for: "the record of the hung open") {
                $0["event"] as? String == "output" && ($0["message"] as? String)?.hasPrefix("ALSA pulse failed") == true
            }
            seen.lost = fallback["message"] as? String ?? ""
            if seen.startedOn == "terminal bell" {
                _ = try nap.messages.waitBlocking(for: "the bell") { _ in nap.messages.text.contains("ALARM") }
            }
            // When the server answers, the open that hung completes and the alarm moves to it.
            pulse.resumeDaemon()
            let restored = try nap.events.waitBlocking(for: "the alarm moving to pulse") {
                $0["event"] as? String == "output" && $0["output"] as? String == "ALSA pulse"
            }
            seen.restored = restored["message"] as? String ?? ""
            try nap.waitForTheEnd(into: &seen)
            return seen
        }
        #expect(!seen.startedOn.isEmpty && seen.startedOn != "ALSA pulse", "\(seen.startedOn)")
        // Armed 2 s ahead: the hung open gives up after 1 s and the chain goes on in time.
        let lateness = try #require(seen.lateness)
        #expect(lateness < 500, "the alarm was \(lateness) ms late; stderr: \(seen.stderr)")
        #expect(seen.lost.contains("ALSA open on PCM 'pulse' did not return within 1s"), "\(seen.lost)")
        #expect(seen.restored.contains("ALSA pulse is back"), "\(seen.restored)")
        #expect(seen.outcome == "ring_limit")
        #expect(seen.status == 0, "\(seen.stderr)")
    }

    @Test("dismissing while the server is stopped and the write is blocked returns at once, and the process exits")
    func dismissWhileStalledDoesNotHang() async throws {
        let pulse = try PrivatePulse()
        defer { pulse.cleanUp() }
        let seen = try await onOwnThread { () throws -> Seen in
            var seen = Seen()
            try pulse.startDaemon()
            let driver = pulse.directory.appendingPathComponent("dismiss.py")
            try Self.dismissDriver.write(to: driver, atomically: true, encoding: .utf8)
            // `--dismiss key`: one `d` stops the alarm (the word challenge is not what this tests).
            let nap = try PulseNap(on: pulse, ringLimit: 30, through: [executableInPath("python3").path, driver.path],
                                   options: ["--dismiss", "key"])
            seen.startedOn = try nap.waitUntilPlayingOnPulse()
            // Frozen for 1 s: the 0.4 s buffer is full, so the audio thread is blocked in its write;
            // the stall limit (3 s) has not run out, so nothing has handed over yet.
            pulse.pauseDaemon()
            usleep(1_000_000)
            let dismissedAt = Date()
            kill(nap.process.processIdentifier, SIGUSR1) // the driver types `d` on the terminal: dismiss
            let end = try nap.events.waitBlocking(for: "the end of the session") { $0["event"] as? String == "end" }
            seen.endedAfter = wallTime(end).map { $0.timeIntervalSince(dismissedAt) }
            try nap.waitForTheEnd(into: &seen)
            seen.lost = nap.events.text
            return seen
        }
        #expect(seen.startedOn == "ALSA pulse")
        let endedAfter = try #require(seen.endedAfter)
        #expect(endedAfter < 3, "the session ended \(endedAfter) s after the dismissal")
        #expect(seen.outcome == "dismissed")
        #expect(seen.status == 0, "exit status \(seen.status)")
        // The dismissal came during the stall, before the watchdog: no output change at all.
        #expect(!seen.lost.contains("\"event\":\"output\""), "\(seen.lost)")
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

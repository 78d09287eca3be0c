import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// An interactive bash (job control on) on a real pseudo-terminal, fed a script of lines: each
/// step is a line to type (`\n` ends it; `^Z` is Ctrl-Z), or `sleep:SECONDS`, or `until:TEXT`
/// (read until the terminal has shown TEXT since the last line typed, at most 20 s), or
/// `seen:TEXT` (the same, since the start). Prints everything the terminal showed.
private let jobShell = #"""
import os, pty, sys, time, select
master, terminal = pty.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    os.login_tty(terminal)
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
os.close(terminal)
shown = b""
def drain(seconds, until=None):
    global shown
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if until is not None and until in shown:
            return
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                shown += os.read(master, 4096)
            except OSError:
                return
drain(0.5)
os.write(master, b"PS1='$ '; bind 'set enable-bracketed-paste off' 2>/dev/null\n")
drain(0.5)
mark = len(shown)
for step in sys.argv[1:]:
    if step.startswith("sleep:"):
        drain(float(step[6:]))
    elif step.startswith("until:"):
        # Only what the terminal showed since the last line typed counts.
        before, shown = shown[:mark], shown[mark:]
        drain(20, until=step[6:].encode())
        shown = before + shown
    elif step.startswith("seen:"):
        drain(20, until=step[5:].encode())
    else:
        mark = len(shown)
        os.write(master, step.replace("^Z", "\x1a").replace("\\n", "\n").encode())
        drain(0.3)
os.write(master, b"exit\n")
drain(2)
sys.stdout.write(shown.decode(errors="replace").replace("\r", ""))
"""#

/// Holds every thread of a process in a ptrace stop for `seconds` (PTRACE_ATTACH to each): SIGCONT
/// does not move it, as it does not move a frozen or stuck one; SIGKILL ends it.
private let freezer = #"""
import ctypes, sys, time, os
libc = ctypes.CDLL(None, use_errno=True)
pid, seconds = int(sys.argv[1]), float(sys.argv[2])
for task in os.listdir("/proc/%d/task" % pid):
    if libc.ptrace(16, int(task), None, None) != 0:
        sys.exit("ptrace: " + os.strerror(ctypes.get_errno()))
print("held", flush=True)
time.sleep(seconds)
"""#

/// A nap's home and an interactive shell on a pty to type into.
private struct JobShell {
    let home: NapHome
    let script: String

    init() throws {
        home = try NapHome()
        script = home.folder.path("shell.py")
        try jobShell.write(toFile: script, atomically: true, encoding: .utf8)
    }

    /// `snoozefuse` as the shell types it, its events into `events.jsonl` of the home.
    var snoozefuse: String { BuiltProducts.executable("snoozefuse").path }
    var events: String { home.folder.path("events.jsonl") }

    /// Runs the shell through `steps`; returns what the terminal showed.
    func type(_ steps: [String]) throws -> String {
        var environment = home.environment
        environment["TERM"] = "xterm-256color"
        let result = try runProcessBlocking(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script] + steps, environment: environment)
        return result.standardOutput
    }

    func records() -> [[String: Any]] { home.lines(events) }

    func phases() -> [String] { records().filter { $0["event"] as? String == "phase" }.compactMap { $0["phase"] as? String } }
}

@Suite("A nap under the shell's job control, on a real pty with an interactive bash")
struct JobControlTests {
    /// `&`: never stopped by its terminal, held as with --no-hold (it says so in one line), seen by
    /// `status` from the start, and it rings.
    @Test func aNapStartedWithAnAmpersandRunsIsSeenAndRings() async throws {
        let shell = try JobShell()
        let shown = try await onOwnThread {
            try shell.type([
                "\(shell.snoozefuse) nap --release 1s --nap 3s --ring-limit 2 --device null --events jsonl > \(shell.events) &\\n",
                "sleep:1.5", "\(shell.snoozefuse) status\\n", "jobs -l\\n", "sleep:5", "jobs -l\\n",
            ])
        }
        #expect(!shown.contains("Stopped"), "\(shown)")
        #expect(shown.contains("snoozefuse: in the background: no key of this terminal holds the nap, so its release starts now"), "\(shown)")
        #expect(shown.contains("releasing: the nap starts in") || shown.contains("napping: alarm in"), "status saw the nap: \(shown)")
        #expect(shown.contains("Running"), "\(shown)")
        #expect(shown.contains("Done"), "\(shown)")
        #expect(shell.phases() == ["releasing", "napping", "ringing", "finished"], "\(shell.records())")
        #expect(shell.records().contains { $0["event"] as? String == "terminal" && $0["what"] as? String == "background" })
        #expect(shell.records().last?["outcome"] as? String == "ring_limit")
    }

    /// Ctrl-Z in the nap's terminal: the nap says it does not pause, goes on, and rings.
    @Test func ctrlZDoesNotStopTheNap() async throws {
        let shell = try JobShell()
        let shown = try await onOwnThread {
            try shell.type([
                "\(shell.snoozefuse) nap --no-hold --release 1s --nap 3s --ring-limit 2 --device null --dismiss key --quiet --events jsonl > \(shell.events)\\n",
                "sleep:1.5", "^Z", "sleep:1", "^Z", "until:$ ", "jobs -l\\n",
            ])
        }
        #expect(!shown.contains("Stopped"), "\(shown)")
        #expect(shown.contains("Ctrl-Z does not pause a nap (its alarm would not ring): it goes on"), "\(shown)")
        #expect(shell.phases() == ["releasing", "napping", "ringing", "finished"], "\(shell.records())")
        #expect(shell.records().filter { $0["what"] as? String == "suspend_refused" }.count == 2)
        #expect(shell.records().last?["outcome"] as? String == "ring_limit")
    }

    /// Started with `&`, stopped (SIGSTOP), sent on with `bg`, brought back with `fg`: the keys of
    /// the terminal work again (Enter stops the ringing alarm), and the nap was never silenced.
    @Test func stoppedSentOnAndBroughtBackItsKeysWorkAgain() async throws {
        let shell = try JobShell()
        let shown = try await onOwnThread {
            try shell.type([
                "\(shell.snoozefuse) nap --no-hold --release 1s --nap 2s --device null --dismiss key --quiet --events jsonl > \(shell.events) &\\n",
                "sleep:0.5", "kill -STOP %1\\n",
                // The shell learns of the stop when it next reaps a child: wait (at most 10 s)
                // until its job table says so, or `bg` finds the job "already in background".
                "for i in $(seq 100); do case \"$(jobs -l %1)\" in *Stopped*) break;; esac; sleep 0.1; done; jobs -l\\n",
                // A nap that was stopped during its set-up finishes it after `bg`: `fg` comes once
                // it has said it is in the background.
                "until:Stopped (signal)", "bg\\n", "seen:snoozefuse: in the background", "sleep:0.5", "fg\\n",
                "until:Enter stops the alarm", "sleep:2.5", "\\n", "until:$ ", "jobs -l\\n",
            ])
        }
        #expect(shown.contains("Stopped (signal)"), "the shell saw the stop: \(shown)")
        #expect(shown.contains("in the foreground again: this terminal's keys work"), "\(shown)")
        #expect(shell.phases() == ["releasing", "napping", "ringing", "finished"], "\(shell.records())")
        #expect(shell.records().last?["outcome"] as? String == "dismissed", "Enter stopped it: \(shell.records())")
    }

    /// SIGCONTs while the nap waits in the background (a guardian's, a script's `kill -CONT`):
    /// libdispatch's handler for SIGCONT runs on whichever thread takes it and interrupts its wait.
    /// The nap still finds `fg` afterwards, and Enter stops its alarm.
    @Test func continuedInTheBackgroundItStillFindsTheForeground() async throws {
        let shell = try JobShell()
        var steps = [
            "\(shell.snoozefuse) nap --no-hold --release 1s --nap 12s --ring-limit 60 --device null --dismiss key --quiet --events jsonl > \(shell.events) &\\n",
            "seen:snoozefuse: in the background", "sleep:0.5",
        ]
        // Each line typed wakes the nap's wait in the background; the SIGCONTs come while it rests.
        for _ in 0 ..< 5 { steps += ["for i in $(seq 20); do kill -STOP %1; kill -CONT %1; sleep 0.03; done\\n", "sleep:1.1"] }
        steps += ["fg\\n", "until:in the foreground again", "until:Enter stops the alarm", "sleep:0.5", "\\n", "until:$ ", "jobs -l\\n"]
        let typed = steps
        let shown = try await onOwnThread { try shell.type(typed) }
        #expect(shown.contains("in the foreground again: this terminal's keys work"), "\(shown)")
        #expect(shell.phases() == ["releasing", "napping", "ringing", "finished"], "\(shell.records())")
        #expect(shell.records().last?["outcome"] as? String == "dismissed", "Enter stopped it: \(shell.records())")
    }

    /// SIGSTOP before the alarm is due: `status` says the nap is stopped, then late once the alarm is
    /// due, never "alarm in 0s"; its guardian wakes it a second after the alarm was due, and it rings.
    @Test func aNapStoppedBeforeItsAlarmIsWokenByItsGuardianAndRings() async throws {
        let home = try NapHome()
        let capture = home.folder.path("ring.wav")
        let said = try await onOwnThread {
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "2", "--fade-in", "0", "--ring-limit", "2",
                                       "--device", "file:FILE=\(capture),FORMAT=wav", "--events", "jsonl", "--quiet"])
            #expect(waitFor { home.lines(home.folder.path("events.jsonl")).contains { $0["phase"] as? String == "napping" } })
            // The guardian has read the nap's due line once it holds its lock.
            #expect(waitFor { home.status() == "running" })
            usleep(500_000)
            let said = try home.stoppedThenLateThenWoken(nap: nap.pid)
            nap.wait()
            return said
        }
        let records = home.lines(home.folder.path("events.jsonl")), guardian = home.lines(home.guardianLog)
        #expect(said.first?.hasPrefix("stopped (Ctrl-Z or SIGSTOP)") == true, "\(said)")
        #expect(said.contains { $0.hasPrefix("late: the alarm was due") }, "\(said)")
        #expect(said.last?.hasPrefix("ringing") == true, "\(said)")
        #expect(!said.contains { $0.contains("alarm in 0s") }, "\(said)")
        #expect(guardian.contains { ($0["message"] as? String)?.contains("had not rung 1 s after its alarm was due") == true }, "\(guardian)")
        #expect(records.contains { $0["event"] as? String == "alarm" }, "\(records)")
        #expect(records.last?["outcome"] as? String == "ring_limit", "\(records)")
        #expect(rms(try wavContents(capture).samples) > 0.05, "the alarm was written")
    }

    /// A nap that SIGCONT does not move (held in a ptrace stop, as a frozen or stuck one is): a
    /// second after waking it its guardian ends it, takes its alarm over and rings it.
    @Test func aNapThatStaysStuckIsEndedAndItsGuardianRings() async throws {
        let home = try NapHome()
        let script = home.folder.path("hold.py")
        try freezer.write(toFile: script, atomically: true, encoding: .utf8)
        let capture = home.folder.path("ring.wav")
        let status = try await onOwnThread {
            let nap = try home.launch(["nap", "--no-hold", "--release", "0", "--nap", "2", "--fade-in", "0", "--ring-limit", "3",
                                       "--device", "file:FILE=\(capture),FORMAT=wav", "--events", "jsonl", "--quiet"])
            #expect(waitFor { home.status() == "running" })
            let holder = try BackgroundProcess(URL(fileURLWithPath: "/usr/bin/python3"), [script, "\(nap.pid)", "10"], environment: home.environment,
                                               standardOutput: home.folder.path("held.out"), standardError: home.folder.path("held.err"))
            #expect(waitFor(.seconds(5)) { (try? String(contentsOfFile: home.folder.path("held.out"), encoding: .utf8))?.contains("held") == true },
                    "\((try? String(contentsOfFile: home.folder.path("held.err"), encoding: .utf8)) ?? "")")
            // Due at 2 s: woken at 3 s, ended at 4 s, rung by its guardian then.
            #expect(waitFor(.seconds(15)) { home.status() == "guarded" })
            let status = try home.run(["status"]).standardOutput
            #expect(waitFor(.seconds(15)) { home.status() == "none" })
            holder.signal(SIGKILL)
            holder.wait()
            return status
        }
        let guardian = home.lines(home.guardianLog)
        let messages = guardian.compactMap { $0["message"] as? String }
        #expect(messages.contains { $0.contains("had not rung 1 s after its alarm was due") }, "\(messages)")
        #expect(messages.contains { $0.contains("still had not rung 1 s after it was woken: ended with SIGKILL") }, "\(messages)")
        #expect(guardian.contains { $0["event"] as? String == "alarm" }, "the guardian rang: \(guardian)")
        #expect(status.contains("guarded"), "\(status)")
        #expect(rms(try wavContents(capture).samples) > 0.05, "the alarm was written")
    }
}

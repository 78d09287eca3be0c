import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

/// `snoozefuse status`: where the nap stands, from its live state (never a partial one).
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running nap: its phase, the time left and when the alarm rings.",
        discussion: """
        States: no nap; running (phase, remaining time, wake-at time); ringing; snoozed; guarded \
        (the nap's process died and its guardian holds the alarm); interrupted (nobody holds the \
        alarm, after a reboot: `snoozefuse resume` rings it); damaged (the live state is not \
        whole and no good copy is left); unreadable (another user's nap, or permissions changed: \
        it says whose). Exit 0.

        --follow prints a line whenever the state changes, and at most one per displayed second. \
        --format waybar prints one JSON object per line with text, tooltip, class and percentage, \
        for a status bar: "exec": "snoozefuse status --follow --format waybar".
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, waybar }

    @Flag(help: "Keep printing: a line per change, at most one per displayed second.")
    var follow = false

    @Option(help: ArgumentHelp("text, json (the state and the live file), or waybar.", valueName: "format"))
    var format: Format = .text

    @Flag(help: "The same as --format json.")
    var json = false

    func run() throws {
        let format = json ? .json : format
        // Read once, by the runtime (not Foundation's ProcessInfo: 0.4 M instructions; issue 23).
        let environment = NapStatus.currentEnvironment()
        writePendingHistory(environment: environment)
        guard follow else {
            writeLine(render(NapStatus.read(environment: environment), format), to: STDOUT_FILENO)
            return
        }
        var last: String?
        NapStatus.follow(environment: environment) { status in
            let line = render(status, format)
            if line != last {
                last = line
                writeLine(line, to: STDOUT_FILENO)
            }
            return true
        }
    }

    func render(_ status: NapStatus, _ format: Format) -> String {
        switch format {
        case .text: return Self.text(status)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(status)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        case .waybar:
            struct Waybar: Encodable {
                var text: String
                var tooltip: String
                var `class`: String
                var percentage: Int
            }
            let short: String = switch status.status {
            case .none: ""
            case .ringing: "⏰ ring"
            case .interrupted, .damaged, .unreadable: "⚠ nap"
            default: "💤 \(status.remainingText ?? "")"
            }
            let waybar = Waybar(text: short, tooltip: Self.text(status),
                                class: status.status == .running ? status.phase?.rawValue ?? "running" : status.status.rawValue,
                                percentage: status.percentage ?? 0)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return (try? encoder.encode(waybar)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }

    static func text(_ status: NapStatus) -> String {
        let text = plainText(status)
        guard status.unguarded == true else { return text }
        return text + "; unguarded: no guardian watches the nap now: if its process died now, nothing would ring the alarm (`snoozefuse doctor` checks the guardian)"
    }

    private static func plainText(_ status: NapStatus) -> String {
        let alarm = status.alarmAtLocal.map { " at \($0)" } ?? ""
        let remaining = status.remainingText ?? ""
        switch status.status {
        case .none:
            return "no nap"
        case .interrupted:
            return (status.damage.map { "\($0); from the copy of its last good state: " } ?? "")
                + "interrupted: nobody holds the alarm that was due\(alarm) (`snoozefuse resume` rings it, `snoozefuse stop` forgets it)"
        case .unreadable:
            return "unreadable: \(status.damage ?? "the live state cannot be read")"
        case .damaged:
            return "damaged: \(status.damage ?? "the live state cannot be read") and no good copy of it is left (`snoozefuse stop` or the next nap moves it aside and records the nap as interrupted)"
        case .guarded:
            let guardian = "guarded: the nap's process died; its guardian (pid \(status.pid ?? 0))"
            switch status.phase {
            case .ringing?: return "\(guardian) rings the alarm now (`snoozefuse stop` stops it, `snoozefuse snooze` snoozes it)"
            case .snoozed?: return "\(guardian) holds the snoozed alarm: it rings again in \(status.remainingText ?? "")\(alarm)"
            default: return "\(guardian) rings the alarm\(alarm)"
            }
        case .ringing:
            return "ringing (`snoozefuse stop` stops it, `snoozefuse snooze` snoozes it)"
        case .snoozed:
            return "snoozed: the alarm rings again in \(remaining)\(alarm)"
        case .running:
            let latest = status.latestLocal.map { " (latest \($0))" } ?? ""
            let pid = status.pid.map(String.init) ?? "?"
            if let late = status.lateSeconds {
                let why = status.stopped == true ? "its process is stopped (Ctrl-Z or SIGSTOP)" : "its process is frozen or stuck"
                return "late: the alarm was due \(late) s ago\(alarm) and has not rung: "
                    + "\(why); its guardian wakes it (SIGCONT) and, if it still does not ring, ends it and rings the alarm itself"
            }
            if status.stopped == true {
                return "stopped (Ctrl-Z or SIGSTOP): the nap (pid \(pid)) does nothing until `fg` or `kill -CONT \(pid)`; its guardian "
                    + "wakes it 1 s after the alarm is due\(alarm)"
            }
            switch status.phase {
            case .ready?:
                // A time named (`--until`) rings even if no hold ever comes.
                return "ready: waiting for the first hold" + (alarm.isEmpty ? "" : "; it rings\(alarm) all the same")
            case .holding?:
                guard status.hold == "desktop" else { return "holding: let go when you are drifting off\(latest)" }
                let idle = status.idleAfterSeconds.map { Duration.milliseconds(Int64($0 * 1000)).compactDescription } ?? "--idle-after"
                return "holding (desktop): the machine is in use; the release starts after \(idle) without input\(latest)"
            case .releasing?:
                let by = status.hold == "desktop" ? " (desktop: any input starts it over)" : ""
                return "releasing: the nap starts in \(remaining)\(by); wake\(alarm)\(latest)"
            case .napping?: return "napping: alarm in \(remaining)\(alarm)\(latest)"
            default: return status.phase?.rawValue ?? "running"
            }
        }
    }
}

/// Writes the naps that ended while the history could not be written (a busy database); says so
/// when some still wait.
func writePendingHistory(environment: [String: String]? = nil) {
    if let waiting = PendingHistory.flush(environment: environment) { writeLine("snoozefuse: warning: \(waiting)", to: STDERR_FILENO) }
}

/// One command to the running nap, or its guardian, through its control socket; `environment`
/// (HOME and the XDG folders) says where they are.
@discardableResult
func sendToNap(_ request: ControlRequest, environment: [String: String] = NapStatus.currentEnvironment()) throws -> ControlReply {
    let reply: ControlReply
    do {
        reply = try NapControl.send(request, environment: environment)
    } catch {
        if case .noNap = error, request.command == .stop,
           [.interrupted, .damaged].contains(NapStatus.read(environment: environment).status) {
            // Nobody holds an interrupted nap: stopping it means forgetting it (the history keeps it).
            let (restored, warning) = NapStatus.forgetInterrupted(environment: environment)
            for line in restored { writeLine("snoozefuse: \(line)", to: STDERR_FILENO) }
            if let warning { writeLine("snoozefuse: warning: \(warning)", to: STDERR_FILENO) }
            writeLine("snoozefuse: the interrupted nap is forgotten (`snoozefuse history` lists it as interrupted).", to: STDERR_FILENO)
            return ControlReply(ok: true, message: "forgotten", state: nil)
        }
        writeLine("snoozefuse: \(error)", to: STDERR_FILENO)
        throw ExitStatus.unavailable
    }
    if reply.needs == nil { writeLine("snoozefuse: \(reply.message)", to: STDERR_FILENO) }
    if request.withState == true, reply.needs == nil { writeLine(reply.jsonLine, to: STDOUT_FILENO) }
    // Not done (nothing to snooze, an alarm that did not move, a wrong answer): said, and exit 1.
    guard reply.ok || reply.needs != nil else { throw ExitStatus.cancelled }
    return reply
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the running nap from another terminal: a ringing alarm is dismissed, a nap that has not rung is cancelled.",
        discussion: """
        Stopping asks what the nap's own terminal asks (`nap --dismiss`): to stop a ringing or \
        snoozed alarm, type the word it shows (word, the default) or hold a key for 3 s (hold); \
        with --dismiss key it stops at once. Cancelling a nap before its alarm asks for a \
        confirmation (y), or takes --yes. Without a terminal, only --dismiss key alarms and \
        --yes cancels can be stopped.

        Reaches the nap, or its guardian, through its control socket (your user only); waits up \
        to 5 s for a guardian taking the nap over (1 s for a nap starting). Exit 0 when \
        stopped, 1 when the answer was wrong or not given, 69 when no nap runs or it did not \
        listen.
        """)

    @Flag(name: [.customShort("y"), .long], help: "Cancel a nap that has not rung without asking.")
    var yes = false

    @Flag(help: "Also print the answer as one JSON object on standard output: ok and message (the nap ends with it: no state).")
    var json = false

    func run() throws {
        let environment = NapStatus.currentEnvironment()
        writePendingHistory(environment: environment)
        var request = ControlRequest(.stop, confirmed: yes ? true : nil, withState: json ? true : nil)
        var reply = try sendToNap(request, environment: environment)
        guard let needs = reply.needs else { return }
        let terminal = isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
        switch needs {
        case .confirmation:
            guard terminal else {
                writeLine("snoozefuse: \(reply.message); add --yes to cancel it.", to: STDERR_FILENO)
                throw ExitStatus.cancelled
            }
            write("snoozefuse: cancel the nap? Its alarm will not ring. [y/N] ", to: STDERR_FILENO)
            guard let answer = readLine(), answer.lowercased().hasPrefix("y") else {
                writeLine("snoozefuse: the nap goes on.", to: STDERR_FILENO)
                throw ExitStatus.cancelled
            }
            request.confirmed = true
        case .word:
            guard terminal, let word = reply.word else {
                writeLine("snoozefuse: \(reply.message) on a terminal: run `snoozefuse stop` on one (naps started with --dismiss key stop without it).", to: STDERR_FILENO)
                throw ExitStatus.cancelled
            }
            write("snoozefuse: type \(word) then Enter to stop the alarm: ", to: STDERR_FILENO)
            request.answer = readLine()?.trimmingCharacters(in: .whitespaces) ?? ""
        case .hold:
            guard terminal, let keys = TerminalKeyReader(fileDescriptor: STDIN_FILENO) else {
                writeLine("snoozefuse: \(reply.message) on a terminal: run `snoozefuse stop` on one.", to: STDERR_FILENO)
                throw ExitStatus.cancelled
            }
            writeLine("snoozefuse: hold any key for 3 s to stop the alarm…", to: STDERR_FILENO)
            request.answer = keys.waitForHold(limit: .seconds(15)) ? "held" : nil
        }
        reply = try sendToNap(request, environment: environment)
        if reply.needs != nil {
            writeLine("snoozefuse: \(reply.message); the alarm goes on.", to: STDERR_FILENO)
            throw ExitStatus.cancelled
        }
    }
}

struct Snooze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snooze", abstract: "Snooze the ringing alarm of the running nap (default: its snooze length).",
        discussion: """
        Answers once the nap has snoozed (a `status` right after shows it). Exit 0 when snoozed; \
        1 when there was nothing to snooze (the alarm is not ringing); 69 when no nap runs.
        """)

    @Argument(help: ArgumentHelp("How long (\(DurationParser.acceptedForms)).", valueName: "duration"), transform: parseDurationOption)
    var duration: Duration?

    @Flag(help: "Also print the answer as one JSON object on standard output: ok, message, and the nap's state after the change.")
    var json = false

    func run() throws { try sendToNap(ControlRequest(.snooze, seconds: duration?.secondsValue, withState: json ? true : nil)) }
}

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Move the alarm of the running nap by a duration (negative to ring sooner, never within 10 s).",
        discussion: """
        Examples: snoozefuse add 5m; snoozefuse add -2m (or add -- -2m). Answers once the nap has \
        moved its alarm (a `status` right after shows it). Exit 0 when moved; 1 when the alarm \
        did not move (not napping or snoozed, or already as near or as far as it may be); 69 when \
        no nap runs.
        """)

    /// The duration: `-5m` is one here, not an option (``Add/negativeDurationsAsValues(_:)``).
    @Argument(help: ArgumentHelp("How much (\(DurationParser.acceptedForms)); negative: sooner.", valueName: "duration"))
    var duration: String

    @Flag(help: "Also print the answer as one JSON object on standard output: ok, message, and the nap's state after the change.")
    var json = false

    func validate() throws {
        _ = try signedDuration()
    }

    /// `add -5m` as `add -- -5m`: after `add`, an argument that is a minus sign and a digit is the
    /// duration, not an option (ArgumentParser took it for an unknown option and asked for the
    /// duration it had been given). Everything else as it is.
    static func negativeDurationsAsValues(_ arguments: [String]) -> [String] {
        guard arguments.first == configuration.commandName, !arguments.contains("--"),
              let at = arguments.firstIndex(where: { $0.count > 1 && $0.hasPrefix("-") && $0.dropFirst().first?.isNumber == true }) else {
            return arguments
        }
        // The options stay before `--` (`add -5m --json`), the duration after it.
        var arguments = arguments
        let duration = arguments.remove(at: at)
        return arguments + ["--", duration]
    }

    func signedDuration() throws -> Duration {
        let negative = duration.hasPrefix("-")
        let magnitude = try parseDurationOption(negative ? String(duration.dropFirst()) : duration)
        return negative ? .zero - magnitude : magnitude
    }

    func run() throws {
        try sendToNap(ControlRequest(.add, seconds: try signedDuration().secondsValue, withState: json ? true : nil))
    }
}

/// `snoozefuse resume`: rings an interrupted nap (after a reboot) at its original deadline.
struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Ring an interrupted nap's alarm at its original time (run at login by a systemd user unit).",
        discussion: """
        When no nap process and no guardian holds a nap's alarm (after a reboot, or both killed), \
        resume takes it up: it rings at its original wall-clock time, at once when that has passed \
        by at most --max-late, and otherwise reports the alarm as missed and does not ring. \
        With --if-interrupted it does nothing, silently, when there is nothing to resume.
        """)

    @Option(name: .customLong("max-late"), help: ArgumentHelp("Ring an alarm that passed at most this long ago.", valueName: "duration"), transform: parseDurationOption)
    var maxLate: Duration = .seconds(30 * 60)

    @Flag(name: .customLong("if-interrupted"), help: "Do nothing, silently, when no nap is interrupted.")
    var ifInterrupted = false

    @Option(help: ArgumentHelp("Write machine-readable events to standard output: jsonl.", valueName: "format"))
    var events: EventFormat?
}

extension Resume: LoopCommand {
    func run(on loop: EventLoop) async throws {
        let status = NapStatus.read()
        if status.status == .damaged || status.status == .unreadable {
            writeLine("snoozefuse: cannot resume: \(Status.text(status)).", to: STDERR_FILENO)
            throw ExitStatus.badConfig
        }
        guard status.status == .interrupted, let live = status.state else {
            if ifInterrupted { return }
            writeLine("snoozefuse: nothing to resume: \(Status.text(status)).", to: STDERR_FILENO)
            if status.status != .none { throw ExitStatus.anotherNap }
            return
        }
        let result: LiveNap.TakeOverResult
        do throws(NapSetupError) {
            result = try LiveNap.takeOver(live, as: .resume, maxLate: maxLate, loop: loop) {
                writeLine("snoozefuse: \($0)", to: STDERR_FILENO)
            }
        } catch {
            throw ExitStatus.reporting(error)
        }
        switch result {
        case .nothing:
            if !ifInterrupted { writeLine("snoozefuse: nothing to resume: the interrupted nap had not started.", to: STDERR_FILENO) }
        case .missed(let due, let late):
            writeLine("snoozefuse: missed: the alarm was due at \(due), \(late.compactDescription) ago (more than --max-late \(maxLate.compactDescription)); it is not rung.", to: STDERR_FILENO)
        case .ringing(let nap):
            let terminal = TerminalStyle.detect()
            let console = Console(jsonLines: events == .jsonl, quiet: false, terminal: terminal,
                                  timers: live.setup.timers, presetName: live.setup.presetName,
                                  dismissal: live.setup.dismissal ?? .word, keysOnTerminal: isatty(STDIN_FILENO) == 1)
            writeLine("snoozefuse: resuming the interrupted nap: its alarm rings at \(status.alarmAtLocal ?? "once")", to: STDERR_FILENO)
            async let result = nap.run()
            for await record in nap.records { console.render(record) }
            let ended = await result
            console.finish(outcome: ended.outcome)
            throw ExitStatus.forOutcome(ended.outcome, interrupted: ended.interrupted)
        }
    }
}

/// The guardian of a nap: started by `nap` itself, in a session of its own (see `Guardian`).
struct GuardianCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "guardian", shouldDisplay: false)

    @Option(help: "The nap's process.")
    var nap: Int32

    @Option(name: .customLong("watcher-lock"), help: "Where snoozefuse-guardian kept the guardian's lock across its exec.")
    var watcherLock: Int32?
}

extension GuardianCommand: LoopCommand {
    func run(on loop: EventLoop) async throws {
        throw ExitCode(await Guardian.run(napPid: nap, watcherLock: watcherLock, loop: loop))
    }
}

import SnoozeFuseCore
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One named check of `plugins check` and its verdict.
public struct PluginCheckResult: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `file`, `load`, `id`, or a ``PluginCheckName``.
    public var name: String
    public var verdict: PluginCheckVerdict
    /// One line: what passed, or what went wrong, where, and what to do.
    public var summary: String
    /// What the check found on the way.
    public var details: [String]

    public init(name: String, verdict: PluginCheckVerdict, summary: String, details: [String] = []) {
        self.name = name
        self.verdict = verdict
        self.summary = summary
        self.details = details
    }

    /// `ok       load: …` (`PROBLEM`, `skipped`, `warning`), then the details, indented.
    public var description: String {
        let tag = switch verdict {
        case .pass: "ok     "
        case .fail: "PROBLEM"
        case .skip: "skipped"
        case .warning: "warning"
        }
        return (["\(tag)  \(name): \(summary)"] + details.map { "           \($0)" }).joined(separator: "\n")
    }
}

/// Everything `plugins check` found about one file, like clap-validator's report: every check with
/// its verdict, and the counts.
public struct PluginCheckReport: Sendable, Hashable, Codable {
    public var path: String
    public var checks: [PluginCheckResult]

    public init(path: String, checks: [PluginCheckResult]) {
        self.path = path
        self.checks = checks
    }

    public func count(_ verdict: PluginCheckVerdict) -> Int { checks.filter { $0.verdict == verdict }.count }
    /// Whether no check failed (skips and warnings do not fail).
    public var passed: Bool { count(.fail) == 0 }
    /// Whether every check ran and none failed (warnings do not fail).
    public var complete: Bool { passed && count(.skip) == 0 }

    /// For `--json`: the report plus its counts, keys sorted.
    public struct JSON: Encodable {
        var path: String
        var checks: [PluginCheckResult]
        var passed: Int, failed: Int, skipped: Int, warnings: Int
    }

    public var json: JSON {
        JSON(path: path, checks: checks, passed: count(.pass), failed: count(.fail), skipped: count(.skip), warnings: count(.warning))
    }
}

/// The parent's side of `plugins check`: each check that runs plugin code runs in a child of the
/// plugin host program of its own, in a process group of its own that dies with this process. The
/// child names each step as it begins (load 2 s, create and activate 1 s, 10 s of audio 1 s, each
/// emit 1 s); a step that overruns gets the child's whole group killed and fails its check, and so
/// does any end of the child before its verdict, whatever its status (a plugin that calls
/// `exit(0)` in activate fails `source-create`). When the command returns, none of its children
/// is left.
///
/// The time at which a step is killed is its limit on the boot clock plus what the child's busiest
/// thread spent waiting for a CPU (``CPUWait``; each thread against itself at the step's start),
/// up to ``busyMachineAllowance`` times the limit: a machine busy with other work does not fail a
/// plugin, a render that sleeps, blocks or spins is killed at its limit. (A plugin whose own
/// threads keep its render thread waiting can earn itself that allowance, no more.)
public enum PluginValidation {
    /// How long the host program may take to start before the first step (its own start-up).
    public static let startLimit = Duration.seconds(10)
    /// Room for the child to report its own measurement before the parent's limit kills it.
    static let grace = Duration.milliseconds(250)
    /// How many times its limit a step may last on the boot clock when the child waited for a CPU.
    static let busyMachineAllowance = 8

    /// Every check of the plugin at `path` (absolute) with `config`, run by the host program at `host`.
    public static func run(path: String, config: String, host: String) -> PluginCheckReport {
        var checks: [PluginCheckResult] = []
        do {
            try PluginPermissions.check(path: path)
            checks.append(PluginCheckResult(name: "file", verdict: .pass,
                                            summary: "a regular file; it and every folder up to / belong to you or root and only they may write them"))
        } catch {
            checks.append(PluginCheckResult(name: "file", verdict: .fail, summary: error.reasonText))
            return PluginCheckReport(path: path, checks: checks)
        }
        let (load, info) = runChild(.load, path: path, config: config, host: host)
        checks.append(load)
        guard let info, load.verdict == .pass else { return PluginCheckReport(path: path, checks: checks) }
        checks.append(idCheck(info))
        if info.kinds.contains(.soundSource) {
            let (created, _) = runChild(.sourceCreate, path: path, config: config, host: host)
            checks.append(created)
            for name in [PluginCheckName.sourceRenderStereo, .sourceRenderMono, .sourceRealtime] {
                if created.verdict == .pass {
                    checks.append(runChild(name, path: path, config: config, host: host).0)
                } else {
                    checks.append(PluginCheckResult(name: name.rawValue, verdict: .skip, summary: "not run: \(PluginCheckName.sourceCreate.rawValue) did not pass"))
                }
            }
        }
        if info.kinds.contains(.pulseEmitter) {
            let (created, _) = runChild(.emitterCreate, path: path, config: config, host: host)
            checks.append(created)
            if created.verdict == .pass {
                checks.append(runChild(.emitterEmit, path: path, config: config, host: host).0)
            } else {
                checks.append(PluginCheckResult(name: PluginCheckName.emitterEmit.rawValue, verdict: .skip,
                                                summary: "not run: \(PluginCheckName.emitterCreate.rawValue) did not pass"))
            }
        }
        return PluginCheckReport(path: path, checks: checks)
    }

    /// Whether the id may be used where the file is: the reserved prefix only in the folders of the
    /// plugins installed with snoozefuse (elsewhere such a plugin is refused: a warning here, since
    /// the file itself may be fine).
    static func idCheck(_ info: PluginInfo) -> PluginCheckResult {
        guard info.usesReservedPrefix else {
            return PluginCheckResult(name: "id", verdict: .pass, summary: "\(info.id) is reverse-DNS and outside the reserved prefix \(PluginInfo.reservedPrefix)")
        }
        let installed = PluginSearchPath.standard(environment: [:], executablePath: PluginSearchPath.currentExecutable())
            .filter { $0.origin == .installPrefix || $0.origin == .buildFolder }
        func resolved(_ path: String) -> String {
            realpath(path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? path
        }
        let folder = resolved(PluginSearchPath.parent(of: info.path))
        let name = PluginSearchPath.lastComponent(of: info.path)
        if installed.contains(where: { resolved($0.folder) == folder && name.hasPrefix($0.namePrefix) }) {
            return PluginCheckResult(name: "id", verdict: .pass, summary: "\(info.id) is one of the plugins installed with snoozefuse")
        }
        // As the runtime judges it: refused outside the plugins installed with snoozefuse.
        return PluginCheckResult(name: "id", verdict: .fail,
                                 summary: PluginError(path: info.path, reason: .reservedID(info.id)).reasonText
                                     + " (anywhere but the plugins installed with snoozefuse), so a nap refuses it")
    }

    /// Runs one check in a child and judges how it went; the child and its group are gone after.
    static func runChild(_ name: PluginCheckName, path: String, config: String, host: String) -> (PluginCheckResult, PluginInfo?) {
        func result(_ verdict: PluginCheckVerdict, _ summary: String, _ details: [String]) -> (PluginCheckResult, PluginInfo?) {
            (PluginCheckResult(name: name.rawValue, verdict: verdict, summary: summary, details: details), nil)
        }
        guard let ends = makePipe() else {
            return result(.fail, "cannot create a pipe for the checking process: \(String(cString: strerror(errno)))", [])
        }
        // Its standard error is read into the check's details, never passed to the terminal.
        let errors = makePipe()
        let child: ChildProcessGroup
        do throws(SpawnError) {
            // `plugins check` runs one checking child at a time and has no other: every child it
            // adopted came from the plugin, even one that emptied its environment.
            child = try ChildProcessGroup(host, PluginHostProgram.checkArguments(check: name, path: path, config: config),
                                          descriptors: [0: .devNull, 1: .inherit(ends.write), 2: errors.map { .inherit($0.write) } ?? .devNull],
                                          environment: PluginHostProgram.childEnvironment, leftovers: .everyChild)
        } catch {
            for end in [ends.read, ends.write, errors?.read ?? -1, errors?.write ?? -1] where end >= 0 { close(end) }
            return result(.fail, error.description, [])
        }
        close(ends.write)
        defer { close(ends.read) }
        let errorOutput = PluginErrorOutput()
        let excerpt = PluginErrorExcerpt.Result()
        if let errors {
            close(errors.write)
            _ = errorOutput.start(reading: errors.read, into: PluginErrorExcerpt(into: excerpt))
        }
        var (judged, info) = judge(name, child: child, output: ends.read, host: host)
        // Whatever the plugin detached from the checking process (a double fork, setsid) was ended
        // with it: a plugin must take every process it starts with it.
        _ = child.waitForEnd(atMost: .seconds(5)) ?? child.terminate()
        errorOutput.childEnded()
        if errors != nil, errorOutput.waitUntilRead(deadline: BootInstant.now.advanced(by: .seconds(1))) {
            judged.details += excerpt.summary.withLock { $0.details }
        }
        let left = child.leftBehind
        if !left.isEmpty {
            let what = "it left \(left.count) process\(left.count == 1 ? "" : "es") behind when the instance ended (\(left.map(\.description).joined(separator: "; ")); \(left.count == 1 ? "it was" : "they were") killed): a plugin must end every process it starts"
            judged.summary = judged.verdict == .fail ? judged.summary + "; " + what : what
            judged.verdict = .fail
            info = nil
        }
        return (judged, info)
    }

    /// Reads the checking child's messages and judges how it went; the child has ended after.
    private static func judge(_ name: PluginCheckName, child: ChildProcessGroup, output: Int32, host: String) -> (PluginCheckResult, PluginInfo?) {
        func result(_ verdict: PluginCheckVerdict, _ summary: String, _ details: [String]) -> (PluginCheckResult, PluginInfo?) {
            (PluginCheckResult(name: name.rawValue, verdict: verdict, summary: summary, details: details), nil)
        }
        var reader = LineReader(descriptor: output)
        var phase: PluginCheckPhase?
        // The step's start, its limit, the room the child gets to report its own measurement, and
        // what each of the child's threads had waited for a CPU then.
        var step = (started: BootInstant.now, limit: startLimit, grace: Duration.zero, waits: CPUWait.threads(of: child.pid) ?? [:])
        var deadline = step.started.advanced(by: step.limit)
        var details: [String] = []
        var rendered = 0
        while true {
            switch reader.next(until: deadline) {
            case .line(let text):
                guard let message = try? JSONValueDecoder().decode(PluginCheckMessage.self, from: text) else {
                    details.append("the checking process wrote: \(text.prefix(200))")
                    continue
                }
                if let next = message.phase {
                    phase = next
                    // A step the child times itself (render, emit) gets room to say so before it is killed.
                    step = (.now, next.limit, next == .render || next == .emit ? grace : .zero, CPUWait.threads(of: child.pid) ?? [:])
                    deadline = step.started.advanced(by: step.limit + step.grace)
                }
                if let note = message.note { details.append(note) }
                if let frames = message.rendered { rendered = frames }
                guard let verdict = message.verdict else { continue }
                // The verdict is the last word: the child ends by itself (its plugin's destructors run).
                let status = child.waitForEnd(atMost: .seconds(2)) ?? child.terminate()
                if let status, status != 0 {
                    return result(.fail, "\(message.summary ?? verdict.rawValue); then the checking process ended badly: \(ProcessSpawn.describe(status)) (the plugin's destructors?)", details)
                }
                return (PluginCheckResult(name: name.rawValue, verdict: verdict, summary: message.summary ?? "", details: details), message.info)
            case .timedOut:
                // The time the child waited for a CPU is not counted (up to the allowance).
                let waited = CPUWait.longestWait(of: child.pid, since: step.waits)
                let extended = min(step.started.advanced(by: step.limit + step.grace + waited),
                                   step.started.advanced(by: step.limit * busyMachineAllowance + step.grace))
                if extended > deadline, extended > .now {
                    deadline = extended
                    continue
                }
                child.terminate()
                guard let phase else {
                    return result(.fail, "the plugin host program \(host) did not start within \(startLimit.components.seconds) s", details)
                }
                let limit = phase.limit.components.seconds * 1000
                let summary = switch phase {
                case .load:
                    "loading it did not finish within \(limit) ms (killed): its constructors or snoozefuse_plugin_entry hang"
                case .create:
                    "creating or activating the instance did not return within \(limit) ms (killed): it hangs"
                case .render:
                    "\(name == .sourceRealtime ? PluginCheck.watchedSeconds : PluginCheck.renderSeconds) s of audio were not rendered within \(limit) ms (killed after \(rendered) frames): render blocks, sleeps or loops"
                case .emit:
                    "emit, cancel or destroy did not return within \(limit) ms (killed)"
                }
                return result(.fail, summary, details)
            case .end:
                let status = child.waitForEnd(atMost: .seconds(2)) ?? child.terminate()
                let how = status.map(ProcessSpawn.describe) ?? "it closed its output but did not end"
                let during = phase.map { "while \($0.activity)" } ?? "before the first step"
                let crashed = status.map { $0 & 0x7f != 0 } ?? false
                return result(.fail, crashed ? "the plugin crashed the checking process: \(how) \(during)"
                                             : "the checking process ended \(during): \(how); a plugin must never end its host's process", details)
            }
        }
    }
}

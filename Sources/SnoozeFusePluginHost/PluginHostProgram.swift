public import Logging
import SnoozeFuseCore
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The plugin host program, `snoozefuse-plugin-host`: the only process that loads a plugin. A nap
/// runs each plugin instance in a child running it (`serve`), and `plugins check` validates a
/// plugin file in one (`check`). It is installed in `PREFIX/lib/snoozefuse/` and sits next to
/// `snoozefuse` in a build folder.
///
/// A plugin's configuration reaches it as data, after `--`, never as an option of its own.
public enum PluginHostProgram {
    public static let name = "snoozefuse-plugin-host"

    /// The environment of every child that runs plugin code: this process's, with Swift's crash
    /// backtracer off. A plugin that crashes its child is reported by the parent in one line (how
    /// the child ended); the backtracer would print pages of registers on the nap's terminal (or
    /// into `plugins check --json`) and take seconds doing it.
    public static var childEnvironment: [String: String] {
        var environment = ProcessSpawn.currentEnvironment()
        environment["SWIFT_BACKTRACE"] = "enable=no"
        return environment
    }

    /// What a serving child runs.
    public enum Kind: String, Sendable, Hashable {
        case source, emitter
    }

    /// Where the host program is for the executable at `executablePath` (the running one when nil),
    /// or `nil` when it is not installed.
    public static func locate(executablePath: String? = PluginSearchPath.currentExecutable()) -> String? {
        candidates(executablePath: executablePath).first { access($0, X_OK) == 0 }
    }

    /// Where it is looked for: next to the executable (a build folder, or a test's), then in
    /// `PREFIX/lib/snoozefuse/` for an executable in `PREFIX/bin/`.
    public static func candidates(executablePath: String?) -> [String] {
        CompanionProgram.candidates(name, beside: executablePath)
    }

    /// The arguments of a child that serves one instance of the plugin at `path` configured by
    /// `config`; with `expectID`, the child refuses a file that no longer holds that plugin; with
    /// `checkOnly`, it only starts the instance, frees it and prints one ``PluginStartAnswer``.
    public static func serveArguments(kind: Kind, path: String, config: String, expectID: String? = nil,
                                      checkOnly: Bool = false) -> [String] {
        ["serve", kind.rawValue, path] + (expectID.map { ["--expect-id", $0] } ?? []) + (checkOnly ? ["--check-only"] : [])
            + parentArguments + ["--", config]
    }

    /// The arguments of a scanner child that loads and describes each of `paths` (see ``PluginScanner``).
    public static func scanArguments(paths: [String]) -> [String] {
        ["scan"] + parentArguments + ["--"] + paths
    }

    /// The arguments of a child that runs the validator's check `check` on the plugin at `path`
    /// with `config` (see ``PluginValidation``).
    public static func checkArguments(check: PluginCheckName, path: String, config: String) -> [String] {
        ["check", check.rawValue, path] + parentArguments + ["--", config]
    }

    /// `--parent-pid PID`: the child asks to be killed when this process ends (see ``PluginHostCommand``).
    static var parentArguments: [String] { ["--parent-pid", String(getpid())] }

    public static func missing(_ executablePath: String?) -> PluginError {
        PluginError(path: name, reason: .processEnded(
            "the plugin host program is not installed (looked in \(candidates(executablePath: executablePath).joined(separator: ", "))); reinstall snoozefuse (`make install`) or build it (`swift build --product \(name)`)"))
    }
}

/// The host program's command line, as its parent writes it (``PluginHostProgram``) and as it reads
/// it. Options come before `--`; what follows `--` is data, never read as an option: the
/// configuration (`serve`, `check`) or the files to scan (`scan`).
///
///     serve source|emitter PATH [--expect-id ID] [--check-only] [--parent-pid PID] -- CONFIG
///     scan [--parent-pid PID] -- PATH...
///     check NAME PATH [--parent-pid PID] -- CONFIG
public struct PluginHostCommand: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case serve(kind: PluginHostProgram.Kind, path: String, config: String, expectID: String?, checkOnly: Bool)
        case scan(paths: [String])
        case check(PluginCheckName, path: String, config: String)
    }

    public var action: Action
    /// The process that started it: it asks to be killed when that one ends.
    public var parent: Int32?

    /// Parses the arguments (without the program name); nil when they are not a command.
    public init?(_ arguments: [String]) {
        let separator = arguments.firstIndex(of: "--") ?? arguments.count
        let data = Array(arguments[min(separator + 1, arguments.count)...])
        var words: [String] = []
        var expectID: String?
        var checkOnly = false
        var index = 0
        let options = arguments[..<separator]
        while index < options.count {
            let word = options[index]
            switch word {
            case "--parent-pid":
                guard index + 1 < options.count, let pid = Int32(options[index + 1]), pid > 0 else { return nil }
                parent = pid
                index += 2
            case "--expect-id":
                guard index + 1 < options.count else { return nil }
                expectID = options[index + 1]
                index += 2
            case "--check-only":
                checkOnly = true
                index += 1
            default:
                guard !word.hasPrefix("-") else { return nil }
                words.append(word)
                index += 1
            }
        }
        switch words.first {
        case "serve":
            guard words.count == 3, let kind = PluginHostProgram.Kind(rawValue: words[1]) else { return nil }
            action = .serve(kind: kind, path: words[2], config: data.joined(separator: " "), expectID: expectID, checkOnly: checkOnly)
        case "scan":
            guard words.count == 1, expectID == nil, !checkOnly else { return nil }
            action = .scan(paths: data)
        case "check":
            guard words.count == 3, let name = PluginCheckName(rawValue: words[1]), expectID == nil, !checkOnly else { return nil }
            action = .check(name, path: words[2], config: data.joined(separator: " "))
        default:
            return nil
        }
    }
}

/// What the host program does for itself before it touches a plugin.
public enum PluginHostProcess {
    /// Serving one instance: every process the plugin detaches (a double fork, `setsid`, an
    /// emptied environment) stays this process's child (a child subreaper), and is ended with it,
    /// whether it ends by itself (the instance is done) or is asked to (SIGTERM, which the nap
    /// sends before it kills): a plugin's processes never outlive its host but for a SIGKILL
    /// (a hung instance), after which the nap ends what carries its mark.
    public static func keepWhatThePluginDetaches(logger: Logger) {
        _ = AdoptedProcesses.adoptOrphans()
        _ = TerminationRequest.handle(onThreadNamed: "sf-host-term") {
            endWhatThePluginLeft(logger: logger)
            _exit(0)
        }
    }

    /// Ends every child this process has left (all the plugin's: the host starts none of its
    /// own), and says so: a plugin must end every process it starts.
    public static func endWhatThePluginLeft(logger: Logger) {
        let left = AdoptedProcesses.endEveryChild()
        guard !left.isEmpty else { return }
        logger.warning("the plugin left \(left.count) process\(left.count == 1 ? "" : "es") behind (\(left.map(\.description).joined(separator: "; "))); \(left.count == 1 ? "it was" : "they were") killed: a plugin must end every process it starts")
    }

    /// Asks to be killed when `parent` ends (see ``ProcessSpawn/dieWithParent(_:)``); false when
    /// the parent is already gone (then nobody wants the answer: end at once).
    public static func dieWithParent(_ parent: Int32) -> Bool {
        ProcessSpawn.dieWithParent(parent) == nil
    }

    /// Moves standard output to a new descriptor for the protocol (returned) and points descriptor 1
    /// at standard error, so a plugin that prints cannot garble what the parent reads.
    public static func takeStandardOutput() -> Int32 {
        let channel = fcntl(1, F_DUPFD_CLOEXEC, 3)
        if channel >= 0 { dup2(2, 1) }
        return channel >= 0 ? channel : 1
    }

    /// Writes `line` and a newline to `descriptor` in one go (a parent reads it as one line).
    public static func send(_ line: String, to descriptor: Int32) {
        writeAll(line + "\n", to: descriptor)
    }

    /// Writes `value` as one line of JSON (keys sorted, slashes as they are: what JSONEncoder
    /// writes with `.sortedKeys` and `.withoutEscapingSlashes`) to `descriptor` in one go; nothing
    /// when it cannot be encoded. How the host program answers its parent (scan lines, check
    /// messages, a `--check-only` answer), without Foundation.
    public static func send(json value: some Encodable, to descriptor: Int32) {
        guard let line = try? JSONValueEncoder().encode(value) else { return }
        send(line, to: descriptor)
    }

    /// Moves standard input to a new descriptor (returned) and points descriptor 0 at /dev/null, so
    /// a plugin that reads cannot take the parent's commands.
    public static func takeStandardInput() -> Int32 {
        let channel = fcntl(0, F_DUPFD_CLOEXEC, 3)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if channel >= 0, null >= 0 { dup2(null, 0) }
        if null >= 0 { close(null) }
        return channel >= 0 ? channel : 0
    }
}

/// What `snoozefuse-plugin-host serve --check-only` prints (one JSON object): the instance starts,
/// or why it would not. A child that prints nothing ended or hung before it could tell.
public struct PluginStartAnswer: Codable, Sendable, Hashable {
    public var starts: Bool
    public var refusal: PluginStartRefusal?

    public init(_ error: PluginError?) {
        starts = error == nil
        refusal = error.map(PluginStartRefusal.init)
    }
}

/// Why a plugin instance would not start.
public struct PluginStartRefusal: Codable, Sendable, Hashable {
    /// The plugin's `SNOOZEFUSE_STATUS_*` (1 is INVALID_CONFIG), or nil when it failed before the
    /// plugin answered (permissions, loading).
    public var status: Int32?
    /// The plugin's own message, or what went wrong.
    public var message: String

    public init(_ error: PluginError) {
        if case .callFailed(_, let status, let message) = error.reason {
            self.status = status
            self.message = message
        } else {
            status = nil
            message = error.reasonText
        }
    }

    public var isBadConfiguration: Bool { status == 1 }
}

/// One `serve --check-only` child: the plugin's own verdict on a configuration, given in `activate`
/// (a source) or `create_pulse_emitter` (an emitter), in a process of its own so a plugin that
/// crashes, ends the process or hangs there cannot take the nap with it.
public final class PluginConfigCheck: Sendable {
    /// How long the child may take: loading (2 s) plus creating and activating (1 s).
    public static let deadline = Duration.seconds(3)

    /// What the check found.
    public enum Answer: Sendable, Hashable {
        /// The instance starts with this configuration.
        case starts
        /// The plugin (or the host, before the plugin answered) refused.
        case refused(PluginStartRefusal)
        /// The child ended or hung before it answered: how.
        case noAnswer(String)
    }

    /// The option that named it (`--emitter`).
    public let option: String
    public let spec: PluginSpec
    public let info: PluginInfo
    private let child: ChildProcessGroup
    /// The read end of the child's output (closed in deinit).
    private let output: Int32

    /// Starts the check in a child of the host program at `host`.
    public init(option: String, spec: PluginSpec, info: PluginInfo, kind: PluginHostProgram.Kind, host: String) throws(PluginError) {
        self.option = option
        self.spec = spec
        self.info = info
        guard let ends = makePipe() else {
            throw PluginError(path: info.path, reason: .processEnded("cannot create a pipe: \(String(cString: strerror(errno)))"))
        }
        do throws(SpawnError) {
            child = try ChildProcessGroup(host, PluginHostProgram.serveArguments(kind: kind, path: info.path, config: spec.config,
                                                                                expectID: info.id, checkOnly: true),
                                          descriptors: [0: .devNull, 1: .inherit(ends.write), 2: .devNull],
                                          environment: PluginHostProgram.childEnvironment)
        } catch {
            close(ends.read)
            close(ends.write)
            throw PluginError(path: info.path, reason: .processEnded(error.description))
        }
        close(ends.write)
        output = ends.read
    }

    deinit {
        close(output)
    }

    /// Waits at most ``deadline`` (from now) for the answer; the child and its group are gone
    /// when this returns.
    public func wait() -> Answer {
        var reader = LineReader(descriptor: output)
        let next = reader.next(until: .now.advanced(by: Self.deadline))
        switch next {
        case .line(let text):
            // Let it free the instance (which may restore a device) before anything is killed.
            if child.waitForEnd(atMost: .seconds(1)) == nil { child.terminate() }
            guard let answer = try? JSONValueDecoder().decode(PluginStartAnswer.self, from: text) else {
                return .noAnswer("it printed \"\(text.prefix(200))\" instead of an answer")
            }
            return answer.refusal.map(Answer.refused) ?? .starts
        case .timedOut:
            child.terminate()
            return .noAnswer("it did not answer within \(Self.deadline.components.seconds) s (killed): creating or activating the instance hangs")
        case .end:
            let status = child.waitForEnd(atMost: .seconds(2)) ?? child.terminate()
            return .noAnswer("its process ended before it answered (\(status.map(ProcessSpawn.describe) ?? "it did not end")): creating or activating the instance ends the process")
        }
    }

    /// `--emitter terminal:bell=yes: plugin org.snoozefuse.terminal refuses this configuration:
    /// bell=yes: expected 0 or 1`, then the keys it accepts (its `config_help`).
    public func describe(_ refusal: PluginStartRefusal) -> [String] {
        let reason = refusal.message.isEmpty ? "it gives no reason" : refusal.message
        var lines = ["\(option) \(spec): plugin \(info.id) refuses this configuration: \(reason)"]
        if let help = info.configHelp {
            lines.append("\(info.id) accepts (\(option) ID:key=value,...):")
            lines += help.split(separator: "\n").map { "  \($0)" }
        } else {
            lines.append("see `snoozefuse plugins info \(info.id)`")
        }
        return lines
    }
}

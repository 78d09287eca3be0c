public import Logging
import SnoozeFuseCore
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Loads and describes plugin files in a child of the plugin host program (`snoozefuse-plugin-host
/// scan -- FILE…`), as GStreamer's plugin scanner does, so that no plugin is ever loaded into the
/// process that asks: a file whose constructor crashes, ends the process or hangs costs that child,
/// never `plugins list` or a nap.
///
/// The child says it is ready, then loads the files in order and answers one JSON line per file.
/// Each answer must come within ``loadLimit`` of the one before: a child that ends instead has met
/// a file that ended it (`endedWhileLoading`, with how it ended), one that does not answer in time
/// is killed with its whole process group (`hungWhileLoading`). Either way a new child goes on
/// with the next file. A file that ends a child after others were loaded in it is tried once more
/// first in a fresh child, so a library that broke the process later is not taken for the culprit.
public struct PluginScanner: Sendable {
    /// How long one file may take to load: its constructors, the entry function, the descriptor.
    public static let loadLimit = Duration.seconds(2)
    /// How long the host program may take to start and say it is ready (its own start-up, on a busy
    /// machine; no plugin code runs before).
    public static let startLimit = Duration.seconds(10)

    public let host: String
    public let loadLimit: Duration

    public init(host: String, loadLimit: Duration = Self.loadLimit) {
        self.host = host
        self.loadLimit = loadLimit
    }

    /// One line of the scanner's protocol (child → parent).
    struct Line: Codable {
        var ready: Bool?
        var path: String?
        var verdict: PluginScanVerdict?
    }

    /// The verdict on every file of `paths` (absolute or relative to the current folder).
    public func scan(_ paths: [String]) -> [String: PluginScanVerdict] {
        var verdicts: [String: PluginScanVerdict] = [:]
        var pending = paths[...]
        var triedAlone: Set<String> = []
        while !pending.isEmpty {
            let run = runChild(Array(pending))
            for (path, verdict) in run.answered { verdicts[path] = verdict }
            pending.removeFirst(run.answered.count)
            switch run.failure {
            case nil:
                continue
            case .host(let reason)?:
                for path in pending { verdicts[path] = .refused(PluginError(path: path, reason: reason)) }
                pending.removeAll()
            case .file(let reason)?:
                // The child stopped while loading the first file it had not answered.
                guard let culprit = pending.first else { continue }
                if case .endedWhileLoading = reason, !run.answered.isEmpty, !triedAlone.contains(culprit) {
                    triedAlone.insert(culprit)
                    continue
                }
                verdicts[culprit] = .refused(PluginError(path: culprit, reason: reason))
                pending.removeFirst()
            }
        }
        return verdicts
    }

    private enum Failure {
        /// The host program failed before any plugin code ran: every file left gets this reason.
        case host(PluginError.Reason)
        /// Loading the first file not answered ended or hung the child.
        case file(PluginError.Reason)
    }

    /// Runs one scanner child over `batch`: the answers it gave, in order, and why it stopped early.
    private func runChild(_ batch: [String]) -> (answered: [(String, PluginScanVerdict)], failure: Failure?) {
        guard let ends = makePipe() else {
            return ([], .host(.processEnded("cannot create a pipe: \(String(cString: strerror(errno)))")))
        }
        let child: ChildProcessGroup
        do throws(SpawnError) {
            child = try ChildProcessGroup(host, PluginHostProgram.scanArguments(paths: batch),
                                          descriptors: [0: .devNull, 1: .inherit(ends.write), 2: .devNull],
                                          environment: PluginHostProgram.childEnvironment)
        } catch {
            close(ends.read)
            close(ends.write)
            return ([], .host(.processEnded(error.description)))
        }
        close(ends.write)
        defer { close(ends.read) }
        var reader = LineReader(descriptor: ends.read)
        guard case .line(let text) = reader.next(until: .now.advanced(by: Self.startLimit)),
              (try? JSONValueDecoder().decode(Line.self, from: text))?.ready == true else {
            let status = child.terminate()
            return ([], .host(.processEnded("the plugin host program \(host) did not start: \(status.map(ProcessSpawn.describe) ?? "it did not end")")))
        }
        var answered: [(String, PluginScanVerdict)] = []
        for path in batch {
            switch reader.next(until: .now.advanced(by: loadLimit)) {
            case .line(let text):
                guard let line = try? JSONValueDecoder().decode(Line.self, from: text), line.path == path,
                      let verdict = line.verdict else {
                    child.terminate()
                    return (answered, .file(.processEnded("the scanner answered out of turn while loading it: \(text.prefix(200))")))
                }
                answered.append((path, verdict))
            case .timedOut:
                child.terminate()
                return (answered, .file(.hungWhileLoading(milliseconds: Int(loadLimit.components.seconds * 1000 + loadLimit.components.attoseconds / 1_000_000_000_000_000))))
            case .end:
                let status = child.waitForEnd(atMost: .seconds(2)) ?? child.terminate()
                return (answered, .file(.endedWhileLoading(status.map(ProcessSpawn.describe) ?? "it closed its output and did not end")))
            }
        }
        // Every file answered: the child ends by itself.
        if child.waitForEnd(atMost: .seconds(2)) == nil { child.terminate() }
        return (answered, nil)
    }

    // MARK: - The child's side

    /// Loads each of `paths` in turn and writes one ``Line`` per file to `output` (after a first
    /// `ready` line), each flushed at once so a crash in the next file leaves the earlier answers.
    public static func serve(paths: [String], output: Int32, logger: Logger) {
        func send(_ line: Line) {
            PluginHostProcess.send(json: line, to: output)
        }
        send(Line(ready: true))
        for path in paths {
            let verdict: PluginScanVerdict
            do {
                try PluginPermissions.check(path: path)
                verdict = .plugin(try PluginLoader.load(path: path, logger: logger).info)
            } catch {
                verdict = .refused(error)
            }
            send(Line(path: path, verdict: verdict))
        }
    }
}

// snoozefuse-plugin-host: the only program that loads plugins. `snoozefuse` starts it as a child:
//
//   snoozefuse-plugin-host serve source|emitter PATH [--check-only] -- CONFIG
//       one instance of the plugin at PATH: a source renders float frames to standard output, an
//       emitter reads pulse commands (`e INTENSITY MS`, `c`) from standard input; it ends when the
//       parent goes away. With --check-only it starts the instance, frees it, and prints why it
//       would not start (one JSON object), if it would not.
//   snoozefuse-plugin-host check PATH -- CONFIG
//       validates the plugin at PATH, one JSON finding per line, flushed as it goes (a crash keeps
//       the findings before it).
//
// The configuration comes after `--`, as data: it is never read as an option.
import Foundation
import Logging
import SnoozeFusePluginHost

/// Log lines from the plugin layer go to standard error as `snoozefuse: …`.
func logger(level: Logger.Level) -> Logger {
    lineLogger(level) { FileHandle.standardError.write(Data("snoozefuse: \($0)\n".utf8)) }
}

func writeLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: \(PluginHostProgram.name) serve source|emitter PATH [--check-only] -- CONFIG
               \(PluginHostProgram.name) check PATH -- CONFIG
        (started by snoozefuse; see PLUGINS.md)

        """.utf8))
    exit(64)
}

// Options before `--`; everything after it is the plugin's configuration.
let all = Array(CommandLine.arguments.dropFirst())
let separator = all.firstIndex(of: "--") ?? all.count
let words = Array(all[..<separator])
let config = all[min(separator + 1, all.count)...].joined(separator: " ")
// The parent may already be gone (a pipe that broke): end quietly rather than die of SIGPIPE.
signal(SIGPIPE, SIG_IGN)

switch words.first {
case "serve":
    guard words.count >= 3, let kind = PluginHostProgram.Kind(rawValue: words[1]),
          words.dropFirst(3).allSatisfy({ $0 == "--check-only" }) else { usage() }
    let path = words[2]
    if words.contains("--check-only") {
        let error = PluginServer.checkStart(emitter: kind == .emitter, path: path, config: config, logger: logger(level: .critical))
        if let error, let data = try? JSONEncoder().encode(PluginStartRefusal(error)) {
            writeLine(String(decoding: data, as: UTF8.self))
        }
        exit(0)
    }
    let status = switch kind {
    case .source: PluginServer.serveSource(path: path, config: config, logger: logger(level: .warning))
    case .emitter: PluginServer.serveEmitter(path: path, config: config, logger: logger(level: .warning))
    }
    exit(status.rawValue)
case "check":
    guard words.count == 2 else { usage() }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    PluginCheck.run(path: words[1], config: config, logger: logger(level: .error)) { finding in
        if let data = try? encoder.encode(finding) { writeLine(String(decoding: data, as: UTF8.self)) }
    }
    // The plugin's threads may be stuck (a blocking emitter): end without waiting for them.
    exit(0)
default:
    usage()
}

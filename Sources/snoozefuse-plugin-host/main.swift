// snoozefuse-plugin-host: the only program that loads plugins. `snoozefuse` starts it as a child:
//
//   snoozefuse-plugin-host serve source|emitter PATH [--expect-id ID] [--check-only] -- CONFIG
//       one instance of the plugin at PATH: a source renders float frames to standard output, an
//       emitter reads pulse commands (`e TAG INTENSITY MS`, `c`) from standard input and answers
//       each pulse on standard output (`d TAG` done, `x TAG` dropped); it ends when the parent goes
//       away. With --expect-id it refuses a file that no longer holds that plugin. With
//       --check-only it starts the instance, frees it, and prints one JSON answer.
//   snoozefuse-plugin-host scan -- PATH...
//       loads and describes each file, one JSON line per file (after a `ready` line).
//   snoozefuse-plugin-host check NAME PATH -- CONFIG
//       runs one check of the validator, one JSON message per line, flushed as it goes.
//
// Every command takes --parent-pid PID: the program asks the kernel to kill it when that process
// ends. What follows `--` is data (the configuration, the files): it is never read as an option.
// Standard output is kept for the protocol: the plugin's own prints go to standard error.
import Glibc
import Logging
import SnoozeFusePluginHost

/// Log lines from the plugin layer go to standard error as `snoozefuse: …`.
func logger(level: Logger.Level) -> Logger {
    lineLogger(level) { PluginHostProcess.send("snoozefuse: \($0)", to: 2) }
}

func usage() -> Never {
    PluginHostProcess.send("""
        usage: \(PluginHostProgram.name) serve source|emitter PATH [--expect-id ID] [--check-only] [--parent-pid PID] -- CONFIG
               \(PluginHostProgram.name) scan [--parent-pid PID] -- PATH...
               \(PluginHostProgram.name) check NAME PATH [--parent-pid PID] -- CONFIG
        (started by snoozefuse; see PLUGINS.md)
        """, to: 2)
    exit(64)
}

guard let command = PluginHostCommand(Array(CommandLine.arguments.dropFirst())) else { usage() }
// The parent may already be gone: then nobody wants what this would do.
if let parent = command.parent, !PluginHostProcess.dieWithParent(parent) { exit(PluginServer.Status.parentGone.rawValue) }
// A pipe that broke (the parent is gone) must end this quietly rather than by SIGPIPE.
signal(SIGPIPE, SIG_IGN)
let output = PluginHostProcess.takeStandardOutput()

switch command.action {
case .serve(let kind, let path, let config, let expectID, let checkOnly):
    let serving = logger(level: .warning)
    PluginHostProcess.keepWhatThePluginDetaches(logger: serving)
    if checkOnly {
        let error = PluginServer.checkStart(emitter: kind == .emitter, path: path, config: config, expectID: expectID,
                                            logger: logger(level: .critical))
        PluginHostProcess.endWhatThePluginLeft(logger: serving)
        PluginHostProcess.send(json: PluginStartAnswer(error), to: output)
        exit(0)
    }
    let status = switch kind {
    case .source:
        PluginServer.serveSource(path: path, config: config, expectID: expectID, output: output, logger: serving)
    case .emitter:
        PluginServer.serveEmitter(path: path, config: config, expectID: expectID, input: PluginHostProcess.takeStandardInput(),
                                  answers: output, logger: serving)
    }
    PluginHostProcess.endWhatThePluginLeft(logger: serving)
    exit(status.rawValue)
case .scan(let paths):
    let scanning = logger(level: .critical)
    PluginHostProcess.keepWhatThePluginDetaches(logger: scanning)
    PluginScanner.serve(paths: paths, output: output, logger: scanning)
    PluginHostProcess.endWhatThePluginLeft(logger: scanning)
    exit(0)
case .check(let name, let path, let config):
    // Not kept here: what the plugin detaches goes to `plugins check`, which ends it and fails
    // the check naming it.
    PluginCheck.run(name, path: path, config: config, probe: SeccompRenderProbe(), logger: logger(level: .warning)) { message in
        PluginHostProcess.send(json: message, to: output)
    }
    // Plugin threads may be stuck (a blocking emitter): end without waiting for them. `exit` runs
    // the plugin's destructors; the parent fails the check if they crash.
    exit(0)
}

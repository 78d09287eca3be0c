import ArgumentParser
import Foundation
import SnoozeFuseRuntime

/// A command that runs on the program's event loop (its tasks and timers on one thread of their
/// own; see `EventLoop`).
protocol LoopCommand {
    func run(on loop: EventLoop) async throws
}

/// The program's entry point. It parses with ArgumentParser as usual but runs the chosen command
/// on an ``EventLoop`` instead of ArgumentParser's async `main`, which would run it on the default
/// global executor and so start libdispatch's once-a-second pool monitor: a napping process must
/// not wake between its deadlines.
@main
enum Main {
    static func main() {
        // A closed pipe on standard output (`| head`) must not kill a nap before its alarm: writes
        // then fail with EPIPE and are dropped, and the alarm still rings on the terminal.
        signal(SIGPIPE, SIG_IGN)
        do {
            let command = try SnoozeFuse.parseAsRoot()
            let loop = EventLoop(name: "snoozefuse")
            try loop.runBlocking {
                var command = command
                if let loopCommand = command as? any LoopCommand {
                    try await loopCommand.run(on: loop)
                } else if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
        } catch let error as ExitCode {
            SnoozeFuse.exit(withError: error)
        } catch let error as ValidationError {
            SnoozeFuse.exit(withError: error)
        } catch {
            // ArgumentParser's own errors (usage, --help, --version) come from parsing above and
            // keep their codes; anything else escaping a command is a bug (EX_SOFTWARE), never
            // exit 1, which means "cancelled".
            if SnoozeFuse.exitCode(for: error) == .failure {
                writeLine("snoozefuse: internal error: \(error)", to: STDERR_FILENO)
                SnoozeFuse.exit(withError: ExitStatus.internalError)
            }
            SnoozeFuse.exit(withError: error)
        }
    }
}

/// Writes `text` and a newline in one write, so lines from different places never interleave.
/// Errors are dropped: a closed stream leaves nowhere better to report to.
func writeLine(_ text: String, to fileDescriptor: Int32) {
    write(text + "\n", to: fileDescriptor)
}

/// Writes `text` as it is.
func write(_ text: String, to fileDescriptor: Int32) {
    try? FileHandle(fileDescriptor: fileDescriptor, closeOnDealloc: false).write(contentsOf: Data(text.utf8))
}

/// Writes `bytes` as they are, in one call (a long listing built in one buffer).
func write(bytes: [UInt8], to fileDescriptor: Int32) {
    try? FileHandle(fileDescriptor: fileDescriptor, closeOnDealloc: false).write(contentsOf: bytes)
}

import ArgumentParser
import Foundation
import SnoozeFuseRuntime

/// The program's entry point. It parses with ArgumentParser as usual but runs the chosen command
/// on a ``SerialThreadExecutor`` instead of ArgumentParser's async `main`, which would run it on
/// the default global executor and so start libdispatch's once-a-second pool monitor: a napping
/// process must not wake between its deadlines.
@main
enum Main {
    static func main() {
        // A closed pipe on standard output (`| head`) must not kill a nap before its alarm: writes
        // then fail with EPIPE and are dropped, and the alarm still rings on the terminal.
        signal(SIGPIPE, SIG_IGN)
        do {
            let command = try SnoozeFuse.parseAsRoot()
            let executor = SerialThreadExecutor(name: "snoozefuse-main")
            try executor.runBlocking {
                var command = command
                if var asyncCommand = command as? any AsyncParsableCommand {
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
                writeLine("snoozefuse: internal error: \(error)", to: 2)
                SnoozeFuse.exit(withError: ExitStatus.internalError)
            }
            SnoozeFuse.exit(withError: error)
        }
    }
}

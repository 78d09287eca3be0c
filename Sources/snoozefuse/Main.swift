import ArgumentParser
import SnoozeFuseRuntime

/// The program's entry point. It parses with ArgumentParser as usual but runs the chosen command
/// on a ``SerialThreadExecutor`` instead of ArgumentParser's async `main`, which would run it on
/// the default global executor and so start libdispatch's once-a-second pool monitor: a napping
/// process must not wake between its deadlines.
@main
enum Main {
    static func main() {
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
        } catch {
            SnoozeFuse.exit(withError: error)
        }
    }
}

import ArgumentParser
import Foundation
import SnoozeFuseRuntime

/// A command that runs on the program's event loop (its tasks and timers on one thread of their
/// own; see `EventLoop`). It must be listed in ``Main/runner(for:)``.
protocol LoopCommand {
    func run(on loop: EventLoop) async throws
}

extension LoopCommand where Self: ParsableCommand {
    /// Reached only when a loop command is missing from ``Main/runner(for:)``: said, not run as
    /// something else (ArgumentParser's own default would print the help and succeed).
    mutating func run() throws {
        writeLine("snoozefuse: internal error: \(Self.self) runs on the event loop but is not among Main.runner(for:)'s commands", to: STDERR_FILENO)
        throw ExitStatus.internalError
    }
}

/// How a command that is not a plain one runs, given the parsed command and the loop.
typealias CommandRunner = @Sendable (any ParsableCommand, EventLoop) async throws -> Void

/// The program's entry point. It parses with ArgumentParser as usual (or ``QuickParse``) and runs
/// a loop or async command on an ``EventLoop`` instead of ArgumentParser's async `main`, which
/// would run it on the default global executor and so start libdispatch's once-a-second pool
/// monitor: a napping process must not wake between its deadlines. A plain command runs on the
/// main thread.
@main
enum Main {
    static func main() {
        // A closed pipe on standard output (`| head`) must not kill a nap before its alarm: writes
        // then fail with EPIPE and are dropped, and the alarm still rings on the terminal.
        signal(SIGPIPE, SIG_IGN)
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == QuickParse.checkFlag { checkQuickParse(Array(arguments.dropFirst())) }
        if QuickParse.isVersion(arguments) {
            writeLine(SnoozeFuse.configuration.version, to: STDOUT_FILENO)
            return
        }
        do {
            let command = try parse(arguments)
            guard let runner = runner(for: type(of: command)) else {
                // A plain command runs here, on the main thread: no loop, no second thread and
                // its allocator arena for a command that awaits nothing (`status` from a status
                // bar every second; issue 23).
                var command = command
                try command.run()
                return
            }
            let loop = EventLoop(name: "snoozefuse")
            try loop.runBlocking { try await runner(command, loop) }
        } catch let error as ExitCode {
            // The commands' own exit statuses carry no message (they said what they had to):
            // exit at once. ArgumentParser's exit would say nothing either, but builds the
            // command's help first, 5 M instructions (callgrind of `stop` refused; issue 23).
            exit(error.rawValue)
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
            if SnoozeFuse.exitCode(for: error) == .validationFailure, let hint = Nap.bareHoldHint(arguments) {
                writeLine(SnoozeFuse.fullMessage(for: error), to: STDERR_FILENO)
                writeLine(hint, to: STDERR_FILENO)
                exit(SnoozeFuse.exitCode(for: error).rawValue)
            }
            SnoozeFuse.exit(withError: error)
        }
    }
}

extension Main {
    /// The runner of a command that runs on the loop or is async, by its type (nil: a plain
    /// command). Looked up by the parsed command's type, not by casting it to `any LoopCommand` or
    /// `any AsyncParsableCommand`: a cast that fails scans the binary's protocol conformance
    /// records, and a plain command (`status`, `stop`, …) failed two of them: 0.65 M of
    /// `status`'s 28 M instructions (callgrind, issue 23). A switch, not a dictionary built at every
    /// start (0.5 M). Casting to the listed concrete type compares metadata only.
    static func runner(for type: any ParsableCommand.Type) -> CommandRunner? {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Nap.self): onLoop(Nap.self)
        case ObjectIdentifier(Sounds.Play.self): onLoop(Sounds.Play.self)
        case ObjectIdentifier(Resume.self): onLoop(Resume.self)
        case ObjectIdentifier(GuardianCommand.self): onLoop(GuardianCommand.self)
        case ObjectIdentifier(PluginsList.self): async(PluginsList.self)
        case ObjectIdentifier(PluginsInfo.self): async(PluginsInfo.self)
        case ObjectIdentifier(PluginsCheck.self): async(PluginsCheck.self)
        default: nil
        }
    }

    private static func onLoop<C: ParsableCommand & LoopCommand>(_ type: C.Type) -> CommandRunner {
        { command, loop in
            guard let command = command as? C else { return }
            try await command.run(on: loop)
        }
    }

    private static func async<C: AsyncParsableCommand>(_ type: C.Type) -> CommandRunner {
        { command, _ in
            guard var command = command as? C else { return }
            try await command.run()
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
    var text = text
    text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: fileDescriptor) }
}

/// Writes `bytes` as they are, in one call (a long listing built in one buffer).
func write(bytes: [UInt8], to fileDescriptor: Int32) {
    bytes.withUnsafeBytes { writeAll($0, to: fileDescriptor) }
}

/// `write(2)` until all of `buffer` is written (a pipe takes a long text in parts), again after a
/// signal; any other error drops the rest. Not through FileHandle and Data: their first use costs
/// every short command 0.4 M instructions (callgrind of `--version`, issue 23).
private func writeAll(_ buffer: UnsafeRawBufferPointer, to fileDescriptor: Int32) {
    guard var next = buffer.baseAddress else { return }
    var left = buffer.count
    while left > 0 {
        let written = Glibc.write(fileDescriptor, next, left)
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        next += written
        left -= written
    }
}

extension Main {
    /// The command `arguments` stand for: by QuickParse where it takes them, else by ArgumentParser.
    static func parse(_ arguments: [String]) throws -> sending any ParsableCommand {
        if let command = QuickParse.command(arguments) { return command }
        return try SnoozeFuse.parseAsRoot(Add.negativeDurationsAsValues(arguments))
    }

    /// For the test that QuickParse and ArgumentParser agree (``QuickParse/checkFlag`` first): prints
    /// what each made of `arguments` (`quick: none` where QuickParse leaves them to ArgumentParser,
    /// `full: error` where ArgumentParser refuses them), and exits without running anything.
    static func checkQuickParse(_ arguments: [String]) -> Never {
        let quick = QuickParse.isVersion(arguments) ? SnoozeFuse.configuration.version : QuickParse.command(arguments).map { String(reflecting: $0) }
        let full: String
        do {
            full = String(reflecting: try SnoozeFuse.parseAsRoot(arguments))
        } catch {
            let message = SnoozeFuse.message(for: error)
            full = SnoozeFuse.exitCode(for: error) == .success ? message : "error"
        }
        writeLine("quick: \(quick ?? "none")", to: STDOUT_FILENO)
        writeLine("full: \(full)", to: STDOUT_FILENO)
        exit(0)
    }
}

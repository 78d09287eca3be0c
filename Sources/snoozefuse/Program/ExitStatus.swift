import ArgumentParser
import SnoozeFuseCore
import SnoozeFuseRuntime

/// The exit codes of SPEC §3, in one place (sysexits.h values where one fits).
enum ExitStatus {
    /// The alarm was dismissed or rang out its limit.
    static let success = ExitCode(0)
    /// The session was cancelled.
    static let cancelled = ExitCode(1)
    /// `plugins check`: no check failed, but some did not run (they need a configuration, or a
    /// device missing here); `--allow-skips` makes that 0.
    static let checksSkipped = ExitCode(3)
    /// Bad flags or values (EX_USAGE).
    static let usage = ExitCode(64)
    /// Bad sound data (EX_DATAERR).
    static let badData = ExitCode(65)
    /// A file that should be there is not (EX_NOINPUT).
    static let missingInput = ExitCode(66)
    /// No output of any kind could sound the alarm, or a system library an import needs is missing
    /// (EX_UNAVAILABLE).
    static let unavailable = ExitCode(69)
    /// A bug (EX_SOFTWARE).
    static let internalError = ExitCode(70)
    /// Another nap is running (EX_TEMPFAIL: try again when it has ended).
    static let anotherNap = ExitCode(75)
    /// Bad configuration (EX_CONFIG).
    static let badConfig = ExitCode(78)
    /// Interrupted by SIGINT (128 + 2).
    static let interrupted = ExitCode(130)

    static func forOutcome(_ outcome: SessionOutcome, interrupted: Bool) -> ExitCode {
        switch outcome {
        case .dismissed, .ringLimitReached: success
        case .cancelled: interrupted ? Self.interrupted : cancelled
        }
    }

    /// Says what stopped a nap or preview before it began, and returns its exit status.
    static func reporting(_ error: NapSetupError) -> ExitCode {
        for line in error.lines { writeLine("snoozefuse: \(line)", to: 2) }
        switch error.kind {
        case .usage: return usage
        case .badData: return badData
        case .missingInput: return missingInput
        case .badConfiguration: return badConfig
        case .internalError: return internalError
        case .alreadyRunning: return anotherNap
        }
    }
}

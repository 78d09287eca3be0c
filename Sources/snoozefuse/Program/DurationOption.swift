import ArgumentParser
import SnoozeFuseCore

/// Parses a duration flag; the error names the accepted forms, and ArgumentParser adds the flag
/// and exits 64.
@Sendable
func parseDurationOption(_ text: String) throws -> Duration {
    do {
        return try DurationParser.parse(text)
    } catch {
        throw ValidationError(error.description)
    }
}

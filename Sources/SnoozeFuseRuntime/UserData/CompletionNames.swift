public import Foundation
import SnoozeFuseStore

/// The user's own names for the shells' completions (`--preset`, `--sound`, `presets show`,
/// `sounds play`…): what the completion scripts ask the program for as the person types. Read
/// only, and never failing: a database that is missing, busy or damaged completes nothing of its
/// own (the built-in names still).
public enum CompletionNames {
    /// The built-in presets and the saved ones whose names start with `prefix`; `savedOnly`: the
    /// saved ones alone (what `presets remove` can remove).
    public static func presets(prefix: String, savedOnly: Bool = false,
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let saved = (try? UserData(environment: environment).presets())?.map(\.name) ?? NapPreset.builtIn.map(\.name)
        let builtIn = Set(NapPreset.builtIn.map(\.name))
        return saved.filter { $0.hasPrefix(prefix) && (!savedOnly || !builtIn.contains($0)) }
    }

    /// The built-in sounds and the imported ones whose names start with `prefix`; `importedOnly`:
    /// the imported ones alone (what `sounds remove` and `rename` change).
    public static func sounds(prefix: String, importedOnly: Bool = false,
                              environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let builtIn = importedOnly ? [] : (BuiltInSounds.locate()?.names ?? [])
        var imported: [String] = []
        if let paths = try? StorePaths(environment: environment), let index = try? SoundIndex.openForReading(file: paths.database) {
            imported = (try? index.all().map(\.name)) ?? []
        }
        return (builtIn + imported).filter { $0.hasPrefix(prefix) }
    }
}

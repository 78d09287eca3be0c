import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime

// `presets list|show|save|remove`: parse, call the runtime (UserData), print. Data goes to
// standard output, messages to standard error. Exit statuses: 0 done; 64 a refused name or value
// (a built-in preset cannot be overwritten or removed); 66 no such preset; 78 the database cannot
// be used (damaged, read-only, from a newer release: the message names it and says what to do).

/// Runs a call into the user's data; its failure is said on standard error and becomes the exit status.
func userData<R>(_ body: (UserData) throws(NapSetupError) -> R) throws -> R {
    do throws(NapSetupError) {
        return try body(try UserData())
    } catch {
        throw ExitStatus.reporting(error)
    }
}

struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List, show, save and remove presets: a nap's timers, and perhaps its alarm, under a name.",
        discussion: """
        Built in: basic (30s → 20m, failsafe 30m; the default preset unless `snoozefuse config set \
        preset NAME` says otherwise) and quick-test (2s → 5s, failsafe 15s). They cannot be \
        overwritten or removed (exit 64).

        A saved preset always holds the timers (release, nap, max) and may hold the alarm's \
        choices: ring-limit, snooze, sound, volume, fade-in, device, system-volume, source, \
        emitter, bpm, sleep-sound, sleep-volume, sleep-device, dismiss. `snoozefuse nap --preset NAME` \
        uses it: its values beat your settings, and flags and SNOOZEFUSE_* variables beat it.

        Examples:
          snoozefuse presets save power --nap 15m --max 25m --sound chime --volume 60
          snoozefuse presets save power --ring-limit 5m        (keeps the rest of power)
          snoozefuse presets save long --from basic --nap 45m --max 1h
          snoozefuse nap --preset power --no-hold
          snoozefuse presets list --json
        """,
        subcommands: [List.self, Show.self, Save.self, Remove.self],
        defaultSubcommand: List.self
    )

    /// A preset in JSON.
    struct PresetJSON: Encodable {
        var name: String
        var builtIn: Bool
        var isDefault: Bool
        var summary: String?
        var savedAt: String?
        var values: [String: NapJSONValue]

        init(_ preset: NapPreset, defaultPreset: String) {
            name = preset.name
            builtIn = preset.isBuiltIn
            isDefault = preset.name.lowercased() == defaultPreset.lowercased()
            summary = preset.summary
            savedAt = preset.savedAt.map { $0.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
            var values: [String: NapJSONValue] = [:]
            for (key, texts) in preset.knownValues { values[key.rawValue] = key.isList ? .list(texts) : .text(texts.joined(separator: "; ")) }
            self.values = values
        }

        enum CodingKeys: String, CodingKey {
            case name, builtIn, summary, savedAt, values
            case isDefault = "default"
        }
    }

    /// The default preset's name: the setting `preset`, else basic.
    static func defaultPreset(_ data: UserData) throws(NapSetupError) -> String {
        try data.settings()[.preset]?.first ?? NapSettingKey.preset.builtInDefault?.text ?? "basic"
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the built-in presets, then yours (the default one is marked).")

        @Flag(help: "Print the list as JSON on standard output.")
        var json = false

        func run() throws {
            let (presets, defaultPreset) = try userData { data throws(NapSetupError) in (try data.presets(), try Presets.defaultPreset(data)) }
            if json {
                printJSON(presets.map { PresetJSON($0, defaultPreset: defaultPreset) })
                return
            }
            let width = presets.map { TerminalColumns.width(of: $0.name) }.max() ?? 0
            for preset in presets {
                var tags = [preset.isBuiltIn ? "built-in" : "saved"]
                if preset.name.lowercased() == defaultPreset.lowercased() { tags.append("default") }
                writeLine("\(padded(preset.name, to: width))  \(preset.shortDescription)  (\(joined(tags, separator: ", ")))", to: STDOUT_FILENO)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show every value a preset holds (exit 66 when there is no such preset).")

        @Argument(help: ArgumentHelp("The preset's name.", valueName: "name"),
                  completion: .custom { _, _, prefix in CompletionNames.presets(prefix: prefix) })
        var name: String

        @Flag(help: "Print the preset as JSON on standard output.")
        var json = false

        func run() throws {
            let (preset, defaultPreset) = try userData { data throws(NapSetupError) in (try data.preset(named: name), try Presets.defaultPreset(data)) }
            if json {
                printJSON(PresetJSON(preset, defaultPreset: defaultPreset))
                return
            }
            let width = preset.knownValues.map(\.key.rawValue.count).max() ?? 0
            for (key, values) in preset.knownValues {
                writeLine("\(padded(key.rawValue, to: width))  \(values.joined(separator: "; "))", to: STDOUT_FILENO)
            }
        }
    }

    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "save",
            abstract: "Save a preset: the timer and alarm flags given, over the values of --from.",
            discussion: """
            Values not given come from --from PRESET; without it, from the saved preset of the same \
            name (so a save changes only what it names), else from the default preset. Every value \
            is checked as the nap flag checks it (same message, exit 64). Built-in names are refused \
            (exit 64).
            """)

        @Argument(help: ArgumentHelp("The preset's name (not a built-in one).", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("The preset to take the values not given from.", valueName: "preset"))
        var from: String?

        @Flag(help: "Print the saved preset as JSON on standard output.")
        var json = false

        @OptionGroup var settings: NapSettingOptions

        func run() throws {
            let saved = try userData { data throws(NapSetupError) in
                (try data.savePreset(named: name, flags: settings.given, from: from), try Presets.defaultPreset(data))
            }
            let (result, defaultPreset) = saved
            let given = Set(settings.given.keys.map(\.rawValue))
            let inherited = result.preset.knownValues.map(\.key.rawValue).filter { !given.contains($0) }
            var message = "snoozefuse: \(result.replaced ? "updated" : "saved") preset \"\(result.preset.name)\": \(result.preset.shortDescription)"
            if !inherited.isEmpty { message += " (\(inherited.joined(separator: ", ")) from \(result.base))" }
            writeLine(message, to: STDERR_FILENO)
            if json { printJSON(PresetJSON(result.preset, defaultPreset: defaultPreset)) }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a saved preset (built-in presets cannot be removed: exit 64; no such preset: exit 66).")

        @Argument(help: ArgumentHelp("The preset's name.", valueName: "name"),
                  completion: .custom { _, _, prefix in CompletionNames.presets(prefix: prefix, savedOnly: true) })
        var name: String

        func run() throws {
            let removed = try userData { data throws(NapSetupError) in try data.removePreset(named: name) }
            writeLine("snoozefuse: removed preset \"\(removed.name)\".", to: STDERR_FILENO)
        }
    }
}

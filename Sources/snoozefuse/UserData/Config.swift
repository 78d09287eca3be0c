import ArgumentParser
import Foundation
import SnoozeFuseRuntime

// `config list|get|set|unset`: a default for every `nap` flag, kept in the database. Exit statuses:
// 0 done; 64 an unknown setting or a refused value (the flag's own message); 78 the database
// cannot be used.

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Your defaults for every nap flag: list, get, set and unset them.",
        discussion: """
        The settings are the nap flags without their dashes: \(NapSettingKey.allCases.map(\.rawValue).joined(separator: ", ")). \
        Each value is checked as its flag checks it (same message, exit 64): `config set volume 0` \
        is refused as `nap --volume 0` is. `preset` is the default preset, which fills in what your \
        settings leave open; `no-hold`, `quiet` and `verbose` are true or false; `emitter` takes one or more \
        plugins.

        A nap takes each setting from, strongest first: its flag, SNOOZEFUSE_<SETTING> in the \
        environment, the preset named with --preset, these settings, the default preset, the \
        built-in default. `snoozefuse nap --dry-run` shows where each value came from.

        Examples:
          snoozefuse config set sound chime
          snoozefuse config set emitter led terminal:bell=1
          snoozefuse config set preset power
          snoozefuse config get volume
          snoozefuse config unset sound
          snoozefuse config list --json
        """,
        subcommands: [List.self, Get.self, Assign.self, Unset.self],
        defaultSubcommand: List.self
    )

    /// One setting in JSON.
    struct SettingJSON: Encodable {
        var key: String
        var value: NapJSONValue
        var builtInDefault: NapJSONValue
        var flag: String
        var environment: String
        var description: String

        init(_ key: NapSettingKey, _ values: [String]?) {
            self.key = key.rawValue
            value = values.map { key.isList ? .list($0) : .text($0.joined(separator: "; ")) } ?? .none
            builtInDefault = NapJSONValue(key, key.builtInDefault)
            flag = key.flag
            environment = key.environmentVariable
            description = key.help
        }

        enum CodingKeys: String, CodingKey {
            case key, value, flag, environment, description
            case builtInDefault = "default"
        }
    }

    /// The built-in default for people.
    static func defaultText(_ key: NapSettingKey) -> String {
        switch key {
        case .release, .nap, .max: "from the default preset"
        default: key.builtInDefault?.description ?? key.noneDescription
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every setting: its value, or its default when it is not set.")

        @Flag(help: "Print the settings as JSON on standard output.")
        var json = false

        func run() throws {
            let settings = try userData { data throws(NapSetupError) in try data.settings() }
            if json {
                printJSON(NapSettingKey.allCases.map { SettingJSON($0, settings[$0]) })
                return
            }
            let width = NapSettingKey.allCases.map(\.rawValue.count).max() ?? 0
            for key in NapSettingKey.allCases {
                let value = settings[key].map { $0.joined(separator: "; ") } ?? "(not set; default: \(Config.defaultText(key)))"
                writeLine("\(padded(key.rawValue, to: width))  \(value)", to: STDOUT_FILENO)
            }
        }
    }

    /// The settings' names, for the shells' completion of `config get|set|unset`.
    static let keyCompletion = CompletionKind.list(NapSettingKey.allCases.map(\.rawValue))

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print a setting's value (one line per value); when it is not set, nothing on standard output and its default on standard error.")

        @Argument(help: ArgumentHelp("The setting (a nap flag without its dashes).", valueName: "key"), completion: Config.keyCompletion)
        var key: String

        @Flag(help: "Print the setting as JSON on standard output (value null when not set).")
        var json = false

        func run() throws {
            let (setting, values) = try userData { data throws(NapSetupError) in
                let setting = try UserData.settingKey(key)
                return (setting, try data.settings()[setting])
            }
            if json {
                printJSON(SettingJSON(setting, values))
            } else if let values {
                for value in values { writeLine(value, to: STDOUT_FILENO) }
            } else {
                writeLine("snoozefuse: \(setting.rawValue) is not set (default: \(Config.defaultText(setting))).", to: STDERR_FILENO)
            }
        }
    }

    struct Assign: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set a setting, checked as its flag is (exit 64 with the flag's message when refused).",
            discussion: "emitter takes one or more plugins; every other setting one value.")

        @Argument(help: ArgumentHelp("The setting (a nap flag without its dashes).", valueName: "key"), completion: Config.keyCompletion)
        var key: String

        @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Its value (emitter: one or more).", valueName: "value"))
        var values: [String] = []

        func run() throws {
            let (setting, value) = try userData { data throws(NapSetupError) in
                let setting = try UserData.settingKey(key)
                return (setting, try data.set(setting, to: values))
            }
            writeLine("snoozefuse: \(setting.rawValue) = \(value.description)", to: STDERR_FILENO)
        }
    }

    struct Unset: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unset", abstract: "Remove a setting: naps use its default again.")

        @Argument(help: ArgumentHelp("The setting (a nap flag without its dashes).", valueName: "key"), completion: Config.keyCompletion)
        var key: String

        func run() throws {
            let (setting, removed) = try userData { data throws(NapSetupError) in
                let setting = try UserData.settingKey(key)
                return (setting, try data.unset(setting))
            }
            writeLine("snoozefuse: \(setting.rawValue) \(removed ? "is unset" : "was not set"); default: \(Config.defaultText(setting)).", to: STDERR_FILENO)
        }
    }
}

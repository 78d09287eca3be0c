import ArgumentParser

/// The short commands that status bars and scripts start again and again (`status` every second,
/// `stop`, `snooze`, `add`, `presets list`, `--version`), parsed without ArgumentParser's
/// reflection of the command tree: 10–14 M of their 14–24 M instructions (issue 23).
///
/// Not a second parser to keep in step by hand: the names come from ArgumentParser's own
/// definitions (``shape(of:)``, generated from `--experimental-dump-help` by
/// `Scripts/quick-parse-table.py`, and a test fails when they differ), the values go through the
/// same conversions, and only the simplest forms are taken. Anything else (`--help`, `--opt=value`,
/// a repeated or unknown flag, a value it cannot convert, a command that does not validate) is
/// left to ArgumentParser, which parses it and says what is wrong. A test checks that both give
/// the same command for every form taken here (`snoozefuse --quick-parse-check ARGUMENTS…`
/// prints what each made of them).
enum QuickParse {
    /// The arguments a command takes, by the name written on the command line. Pairs in order,
    /// not dictionaries: a handful of names, and a dictionary's first use (hashing, its generic
    /// metadata) costs more than this whole parse (issue 23).
    struct Shape {
        /// `--name` or `-n` → the property.
        var flags: KeyValuePairs<String, String>
        var options: KeyValuePairs<String, String>
        /// The positional arguments, in order.
        var positionals: [String]

        func flag(written: String) -> String? { flags.first { $0.key == written }?.value }
        func option(written: String) -> String? { options.first { $0.key == written }?.value }
    }

    /// What a command's arguments came to.
    struct Values {
        var flags: [String] = []
        var optionValues: [(name: String, value: String)] = []
        var positionals: [String] = []

        func flag(_ name: String) -> Bool { flags.contains(name) }
        /// The value given to the option whose property is `name`.
        func option(_ name: String) -> String? { optionValues.first { $0.name == name }?.value }
    }

    /// The commands parsed here, by their path (a switch: a dictionary's first use costs more than
    /// this whole parse).
    static func command(at path: String) -> (any QuickParsable.Type)? {
        switch path {
        case "status": Status.self
        case "stop": Stop.self
        case "snooze": Snooze.self
        case "add": Add.self
        case "presets list": Presets.List.self
        case "sounds play": Sounds.Play.self
        default: nil
        }
    }

    /// First on the command line, for the tests: print what QuickParse and ArgumentParser each
    /// made of the arguments after it, and run nothing (undocumented in `--help`).
    static let checkFlag = "--quick-parse-check"

    /// Whether `arguments` ask for the version alone.
    static func isVersion(_ arguments: [String]) -> Bool { arguments == ["--version"] }

    /// The command `arguments` (without the program's name) stand for, or nil: ArgumentParser's.
    static func command(_ arguments: [String]) -> (any ParsableCommand)? {
        for words in [2, 1] where arguments.count >= words {
            // One argument with a space in it (`"presets list"`) is not two words.
            guard !arguments.prefix(words).contains(where: { $0.contains(" ") }) else { return nil }
            let path = words == 2 ? arguments[0] + " " + arguments[1] : arguments[0]
            guard let type = command(at: path), let shape = shape(of: path) else { continue }
            guard let values = values(Array(arguments.dropFirst(words)), of: shape), var command = type.init(quick: values) else { return nil }
            do { try command.validate() } catch { return nil }
            return command
        }
        return nil
    }

    /// Flags (each at most once), options followed by a value of their own (not one that starts
    /// with `-`), positionals (after `--` too); anything else is nil.
    static func values(_ arguments: [String], of shape: Shape) -> Values? {
        var values = Values()
        var index = 0
        var positionalsOnly = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !positionalsOnly, argument == "--" {
                positionalsOnly = true
            } else if !positionalsOnly, argument.hasPrefix("-"), argument != "-" {
                if let name = shape.flag(written: argument) {
                    guard !values.flag(name) else { return nil }
                    values.flags.append(name)
                } else if let name = shape.option(written: argument), values.option(name) == nil, index < arguments.count,
                          !arguments[index].hasPrefix("-") {
                    values.optionValues.append((name, arguments[index]))
                    index += 1
                } else {
                    return nil
                }
            } else {
                guard values.positionals.count < shape.positionals.count else { return nil }
                values.positionals.append(argument)
            }
        }
        return values
    }
}

/// A command that ``QuickParse`` can make: from its values, as ArgumentParser would have.
protocol QuickParsable: ParsableCommand {
    /// nil when a value is not one the command takes (ArgumentParser then says why).
    init?(quick values: QuickParse.Values)
}

extension Status: QuickParsable {
    init?(quick values: QuickParse.Values) {
        self.init()
        follow = values.flag("follow")
        json = values.flag("json")
        guard let format = values.option("format").map(Format.init(argument:)) ?? .text else { return nil }
        self.format = format
    }
}

extension Stop: QuickParsable {
    init?(quick values: QuickParse.Values) {
        self.init()
        yes = values.flag("yes")
        json = values.flag("json")
    }
}

extension Snooze: QuickParsable {
    init?(quick values: QuickParse.Values) {
        self.init()
        json = values.flag("json")
        if let text = values.positionals.first {
            guard let duration = try? parseDurationOption(text) else { return nil }
            self.duration = duration
        } else {
            duration = nil
        }
    }
}

extension Add: QuickParsable {
    /// A duration that starts with `-` is left to ArgumentParser (it takes it whatever it looks like).
    init?(quick values: QuickParse.Values) {
        guard let duration = values.positionals.first else { return nil }
        self.init()
        self.duration = duration
        json = values.flag("json")
    }
}

extension Presets.List: QuickParsable {
    init?(quick values: QuickParse.Values) {
        self.init()
        json = values.flag("json")
    }
}

/// `sounds play`: the alarm's own path (issue 23: ArgumentParser's reflection of the command scans
/// the binary's protocol conformance records, whose pages then stay in a playing alarm's memory).
/// Every property is set, its default too: a property left as `init()` made it is a definition,
/// not a value (ArgumentParser's wrappers).
extension Sounds.Play: QuickParsable {
    init?(quick values: QuickParse.Values) {
        self.init()
        path = values.positionals.first
        do {
            duration = try values.option("duration").map(parseDurationOption)
            fadeIn = try values.option("fadeIn").map(parseDurationOption) ?? .zero
        } catch {
            return nil
        }
        volume = 80
        if let text = values.option("volume") {
            guard let volume = Int(argument: text) else { return nil }
            self.volume = volume
        }
        device = values.option("device") ?? "default"
        events = nil
        if let text = values.option("events") {
            guard let format = EventFormat(argument: text) else { return nil }
            events = format
        }
    }
}

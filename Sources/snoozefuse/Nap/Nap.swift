import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import Synchronization

struct Nap: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nap",
        abstract: "Take a nap and wake to an alarm.",
        discussion: """
        The session runs release → nap → alarm. The release timer gives you time to drift off; \
        the nap timer is the nap itself; the max timer is a failsafe that rings the alarm at the \
        latest max after the start, whatever else happens. With --no-hold the release timer \
        starts at once.

        What holds the nap before its release (--hold): key (the default) is a key held down in \
        this terminal, let go as you fall asleep; desktop is you using the machine: any key or \
        pointer input anywhere in the desktop session holds it, --idle-after (default 10s) \
        without input starts the release, and input during the release starts it over (no \
        terminal needed; the idle time comes from the first of GNOME, a Wayland compositor's idle \
        notifier (sway and the other wlroots compositors, KWin), the X server (not under Wayland), \
        org.freedesktop.ScreenSaver and logind that answers: `snoozefuse doctor` says which). Once the nap has started, input changes nothing.

        Durations: \(DurationParser.acceptedForms).
        Presets: \(Preset.builtIn.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")); \
        save your own with `snoozefuse presets save`.

        Where each setting comes from, strongest first: the flag; the environment \
        (SNOOZEFUSE_RELEASE, SNOOZEFUSE_SOUND, … one variable per flag, SNOOZEFUSE_EMITTER one \
        plugin a line); the preset named with --preset (or SNOOZEFUSE_PRESET); your settings \
        (`snoozefuse config`); the default preset (the setting preset, basic unless changed); the \
        built-in default. --dry-run prints every setting and where it came from, checks what the \
        nap would refuse before it begins (the sound, each plugin named and its configuration, \
        with the nap's exit codes), and does not nap.

        Keys on the terminal. Before the nap: hold any key while you drift off (not with \
        --no-hold). While napping or snoozed: + and - move the alarm by a minute (never closer \
        than 10 s); q then y cancels. While ringing: s snoozes (--snooze, default 5m); stopping \
        for good takes a waking mind (--dismiss): word (the default) shows a short word to type \
        and confirm with Enter, and a wrong word keeps ringing; hold wants a key held down for \
        3 s; key stops at one Enter, space or d (scripts; trust yourself). `snoozefuse stop` \
        from another terminal asks the same. Ctrl-C cancels at any time (exit 130). Every nap is \
        recorded in `snoozefuse history` when it ends.

        Examples:
          snoozefuse nap --no-hold
          snoozefuse nap --hold desktop --idle-after 15s
          snoozefuse nap --no-hold --nap 25m --max 40m --ring-limit 5m
          snoozefuse nap --preset quick-test --no-hold --events jsonl | jq .
          snoozefuse nap --no-hold --sound rooster.wav --volume 60 --fade-in 30s
          snoozefuse nap --sleep-sound noise:color=brown --sleep-volume 40
          SNOOZEFUSE_NAP=25m snoozefuse nap --dry-run

        The alarm plays on --device (an ALSA PCM; `snoozefuse devices` lists them), else on \
        `default`, else on the terminal bell: it never fails silently. Without --sound it plays the \
        built-in sound beep; --sound NAME picks another built-in (beep, chime, rising, digital, \
        gentle) or an imported sound, and --sound PATH a file. A sound file is checked before the \
        nap begins. A database that cannot be read (damaged, from a newer release) does not stop a \
        nap: it naps without your settings and saved presets, and says so.
        """
    )

    @Option(help: settingHelp(.preset), completion: .custom { _, _, prefix in CompletionNames.presets(prefix: prefix) })
    var preset: String?

    @Option(help: settingHelp(.hold), completion: .list(HoldSource.allCases.map(\.rawValue)))
    var hold: String?

    @Flag(name: .customLong("no-hold"), help: "\(NapSettingKey.noHold.help)")
    var noHold = false

    @Option(help: settingHelp(.events), completion: .list(EventFormat.allCases.map(\.rawValue)))
    var events: String?

    @Flag(inversion: .prefixedNo, help: "--quiet: \(NapSettingKey.quiet.help) --no-quiet: show them even where the setting quiet says otherwise.")
    var quiet: Bool?

    @Flag(help: "One plain line per change, and no status area redrawn in place nor any cursor movement: for screen readers and terminals that cannot move the cursor (automatic with TERM=dumb).")
    var plain = false

    @Option(help: ArgumentHelp("Ring at this time of day (today, else tomorrow) rather than after --nap: \(ClockTime.acceptedForms). The release is counted in and the hold does not move it (it rings even if no hold comes); it sets the nap and the failsafe (not with --nap or --max), and is refused when it falls within the release.", valueName: "time"))
    var until: String?

    @Flag(name: .customLong("dry-run"), help: "Print every setting of the nap and where it came from (flag, environment, preset, config, default preset, built-in default), then exit without napping.")
    var dryRun = false

    @Flag(help: "With --dry-run: print the settings as one JSON object. (With --events jsonl, --dry-run prints them as one `configuration` event line.)")
    var json = false

    @Flag(inversion: .prefixedNo, help: "--verbose: \(NapSettingKey.verbose.help) --no-verbose: shorten them even where the setting verbose says otherwise.")
    var verbose: Bool?

    @OptionGroup var settings: NapSettingOptions

    /// Every setting flag given.
    var flags: [NapSettingKey: [String]] {
        var flags = settings.given
        if let preset { flags[.preset] = [preset] }
        if let hold {
            flags[.hold] = [hold]
            // A hold named on the command line beats a `no-hold` setting.
            flags[.noHold] = ["false"]
        }
        if noHold { flags[.noHold] = ["true"] }
        if let events { flags[.events] = [events] }
        if let quiet { flags[.quiet] = [quiet ? "true" : "false"] }
        if let verbose { flags[.verbose] = [verbose ? "true" : "false"] }
        return flags
    }

    /// `--hold` was a flag (wait for a held key) before it took a value. When `arguments` give a
    /// `nap` a `--hold` with no value after it, the line that says how it is spelled now.
    static func bareHoldHint(_ arguments: [String]) -> String? {
        guard arguments.first == configuration.commandName, let at = arguments.firstIndex(of: "--hold") else { return nil }
        let next = arguments.index(after: at)
        guard next == arguments.endIndex || arguments[next].hasPrefix("-") else { return nil }
        return "snoozefuse: --hold now says what holds the nap: --hold key is the --hold of earlier releases (a key held down in this terminal); --hold desktop is your use of the machine; --hold none is --no-hold."
    }

    func validate() throws {
        try checkSettingFlags(flags)
        if let until {
            do throws(ClockTimeParseError) {
                _ = try ClockTime(parsing: until)
            } catch {
                throw ValidationError("--until: \(error)")
            }
            if let clash = [NapSettingKey.nap, .max].first(where: { settings.given[$0] != nil }) {
                throw ValidationError("--until sets when the alarm rings, so the nap's length and the failsafe follow from it: leave out \(clash.flag).")
            }
        }
        if json && !dryRun {
            throw ValidationError("--json goes with --dry-run (the settings as JSON); a nap's own events are --events jsonl.")
        }
    }
}

extension Nap: LoopCommand {
    func run(on loop: EventLoop) async throws {
        var resolved = try resolveNapSettings(flags: flags)
        if let until, let time = try? ClockTime(parsing: until) {
            do throws(NapSetupError) {
                try resolved.wake(at: time, as: until, now: Date())
            } catch {
                throw ExitStatus.reporting(error)
            }
        }
        for warning in resolved.warnings { writeLine("snoozefuse: warning: \(warning)", to: STDERR_FILENO) }
        if dryRun {
            printDryRun(resolved)
            // What the nap would refuse before it begins, refused here too, with the same exit.
            do throws(NapSetupError) {
                try LiveNap.check(resolved.configuration(showsCountdown: false, usesColour: false)) { writeLine("snoozefuse: \($0)", to: STDERR_FILENO) }
            } catch {
                throw ExitStatus.reporting(error)
            }
            return
        }
        guard resolved.hold != .key || isatty(STDIN_FILENO) == 1 else {
            writeLine("snoozefuse: --hold key reads a held key from a terminal, and standard input is not one; use --hold desktop (your use of the machine holds the nap) or --no-hold (the release timer starts at once).", to: STDERR_FILENO)
            throw ExitStatus.usage
        }
        let terminal = TerminalStyle.detect(plain: plain)
        // The bell's plain line is for a terminal that cannot move its cursor; off a terminal
        // (a pipe, a log) it writes its line at every ring, as ever.
        let configuration = resolved.configuration(showsCountdown: !resolved.quiet && terminal.movesCursor, usesColour: terminal.usesColour,
                                                   movesCursor: terminal.movesCursor || !terminal.isTerminal)
        // A bad sound file, an unknown plugin or a configuration a plugin refuses is reported now
        // (exit 65/66/64/78), not when the alarm should ring.
        let nap: LiveNap
        let setUp = LinesUntilTheNap()
        do throws(NapSetupError) {
            nap = try LiveNap(configuration, loop: loop) { setUp.say($0) }
        } catch {
            for line in setUp.take() { writeLine("snoozefuse: \(line)", to: STDERR_FILENO) }
            throw ExitStatus.reporting(error)
        }
        let console = Console(jsonLines: resolved.events == "jsonl", quiet: resolved.quiet, verbose: resolved.verbose, terminal: terminal,
                              timers: configuration.timers, presetName: configuration.presetName,
                              hold: nap.hold, dismissal: configuration.dismissal,
                              keysOnTerminal: isatty(STDIN_FILENO) == 1, showsArea: configuration.showsCountdown,
                              background: ForegroundKeys.isForeground() == false)
        console.wakeAt = configuration.wakeAt
        console.sayBeforeTheNap(setUp.take())
        console.announce(hold: nap.hold, idleAfter: configuration.idleAfter)
        async let result = nap.run()
        for await record in nap.records { console.render(record) }
        let ended = await result
        console.finish(outcome: ended.outcome)
        throw ExitStatus.forOutcome(ended.outcome, interrupted: ended.interrupted)
    }

    /// `--dry-run`: each setting, its value and where it came from; JSON with `--json` (a document)
    /// or `--events jsonl` (one `configuration` event line).
    func printDryRun(_ resolved: ResolvedNapSettings) {
        if json || resolved.events == "jsonl" {
            struct Entry: Encodable {
                var key: String
                var value: NapJSONValue
                var source: String
                var from: String
                /// What the nap does where another setting overrides this one (`hold` under `no-hold`).
                var effective: String?
            }
            struct Document: Encodable {
                var event: String?
                var settings: [Entry]
            }
            var entries = resolved.settings.map { setting in
                Entry(key: setting.key.rawValue, value: NapJSONValue(setting.key, setting.value), source: setting.source.layer,
                      from: setting.source.description(of: setting.key), effective: resolved.overridden(setting.key))
            }
            if let wakeAt = resolved.wakeAt, let until {
                entries.append(Entry(key: "until", value: .text(WallClockText.iso8601(secondsSince1970: wakeAt.timeIntervalSince1970)),
                                     source: NapSettingSource.flag.layer, from: "--until \(until)"))
            }
            if json {
                printJSON(Document(event: nil, settings: entries))
            } else {
                writeLine(compactJSON(Document(event: "configuration", settings: entries)), to: STDOUT_FILENO)
            }
            return
        }
        let values = resolved.settings.map { $0.value?.description ?? $0.key.noneDescription }
        let keyWidth = resolved.settings.map(\.key.rawValue.count).max() ?? 0
        let valueWidth = min(values.map { TerminalColumns.width(of: $0) }.max() ?? 0, 40)
        for (setting, value) in zip(resolved.settings, values) {
            let key = padded(setting.key.rawValue, to: keyWidth)
            let shown = padded(value, to: valueWidth)
            let override = resolved.overridden(setting.key).map { "; this nap is held by \($0 == HoldSource.none.rawValue ? "nothing" : $0): no-hold wins" } ?? ""
            writeLine("\(key)  \(shown)  \(setting.source.description(of: setting.key))\(override)", to: STDOUT_FILENO)
        }
        if let wakeAt = resolved.wakeAt, let until {
            let when = NapStatus.localTime(wakeAt.timeIntervalSince1970, now: Date().timeIntervalSince1970)
            writeLine("\(padded("until", to: keyWidth))  \(padded(when, to: valueWidth))  --until \(until): the alarm rings then, however long the hold lasts", to: STDOUT_FILENO)
        }
    }
}

/// A setting's value in JSON: a string, a list of strings (`emitter`), or null for none.
enum NapJSONValue: Encodable {
    case text(String)
    case list([String])
    case none

    init(_ key: NapSettingKey, _ value: NapSettingValue?) {
        guard let value else {
            self = .none
            return
        }
        self = key.isList ? .list(value.texts) : .text(value.description)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .list(let items): try container.encode(items)
        case .none: try container.encodeNil()
        }
    }
}

/// `value` as one line of JSON, keys sorted.
func compactJSON(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
}

enum EventFormat: String, ExpressibleByArgument, CaseIterable {
    case jsonl
}

/// What a nap's set-up says before the nap's console exists: kept until ``take()`` (the console
/// then says it, its warnings as one line), and written at once after.
final class LinesUntilTheNap: Sendable {
    private let state = Mutex<(collecting: Bool, lines: [String])>((true, []))

    func say(_ line: String) {
        let now = state.withLock { state -> Bool in
            if state.collecting { state.lines.append(line) }
            return !state.collecting
        }
        if now { writeLine("snoozefuse: \(line)", to: STDERR_FILENO) }
    }

    /// What was kept; what is said from now on is written at once.
    func take() -> [String] {
        state.withLock { state in
            state.collecting = false
            defer { state.lines = [] }
            return state.lines
        }
    }
}


import ArgumentParser
import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import SnoozeFuseSoundLibrary

// `sounds validate|import|list|remove|rename|export`: parse, call the sound library, print.
// Data goes to standard output, messages to standard error.
//
// Exit statuses: 0 done; 64 refused (a built-in sound would be removed, renamed or overwritten, or a
// name is taken or empty); 65 not sound that can be decoded or repaired, or cut short (truncated);
// 66 no such file or sound, or a path that is not a regular file; 78 the library folder or index
// cannot be used (read-only, or an index that cannot be read for a name).

/// Opens the user's library with the built-in sounds that are installed, and says on standard error
/// what opening it did (an index rebuilt from the sound files, files listed again, leftovers of an
/// interrupted import removed).
func openSoundLibrary() throws -> SoundLibrary {
    let builtIns = BuiltInSounds.locate()
    var named: [String: String] = [:]
    for name in builtIns?.names ?? [] { named[name] = builtIns?.path(named: name) }
    let sounds = try library { () throws(SoundLibraryError) in try SoundLibrary.open(builtIns: named) }
    for message in sounds.opening.messages { writeLine("snoozefuse: \(message)", to: STDERR_FILENO) }
    return sounds
}

/// Says what went wrong on standard error and returns the exit status for it.
func fail(_ error: SoundLibraryError) -> ExitCode {
    writeLine("snoozefuse: \(error.message)", to: STDERR_FILENO)
    switch error.kind {
    case .missingInput, .notFound: return ExitStatus.missingInput
    case .badData: return ExitStatus.badData
    case .refused: return ExitStatus.usage
    case .storage: return ExitStatus.badConfig
    case .unavailable: return ExitStatus.unavailable
    }
}

/// Runs a library call, turning its errors into messages and exit statuses.
func library<R>(_ body: () throws(SoundLibraryError) -> R) throws -> R {
    do { return try body() } catch { throw fail(error) }
}

/// The file of an imported sound called `name`, for `--sound NAME` (nil when there is none). Never
/// waits on another process; an index that cannot be read is reported and exits 78.
func importedSoundPath(named name: String) throws -> String? {
    try library { () throws(SoundLibraryError) in try SoundLibrary.importedSoundPath(named: name) }
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    // Encoding these plain value types cannot fail.
    let data = (try? encoder.encode(value)) ?? Data("null".utf8)
    writeLine(String(decoding: data, as: UTF8.self), to: STDOUT_FILENO)
}

extension Sounds {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Check a sound file: for CAF the full chunk report, for other files what libsndfile sees.",
            discussion: """
            Decodes the whole file: one that decodes to fewer frames than it declares (cut short) is \
            reported as "truncated: read N of M frames". Exits 0 when the file can be imported (with \
            --notification: when iOS would accept it as a notification sound), 65 when not (a \
            truncated file included), 66 when it is missing or not a regular file.
            """
        )

        @Argument(help: ArgumentHelp("The sound file.", valueName: "file"))
        var file: String

        @Flag(help: "Judge it as an iOS notification sound (CAF, AIFF or WAV; linear PCM, IMA4, µ-law or a-law; under 30 s).")
        var notification = false

        @Flag(help: "Print the report as JSON on standard output.")
        var json = false

        func run() throws {
            let validation = try library { () throws(SoundLibraryError) in try SoundValidation.validate(path: file) }
            let passes = notification ? validation.notificationProblems.isEmpty && validation.cafReport?.isValid != false
                : validation.importable
            if json {
                printJSON(ValidationJSON(validation, notification: notification, passes: passes))
            } else {
                for line in validationText(validation) { writeLine(line, to: STDOUT_FILENO) }
            }
            if !passes {
                let reason = notification ? validation.notificationProblems.first ?? validation.problem ?? "not valid"
                    : validation.problem ?? "not valid"
                writeLine("snoozefuse: \(file): \(reason)", to: STDERR_FILENO)
                throw ExitStatus.badData
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import a sound file into your library (stored as CAF; lossless for lossless input).",
            discussion: """
            Reads anything libsndfile reads, plus CAF files it rejects that can be repaired (IMA4, ALAC \
            written with format flags 0, a data chunk of size -1). The stored file carries the \
            sound's name and details inside it (a CAF info chunk), so the library can always be \
            rebuilt from its files. The same audio imported twice is reported, not stored again. \
            Built-in names cannot be used. A file that decodes to fewer frames than it declares is \
            refused ("truncated: read N of M frames") unless --accept-truncated. Exits 65 for \
            undecodable or truncated data, 66 for a missing file (or a folder, FIFO or device), 64 \
            for a refused name, 78 when the library cannot be written.
            """
        )

        @Argument(help: ArgumentHelp("The sound file.", valueName: "file"))
        var file: String

        @Option(help: ArgumentHelp("The name to use (default: the file's name without extension). A taken name gets a number: NAME (2).", valueName: "name"))
        var name: String?

        @Flag(name: .customLong("accept-truncated"), help: "Import a file that decodes to fewer frames than it declares: the part that decodes, with a warning.")
        var acceptTruncated = false

        func run() throws {
            let sounds = try openSoundLibrary()
            let result = try library { () throws(SoundLibraryError) in
                try sounds.importSound(at: file, name: name, acceptTruncated: acceptTruncated)
            }
            for repair in result.repairs { writeLine("snoozefuse: repaired: \(repair)", to: STDERR_FILENO) }
            if let truncation = result.truncation {
                writeLine("snoozefuse: warning: \(file): \(truncation); imported the \(truncation.framesRead) frames that decode (--accept-truncated).", to: STDERR_FILENO)
            }
            switch result.outcome {
            case .duplicate:
                let existing = result.sound.name
                var line = "snoozefuse: \(file) is already in the library as \"\(existing)\" (the same audio, kept once); nothing imported"
                if let name, name != existing {
                    // A name as a shell word: quoted when it holds anything but letters, digits and -_.
                    func word(_ text: String) -> String {
                        text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } ? text
                            : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
                    }
                    line += ". \"\(name)\" was not made: use \"\(existing)\", or `snoozefuse sounds rename \(word(existing)) \(word(name))`"
                }
                writeLine(line + ".", to: STDERR_FILENO)
            case .imported:
                if let requested = result.requestedName {
                    writeLine("snoozefuse: \"\(requested)\" is taken; imported as \"\(result.sound.name)\".", to: STDERR_FILENO)
                }
                writeLine("snoozefuse: imported \(file) as \"\(result.sound.name)\": \(result.conversion), \(String(format: "%.2f", result.sound.durationSeconds)) s.", to: STDERR_FILENO)
            }
            // How loud it rings: brought to the alarm's loudness, or held below it by its peaks.
            if let failure = result.loudnessFailure {
                writeLine("snoozefuse: warning: the loudness of \(file) could not be measured (\(failure)): an alarm plays it as it is", to: STDERR_FILENO)
            } else if let truePeak = result.sound.truePeak,
                      let line = AlarmLoudness.describe(integrated: result.sound.loudness, truePeak: truePeak) {
                // A warning when it plays 3 dB or more below the alarm's loudness.
                let played = AlarmLoudness.played(integrated: result.sound.loudness, truePeak: truePeak) ?? AlarmLoudness.target
                writeLine("snoozefuse: \(played <= AlarmLoudness.target - 3 ? "warning: " : "")loudness: \(line).", to: STDERR_FILENO)
            } else if result.outcome == .imported {
                writeLine("snoozefuse: warning: \(file) is silent (below -70 LUFS): an alarm cannot play it louder", to: STDERR_FILENO)
            }
            writeLine(result.sound.name, to: STDOUT_FILENO)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the built-in sounds, then your imported ones.",
            discussion: """
            Also checks the library: sound files the index does not list (after a lost, emptied or \
            older index) are listed again from the name stored inside each file, a damaged index is \
            moved aside (kept, never deleted) and rebuilt from the files, and each repair is said on \
            standard error. No sound file is ever deleted by this check.
            """)

        @Flag(help: "Print the list as JSON on standard output.")
        var json = false

        func run() throws {
            let sounds = try openSoundLibrary()
            let entries = try library { () throws(SoundLibraryError) in try sounds.list() }
            if json {
                printJSON(entries.map(SoundJSON.init))
                return
            }
            for entry in entries {
                let kind = entry.isBuiltIn ? "built-in" : "imported"
                let seconds = entry.stored?.durationSeconds ?? entry.info.map { Double($0.frames) / Double(max($0.sampleRate, 1)) }
                let detail = seconds.map { String(format: "%.2f s", $0) } ?? "unreadable"
                writeLine("\(entry.name)\t\(kind)\t\(detail)\t\(loudnessColumn(entry.loudness, entry.truePeak))", to: STDOUT_FILENO)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove an imported sound (built-in sounds cannot be removed: exit 64).")

        @Argument(help: ArgumentHelp("The sound's name.", valueName: "name"),
                  completion: .custom { _, _, prefix in CompletionNames.sounds(prefix: prefix, importedOnly: true) })
        var name: String

        func run() throws {
            let sounds = try openSoundLibrary()
            let removed = try library { () throws(SoundLibraryError) in try sounds.remove(name) }
            writeLine("snoozefuse: removed \"\(removed.name)\".", to: STDERR_FILENO)
            warnAboutUsers(of: removed.name, now: "it is gone")
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename",
            abstract: "Rename an imported sound (built-in sounds cannot be renamed or overwritten: exit 64).",
            discussion: "The new name is written into the sound file too (a new copy, moved into place atomically), then into the index.")

        @Argument(help: ArgumentHelp("The sound's name.", valueName: "name"),
                  completion: .custom { _, _, prefix in CompletionNames.sounds(prefix: prefix, importedOnly: true) })
        var name: String

        @Argument(help: ArgumentHelp("Its new name.", valueName: "new-name"))
        var newName: String

        func run() throws {
            let sounds = try openSoundLibrary()
            let renamed = try library { () throws(SoundLibraryError) in try sounds.rename(name, to: newName) }
            writeLine("snoozefuse: renamed \"\(name)\" to \"\(renamed.name)\".", to: STDERR_FILENO)
            warnAboutUsers(of: name, now: "it is \"\(renamed.name)\" now")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a sound to a CAF file.",
            discussion: "With --notification, a CAF file iOS accepts as a notification sound: 16-bit linear PCM, trimmed to 29.5 s with a fade-out if longer.")

        @Argument(help: ArgumentHelp("The sound's name (built-in or imported).", valueName: "name"),
                  completion: .custom { _, _, prefix in CompletionNames.sounds(prefix: prefix) })
        var name: String

        @Argument(help: ArgumentHelp("The file to write (replaced if it exists).", valueName: "out"))
        var output: String

        @Flag(help: "Make it an iOS notification sound (linear PCM, under 30 s).")
        var notification = false

        func run() throws {
            let sounds = try openSoundLibrary()
            let result = try library { () throws(SoundLibraryError) in
                try sounds.export(name, to: output, notification: notification)
            }
            for change in result.changes { writeLine("snoozefuse: \(change)", to: STDERR_FILENO) }
            writeLine("snoozefuse: wrote \(output).", to: STDERR_FILENO)
        }
    }
}

/// Warns when the settings or saved presets still name a sound that was just removed or renamed:
/// every nap with them would exit 66 (the sound cannot be found) until they are changed.
private func warnAboutUsers(of name: String, now: String) {
    guard let users = try? UserData().users(ofSound: name), !users.isEmpty else { return }
    writeLine("snoozefuse: warning: \(users.joined(separator: ", ")) still name\(users.count == 1 ? "s" : "") \"\(name)\", and \(now): "
              + "a nap with \(users.count == 1 ? "it" : "them") would exit 66 until changed "
              + "(`snoozefuse config set sound NAME`, `snoozefuse presets save NAME --sound NAME`).", to: STDERR_FILENO)
}

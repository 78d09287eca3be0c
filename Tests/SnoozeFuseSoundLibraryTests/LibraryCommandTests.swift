import Foundation
import SnoozeFuseTestSupport
import Testing

/// `sounds validate --json` output, the fields the tests read.
struct ValidationOutput: Decodable {
    struct CAF: Decodable {
        struct Issue: Decodable {
            var severity: String
            var code: String
            var offset: Int64
        }

        struct Chunk: Decodable {
            var type: String
            var offset: Int64
        }

        var chunks: [Chunk]
        var issues: [Issue]
        var valid: Bool
        var libsndfileCanDecode: Bool
        var repairable: Bool
        var notificationCompatible: Bool
    }

    struct Info: Decodable {
        var format: String
        var sampleRate: Int
        var channels: Int
        var frames: Int64
    }

    var container: String
    var valid: Bool
    var importable: Bool
    var libsndfile: Info?
    var repairs: [String]
    var notificationProblems: [String]
    var caf: CAF?
}

struct ListedSound: Decodable {
    var name: String
    var builtIn: Bool
    var path: String
    var sha256: String?
    var durationSeconds: Double?
}

@Suite("snoozefuse sounds … (the built binary, SQLite checked with sqlite3)")
struct LibraryCommandTests {
    @Test func validateExitCodesAndJSON() async throws {
        let scratch = try Scratch()
        let wav = scratch.path("tone.wav"), ima4 = scratch.path("ima4.caf"), long = scratch.path("long.caf")
        let opus = scratch.path("opus.caf"), text = scratch.path("text.wav"), broken = scratch.path("broken.caf")
        try makeSignal(wav, seconds: 0.5, rate: 48_000)
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-c:a", "adpcm_ima_qt", "-f", "caf", ima4])
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-c:a", "libopus", "-f", "caf", opus])
        try runTool("sox", ["-n", "-r", "8000", "-c", "1", "-e", "u-law", "-t", "caf", long, "synth", "31", "sine", "440"])
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
        // A CAF header whose first chunk claims more bytes than the file has.
        var bytes = Array("caff".utf8) + [0, 1, 0, 0] + Array("desc".utf8) + [0, 0, 0, 0, 0, 0, 0x10, 0]
        bytes += [UInt8](repeating: 0, count: 8)
        try Data(bytes).write(to: URL(fileURLWithPath: broken))

        let valid = try await scratch.run(["sounds", "validate", wav, "--json"])
        let repairable = try await scratch.run(["sounds", "validate", ima4, "--json"])
        let notificationOK = try await scratch.run(["sounds", "validate", ima4, "--notification"])
        let tooLong = try await scratch.run(["sounds", "validate", long, "--notification", "--json"])
        let longButImportable = try await scratch.run(["sounds", "validate", long])
        let unsupported = try await scratch.run(["sounds", "validate", opus, "--json"])
        let notAudio = try await scratch.run(["sounds", "validate", text])
        let malformed = try await scratch.run(["sounds", "validate", broken, "--json"])
        let missing = try await scratch.run(["sounds", "validate", scratch.path("missing.caf")])

        #expect(valid.status == 0, "\(valid.standardError)")
        let validJSON = try JSONDecoder().decode(ValidationOutput.self, from: Data(valid.standardOutput.utf8))
        #expect(validJSON.container == "WAV (Microsoft)")
        #expect(validJSON.importable)
        #expect(validJSON.libsndfile?.sampleRate == 48_000)
        #expect(validJSON.libsndfile?.frames == 24_000)
        #expect(validJSON.caf == nil)

        #expect(repairable.status == 0, "\(repairable.standardError)")
        let imaJSON = try JSONDecoder().decode(ValidationOutput.self, from: Data(repairable.standardOutput.utf8))
        #expect(imaJSON.caf?.libsndfileCanDecode == false)
        #expect(imaJSON.caf?.repairable == true)
        #expect(imaJSON.caf?.chunks.first?.type == "desc")
        #expect(imaJSON.caf?.chunks.first?.offset == 8)
        #expect(imaJSON.repairs.count == 1)
        #expect(imaJSON.importable)
        #expect(notificationOK.status == 0)
        #expect(notificationOK.standardOutput.contains("chunk 'data' at byte"))

        #expect(tooLong.status == 65)
        let longJSON = try JSONDecoder().decode(ValidationOutput.self, from: Data(tooLong.standardOutput.utf8))
        #expect(longJSON.caf?.notificationCompatible == false)
        #expect(longJSON.notificationProblems.first?.contains("shorter than 30 s") == true)
        #expect(longButImportable.status == 0)

        #expect(unsupported.status == 65)
        let opusJSON = try JSONDecoder().decode(ValidationOutput.self, from: Data(unsupported.standardOutput.utf8))
        #expect(opusJSON.importable == false)
        #expect(opusJSON.caf?.valid == true)
        #expect(unsupported.standardError.contains("no decoder for 'opus'"))

        #expect(notAudio.status == 65)
        #expect(malformed.status == 65)
        let brokenJSON = try JSONDecoder().decode(ValidationOutput.self, from: Data(malformed.standardOutput.utf8))
        #expect(brokenJSON.caf?.issues.contains { $0.severity == "error" && $0.code == "chunkPastEndOfFile" && $0.offset == 12 } == true)
        #expect(missing.status == 66)
        #expect(missing.standardOutput.isEmpty)
    }

    @Test func importListRemoveRenameThroughTheBinaryWithTheIndexOnDisk() async throws {
        let scratch = try Scratch()
        let a = scratch.path("Rooster.wav"), b = scratch.path("b.flac")
        try makeSignal(a, seconds: 0.5)
        try makeSignal(b, seconds: 0.7, soxOptions: ["-b", "24"])

        let first = try await scratch.run(["sounds", "import", a])
        let again = try await scratch.run(["sounds", "import", a])
        let againNamed = try await scratch.run(["sounds", "import", a, "--name", "morning"])
        let second = try await scratch.run(["sounds", "import", b, "--name", "wake up"])
        let overwrite = try await scratch.run(["sounds", "import", b, "--name", "chime"])
        let removeBuiltIn = try await scratch.run(["sounds", "remove", "beep"])
        let renameBuiltIn = try await scratch.run(["sounds", "rename", "gentle", "soft"])
        let renameOntoBuiltIn = try await scratch.run(["sounds", "rename", "Rooster", "digital"])
        let renamed = try await scratch.run(["sounds", "rename", "Rooster", "dawn"])
        let removeMissing = try await scratch.run(["sounds", "remove", "nothing"])
        let list = try await scratch.run(["sounds", "list", "--json"])

        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput == "Rooster\n")
        #expect(again.status == 0)
        #expect(again.standardError.contains("already in the library as \"Rooster\""))
        // Under a second name: why that name was not made, and what to do instead.
        #expect(againNamed.status == 0)
        #expect(againNamed.standardOutput == "Rooster\n")
        #expect(againNamed.standardError.contains("already in the library as \"Rooster\" (the same audio, kept once)"), "\(againNamed.standardError)")
        #expect(againNamed.standardError.contains("\"morning\" was not made: use \"Rooster\", or `snoozefuse sounds rename Rooster morning`"), "\(againNamed.standardError)")
        #expect(second.status == 0)
        #expect(second.standardOutput == "wake up\n")
        for refused in [overwrite, removeBuiltIn, renameBuiltIn, renameOntoBuiltIn] {
            #expect(refused.status == 64, "\(refused.standardError)")
            #expect(refused.standardError.contains("built-in"))
        }
        #expect(renamed.status == 0)
        #expect(removeMissing.status == 66)

        #expect(list.status == 0)
        let sounds = try JSONDecoder().decode([ListedSound].self, from: Data(list.standardOutput.utf8))
        #expect(sounds.prefix(5).map(\.name) == ["beep", "chime", "digital", "gentle", "rising"])
        #expect(sounds.prefix(5).allSatisfy { $0.builtIn })
        #expect(sounds.dropFirst(5).map(\.name) == ["dawn", "wake up"])
        #expect(sounds.dropFirst(5).allSatisfy { !$0.builtIn && $0.sha256?.count == 64 })

        // From outside: the sqlite3 shell reads the same index, and the files match it.
        let rows = try indexRows(scratch)
        #expect(rows.map { $0.split(separator: "|")[0] } == ["dawn", "wake up"])
        let files = Set(rows.map { String($0.split(separator: "|")[1]) })
        #expect(try scratch.storedFiles() == files)
        let columns = try runTool("sqlite3", [scratch.database, "SELECT originalFileName, sampleRate, channels, frames, format FROM sounds ORDER BY name"])
        #expect(columns == "Rooster.wav|44100|2|22050|CAF (Apple Core Audio File), Signed 16 bit PCM\n"
            + "b.flac|44100|2|30870|CAF (Apple Core Audio File), Signed 24 bit PCM\n")
        #expect(try permissions(scratch.database) == 0o600)
        #expect(try permissions(scratch.soundsFolder) == 0o700)
        #expect(try permissions(scratch.paths.data.path) == 0o700)
        for file in files {
            let mode = try permissions(scratch.soundsFolder + "/" + file)
            #expect(mode == 0o600, "\(file)")
        }

        let removed = try await scratch.run(["sounds", "remove", "dawn"])
        #expect(removed.status == 0)
        #expect(try indexRows(scratch).count == 1)
        #expect(try scratch.storedFiles().count == 1)
    }

    /// A sound the settings or a saved preset name, renamed or removed: said then, naming them,
    /// not left for every later nap to fail on (exit 66).
    @Test func renamingOrRemovingASoundTheSettingsOrAPresetNameWarnsAndNamesThem() async throws {
        let scratch = try Scratch()
        let file = scratch.path("bell.wav")
        try makeSignal(file, seconds: 0.5)
        let imported = try await scratch.run(["sounds", "import", file, "--name", "bell"])
        let set = try await scratch.run(["config", "set", "sound", "bell"])
        let saved = try await scratch.run(["presets", "save", "evening", "--sound", "bell", "--sleep-sound", "bell"])
        for setUp in [imported, set, saved] { #expect(setUp.status == 0, "\(setUp.standardError)") }
        let renamed = try await scratch.run(["sounds", "rename", "bell", "gong"])
        #expect(renamed.status == 0)
        #expect(renamed.standardError.contains(
            "warning: the setting sound, preset \"evening\", preset \"evening\" (sleep-sound) still name \"bell\", and it is \"gong\" now: a nap with them would exit 66"),
            "\(renamed.standardError)")
        // Nothing names the new name: removing it says nothing more.
        let removed = try await scratch.run(["sounds", "remove", "gong"])
        #expect(removed.status == 0)
        #expect(!removed.standardError.contains("warning"), "\(removed.standardError)")
        // Named by the setting alone, then removed.
        let again = try await scratch.run(["sounds", "import", file, "--name", "chirp"])
        _ = try await scratch.run(["config", "set", "sound", "chirp"])
        let gone = try await scratch.run(["sounds", "remove", "chirp"])
        #expect(again.status == 0 && gone.status == 0)
        #expect(gone.standardError.contains("warning: the setting sound still names \"chirp\", and it is gone: a nap with it would exit 66"),
                "\(gone.standardError)")
    }

    @Test func soundOptionFindsImportedSounds() async throws {
        let scratch = try Scratch()
        let wav = scratch.path("bell.wav")
        try makeSignal(wav, seconds: 0.3)
        _ = try await scratch.run(["sounds", "import", wav, "--name", "my bell"])
        let stored = try #require(try scratch.storedFiles().first)

        let played = try await scratch.run(["sounds", "play", "my bell", "--device", "null", "--duration", "1"])
        let unknown = try await scratch.run(["sounds", "play", "nobody", "--device", "null", "--duration", "1"])

        #expect(played.status == 0, "\(played.standardError)")
        // Named as the person named it (it said only the hashed file), then the file.
        #expect(played.standardError.contains("playing \"my bell\" ("), "\(played.standardError)")
        #expect(played.standardError.contains(stored))
        #expect(unknown.status == 66)
    }

    /// The index edited by hand (SQLite keeps any type in any column): numbers no sound has, text
    /// where a number goes, bytes that are not UTF-8. Every command that reads the index trapped
    /// (GRDB's typed reads); now the numbers read as 0 or none, the text as far as it is text, and
    /// the sound, whose file is intact, still plays. The settings likewise (a value of bytes).
    @Test(arguments: [
        "frames = 1e300, sampleRate = -1e300, channels = 9223372036854775808",
        "frames = 'many', durationSeconds = x'00ff', loudness = 'loud', truePeak = 1e999",
        "sampleRate = 10000000000, channels = -1, durationSeconds = -0.0, loudness = -1e300",
        "originalFileName = x'ff00fe', format = 7",
    ])
    func anIndexEditedByHandIsReadNeverTrappedOn(_ assignments: String) async throws {
        let scratch = try Scratch()
        let wav = scratch.path("bell.wav")
        try makeSignal(wav, seconds: 0.3)
        #expect(try await scratch.run(["sounds", "import", wav, "--name", "bell"]).status == 0)
        #expect(try await scratch.run(["config", "set", "volume", "70"]).status == 0)
        _ = try runTool("sqlite3", [scratch.database, "UPDATE sounds SET \(assignments); UPDATE settings SET value = x'ff' WHERE key = 'volume';"])
        let list = try await scratch.run(["sounds", "list"])
        #expect(list.status == 0, "\(assignments): \(list.standardError)")
        #expect(list.standardOutput.contains("bell"), "\(assignments): \(list.standardOutput)")
        let json = try await scratch.run(["sounds", "list", "--json"])
        #expect(json.status == 0 && json.standardOutput.contains(#""name" : "bell""#), "\(assignments): \(json.standardOutput)\(json.standardError)")
        let played = try await scratch.run(["sounds", "play", "bell", "--device", "null", "--duration", "1"])
        #expect(played.status == 0, "\(assignments): \(played.standardError)")
        let config = try await scratch.run(["config", "list"])
        #expect(config.status != 132 && config.status != 133 && config.status != 134, "a trap: \(config.status) \(config.standardError)")
        #expect(config.standardOutput.contains("volume") || config.standardError.contains("volume"), "\(config.standardOutput)\(config.standardError)")
    }

    @Test func exportNotificationSaysWhatItChanged() async throws {
        let scratch = try Scratch()
        let wav = scratch.path("long.wav"), out = scratch.path("long-notification.caf")
        try makeSignal(wav, seconds: 35, rate: 16_000, soxOptions: ["-b", "16"])
        _ = try await scratch.run(["sounds", "import", wav])

        let exported = try await scratch.run(["sounds", "export", "long", out, "--notification"])
        let validated = try await scratch.run(["sounds", "validate", out, "--notification"])
        let builtIn = try await scratch.run(["sounds", "export", "chime", scratch.path("chime.caf"), "--notification"])

        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(exported.standardError.contains("trimmed from 35.00 s to 29.50 s"))
        #expect(!exported.standardError.contains("converted"))
        #expect(validated.status == 0, "\(validated.standardError)")
        #expect(builtIn.status == 0, "\(builtIn.standardError)")
    }
}

func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
}

import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseCAF
import SnoozeFuseSoundLibrary
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// The names `sounds list --json` gives the imported sounds, in order.
func importedNames(_ run: ProcessResult) throws -> [String] {
    try JSONDecoder().decode([ListedSound].self, from: Data(run.standardOutput.utf8)).filter { !$0.builtIn }.map(\.name)
}

/// The stored file's own metadata (its CAF `info` chunk), read with the CAF inspector.
func metadataInFile(_ path: String) throws -> StoredFileMetadata? {
    StoredFileMetadata(entries: CAFInspector().inspect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))).info)
}

@Suite("The library never deletes what it cannot account for (index lost, emptied, older, damaged)")
struct IndexRecoveryTests {
    /// Three sounds imported through the binary (one renamed), then the index emptied to 0 bytes,
    /// removed, and replaced by a copy taken before the third import and the rename: after each,
    /// `sounds list` lists every sound, no file is deleted or changed (byte for byte), the index and
    /// the files agree (sqlite3), and stderr says what was rebuilt.
    @Test func emptiedRemovedAndOlderIndexLoseNoSound() async throws {
        let scratch = try Scratch()
        for (name, seconds) in [("alpha", 0.3), ("bravo", 0.4), ("charlie", 0.5)] {
            try makeSignal(scratch.path("\(name).wav"), seconds: seconds)
        }
        #expect(try await scratch.run(["sounds", "import", scratch.path("alpha.wav")]).status == 0)
        #expect(try await scratch.run(["sounds", "import", scratch.path("bravo.wav")]).status == 0)
        let older = try Data(contentsOf: URL(fileURLWithPath: scratch.database))
        #expect(try await scratch.run(["sounds", "import", scratch.path("charlie.wav")]).status == 0)
        let renamed = try await scratch.run(["sounds", "rename", "bravo", "Bravo Two"])
        #expect(renamed.status == 0, "\(renamed.standardError)")
        let files = try fileContents(scratch.soundsFolder)
        #expect(files.count == 3)
        let current = ["alpha", "Bravo Two", "charlie"]
        #expect(try importedNames(try await scratch.run(["sounds", "list", "--json"])) == current)

        func checkFilesUntouched(_ situation: String) throws {
            let now = try fileContents(scratch.soundsFolder)
            #expect(Set(now.keys) == Set(files.keys), "\(situation): the same files")
            for (name, bytes) in files { #expect(now[name] == bytes, "\(situation): \(name) unchanged") }
            #expect(Set(try indexRows(scratch).map { String($0.split(separator: "|")[1]) }) == Set(files.keys),
                    "\(situation): the index lists every file")
        }

        // Emptied to 0 bytes.
        try Data().write(to: URL(fileURLWithPath: scratch.database))
        let afterEmpty = try await scratch.run(["sounds", "list", "--json"])
        #expect(afterEmpty.status == 0, "\(afterEmpty.standardError)")
        #expect(try importedNames(afterEmpty) == current)
        #expect(afterEmpty.standardError.contains("was empty (0 bytes); rebuilt it from the 3 sound files"))
        try checkFilesUntouched("after an empty index")

        // Removed.
        try FileManager.default.removeItem(atPath: scratch.database)
        let afterRemoval = try await scratch.run(["sounds", "list", "--json"])
        #expect(afterRemoval.status == 0, "\(afterRemoval.standardError)")
        #expect(try importedNames(afterRemoval) == current)
        #expect(afterRemoval.standardError.contains("was missing; rebuilt it from the 3 sound files"))
        try checkFilesUntouched("after a removed index")

        // An older copy: it lists alpha and bravo (under bravo's old name: while the index lists a
        // sound, its name wins), not charlie, whose file is adopted.
        try older.write(to: URL(fileURLWithPath: scratch.database))
        let afterOlder = try await scratch.run(["sounds", "list", "--json"])
        #expect(afterOlder.status == 0, "\(afterOlder.standardError)")
        #expect(try importedNames(afterOlder) == ["alpha", "bravo", "charlie"])
        #expect(afterOlder.standardError.contains("did not list 1 stored sound"))
        #expect(afterOlder.standardError.contains("\"charlie\""))
        try checkFilesUntouched("after an older index")

        // The rebuilt rows say what the import said: the same digest, source and original file.
        let rows = try runTool("sqlite3", [scratch.database, "SELECT name, originalFileName, sourceFormat, frames FROM sounds WHERE name = 'charlie'"])
        #expect(rows == "charlie|charlie.wav|WAV (Microsoft), Signed 16 bit PCM|22050\n")
        let again = try await scratch.run(["sounds", "import", scratch.path("charlie.wav")])
        #expect(again.standardError.contains("already in the library as \"charlie\""))
    }

    /// A damaged index (not SQLite) is renamed with a timestamp suffix, byte for byte, never
    /// overwritten (a second one gets its own name), and the index is rebuilt from the files.
    @Test func damagedIndexIsMovedAsideAndRebuilt() async throws {
        let scratch = try Scratch()
        try makeSignal(scratch.path("one.wav"), seconds: 0.3)
        try makeSignal(scratch.path("two.wav"), seconds: 0.4)
        #expect(try await scratch.run(["sounds", "import", scratch.path("one.wav")]).status == 0)
        #expect(try await scratch.run(["sounds", "import", scratch.path("two.wav")]).status == 0)
        let files = try fileContents(scratch.soundsFolder)
        let garbage = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        let dataFolder = scratch.paths.data.path

        var movedAside: Set<String> = []
        for round in 1...2 {
            try garbage.write(to: URL(fileURLWithPath: scratch.database))
            let list = try await scratch.run(["sounds", "list", "--json"])
            #expect(list.status == 0, "\(list.standardError)")
            #expect(try importedNames(list) == ["one", "two"])
            let damaged = Set(try FileManager.default.contentsOfDirectory(atPath: dataFolder).filter { $0.hasPrefix("library.sqlite.damaged-") })
            #expect(damaged.count == round, "every damaged index is kept under its own name")
            let new = try #require(damaged.subtracting(movedAside).first)
            movedAside = damaged
            #expect(new.range(of: #"^library\.sqlite\.damaged-\d{8}T\d{6}Z(-\d+)?$"#, options: .regularExpression) != nil, "\(new)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: dataFolder + "/" + new)) == garbage)
            #expect(list.standardError.contains("was damaged (it is not an SQLite database"))
            #expect(list.standardError.contains("moved it to \(dataFolder)/\(new) (kept, not deleted)"))
            #expect(try fileContents(scratch.soundsFolder) == files)
        }
        #expect(try indexRows(scratch).count == 2)
    }

    /// A file imported by the previous release has no name inside it: it is listed under a name made
    /// from its file name (and stderr says so), its bytes untouched, its digest computed as an import
    /// computes it (importing the same audio is found to be a duplicate).
    @Test func fileWithoutMetadataIsAdoptedUnderADerivedName() async throws {
        let scratch = try Scratch()
        let source = scratch.path("old.wav")
        try makeSignal(source, seconds: 0.4, soxOptions: ["-b", "24"])
        _ = try scratch.library() // creates the folders
        let legacy = "0123abcd89ef4567" + "0123abcd89ef4567" + ".caf"
        let legacyPath = scratch.soundsFolder + "/" + legacy
        try runTool("sndfile-convert", ["-pcm24", source, legacyPath])
        #expect(try metadataInFile(legacyPath) == nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: legacyPath))

        let list = try await scratch.run(["sounds", "list", "--json"])
        let again = try await scratch.run(["sounds", "import", source])

        #expect(list.status == 0, "\(list.standardError)")
        #expect(try importedNames(list) == ["recovered 0123abcd"])
        #expect(list.standardError.contains("\(legacy) holds no name of its own (imported by an earlier version of snoozefuse); listed it as \"recovered 0123abcd\""))
        #expect(try Data(contentsOf: URL(fileURLWithPath: legacyPath)) == bytes)
        #expect(again.standardError.contains("already in the library as \"recovered 0123abcd\""), "\(again.standardError)")
        #expect(try scratch.storedFiles() == [legacy])
    }

    /// Rename writes the new name into the file (a new copy renamed into place: same audio, same
    /// file name), so an index rebuilt afterwards has the new name.
    @Test func renameKeepsTheNameInsideTheFileInStepWithTheIndex() throws {
        let scratch = try Scratch()
        let source = scratch.path("rooster.wav")
        try makeSignal(source, seconds: 0.5)
        let library = try scratch.library()
        let imported = try library.importSound(at: source)
        let path = storedPath(scratch, imported.sound)
        let samples = try intSamples(path)
        #expect(try metadataInFile(path)?.name == "rooster")
        #expect(try metadataInFile(path)?.sha256 == imported.sound.sha256)
        #expect(try metadataInFile(path)?.originalFileName == "rooster.wav")
        let importedAt = try #require(try metadataInFile(path)?.importedAt)
        #expect(abs(importedAt.timeIntervalSince(imported.sound.importedAt)) < 0.001)

        let renamed = try library.rename("rooster", to: "Dawn Chorus")

        #expect(renamed.name == "Dawn Chorus")
        #expect(try scratch.storedFiles() == [imported.sound.storedFileName])
        #expect(try metadataInFile(path)?.name == "Dawn Chorus")
        #expect(try metadataInFile(path)?.importedAt == importedAt)
        #expect(try metadataInFile(path)?.sha256 == imported.sound.sha256)
        let after = try intSamples(path)
        #expect(after.info == samples.info)
        #expect(firstDifference(after.samples, samples.samples) == nil)
        let report = CAFInspector().inspect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(report.isValid)
        #expect(report.chunks.filter { $0.type == .info }.count == 1)
        #expect(report.chunks.last?.type == .info)

        try FileManager.default.removeItem(atPath: scratch.database)
        let rebuilt = try scratch.library()
        #expect(try rebuilt.list().filter { !$0.isBuiltIn }.map(\.name) == ["Dawn Chorus"])
        #expect(rebuilt.opening.index == .missing)
        #expect(rebuilt.opening.adopted.map(\.name) == ["Dawn Chorus"])
    }

    /// A name lookup (`--sound NAME`) is read-only: with a damaged index it finds the sound by the
    /// name inside its file, reports an unknown name as the index's real problem (exit 78, not "no
    /// sound named"), and leaves the damaged index where it is.
    @Test func lookupWithADamagedIndexReadsTheFilesAndNamesTheCause() async throws {
        let scratch = try Scratch()
        try makeSignal(scratch.path("gong.wav"), seconds: 0.3)
        #expect(try await scratch.run(["sounds", "import", scratch.path("gong.wav"), "--name", "Gong"]).status == 0)
        let stored = try #require(try scratch.storedFiles().first)
        let garbage = Data(repeating: 0x5A, count: 3000)
        try garbage.write(to: URL(fileURLWithPath: scratch.database))

        let found = try SoundLibrary.importedSoundPath(named: "gong", paths: scratch.paths)
        let unknown = #expect(throws: SoundLibraryError.self) { try SoundLibrary.importedSoundPath(named: "bell", paths: scratch.paths) }
        let played = try await scratch.runBounded(["sounds", "play", "Gong", "--device", "null", "--duration", "1"])
        let napUnknown = try await scratch.runBounded(["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "5",
                                                       "--ring-limit", "1", "--device", "null", "--quiet", "--sound", "bell"])

        #expect(found == scratch.soundsFolder + "/" + stored)
        #expect(unknown?.kind == .storage)
        #expect(unknown?.message.contains("the sound index is damaged") == true)
        #expect(played.status == 0, "\(played.standardError)")
        #expect(played.standardError.contains(stored))
        #expect(!napUnknown.timedOut)
        #expect(napUnknown.status == 78, "\(napUnknown.standardError)")
        #expect(napUnknown.standardError.contains("cannot look up the sound \"bell\""))
        #expect(napUnknown.standardError.contains("not an SQLite database"))
        #expect(!napUnknown.standardError.contains("no sound named"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.database)) == garbage, "a lookup changes nothing")
    }

    /// A read-only data folder is reported (exit 78, naming the folder and the fix) and keeps its
    /// mode; an existing folder's own mode (0755) is left as it is; a read-only index names the real
    /// cause. Name lookups still work in both.
    @Test func readOnlyFolderAndIndexAreReportedNotChanged() async throws {
        let scratch = try Scratch()
        try makeSignal(scratch.path("tick.wav"), seconds: 0.3)
        #expect(try await scratch.run(["sounds", "import", scratch.path("tick.wav")]).status == 0)
        let data = scratch.paths.data.path
        let napWithTick = ["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "5", "--ring-limit", "1",
                           "--device", "null", "--quiet", "--sound", "tick"]

        #expect(chmod(data, 0o755) == 0)
        #expect(try await scratch.run(["sounds", "list"]).status == 0)
        #expect(try permissions(data) == 0o755, "an existing folder keeps the mode it has")

        #expect(chmod(data, 0o500) == 0)
        let readOnlyFolder = try await scratch.runBounded(["sounds", "import", scratch.path("tick.wav"), "--name", "other"], unprivileged: true)
        let napInReadOnlyFolder = try await scratch.runBounded(napWithTick, unprivileged: true)
        #expect(try permissions(data) == 0o500, "never changed against the user's will")
        #expect(chmod(data, 0o700) == 0)

        #expect(chmod(scratch.database, 0o400) == 0)
        let readOnlyIndex = try await scratch.runBounded(["sounds", "list"], unprivileged: true)
        let napWithReadOnlyIndex = try await scratch.runBounded(napWithTick, unprivileged: true)
        #expect(try permissions(scratch.database) == 0o400)
        #expect(chmod(scratch.database, 0o600) == 0)

        #expect(readOnlyFolder.status == 78, "\(readOnlyFolder.standardError)")
        #expect(readOnlyFolder.standardError.contains("\(data): the folder is read-only (mode 500, EACCES"))
        #expect(readOnlyFolder.standardError.contains("chmod u+wx '\(data)'"))
        #expect(napInReadOnlyFolder.status == 0, "\(napInReadOnlyFolder.standardError)")
        #expect(readOnlyIndex.status == 78, "\(readOnlyIndex.standardError)")
        #expect(readOnlyIndex.standardError.contains("\(scratch.database): the sound index is read-only (EACCES"))
        #expect(!readOnlyIndex.standardError.contains("cannot create"))
        #expect(napWithReadOnlyIndex.status == 0, "\(napWithReadOnlyIndex.standardError)")
        #expect(try importedNames(try await scratch.run(["sounds", "list", "--json"])) == ["tick"])
    }
}

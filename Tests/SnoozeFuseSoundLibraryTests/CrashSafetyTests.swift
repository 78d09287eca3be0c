import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseSoundLibrary
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

@Suite("Crash safety of the sound library (kill -9 mid-import, stale files)")
struct CrashSafetyTests {
    /// `kill -9` while the binary writes a large import, twice (just started, about half way), then
    /// the next command's startup cleanup: no temporary file left, no partial sound listed, and the
    /// index and the files agree (checked with the sqlite3 shell). Then the same import completes.
    @Test func killDuringImportLeavesNoPartialFileAndAConsistentIndex() async throws {
        let scratch = try Scratch()
        let small = scratch.path("small.wav"), long = scratch.path("long.wav")
        try makeSignal(small, seconds: 0.5)
        try makeSignal(long, seconds: 900) // 15 minutes, 44.1 kHz stereo 16-bit: 159 MB stored
        let first = try await scratch.run(["sounds", "import", small])
        #expect(first.status == 0, "\(first.standardError)")
        let storedBytes = 900 * 44_100 * 4

        for threshold in [1, storedBytes / 2] {
            let process = Process()
            process.executableURL = snoozefuse
            process.arguments = ["sounds", "import", long]
            process.environment = scratch.environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            var killedWhileWriting = false
            while process.isRunning {
                let partial = try temporaryFiles(scratch).contains { name in
                    let size = (try? FileManager.default.attributesOfItem(atPath: scratch.soundsFolder + "/" + name)[.size] as? Int) ?? 0
                    return size >= threshold
                }
                if partial {
                    kill(process.processIdentifier, SIGKILL)
                    killedWhileWriting = true
                    break
                }
                // A blocking wait, not `Task.sleep`: the poll must not queue behind other tests for
                // a thread of the shared pool while the import races ahead.
                usleep(500)
            }
            process.waitUntilExit()
            #expect(killedWhileWriting, "the import ended before it had written \(threshold) bytes")
            #expect(process.terminationReason == .uncaughtSignal)
            #expect(process.terminationStatus == SIGKILL)
            // The killed import left its temporary file behind …
            #expect(try temporaryFiles(scratch).count == 1)

            // … which the next command removes, saying so; the partial sound is never listed.
            let list = try await scratch.run(["sounds", "list", "--json"])
            #expect(list.status == 0, "\(list.standardError)")
            #expect(list.standardError.contains("left behind by an interrupted import"))
            let imported = try JSONDecoder().decode([ListedSound].self, from: Data(list.standardOutput.utf8)).filter { !$0.builtIn }
            #expect(imported.map(\.name) == ["small"])
            #expect(try temporaryFiles(scratch).isEmpty)
            let rows = try indexRows(scratch)
            #expect(rows.count == 1)
            #expect(try scratch.storedFiles() == Set(rows.map { String($0.split(separator: "|")[1]) }))
        }

        let completed = try await scratch.run(["sounds", "import", long])
        #expect(completed.status == 0, "\(completed.standardError)")
        let rows = try indexRows(scratch)
        #expect(rows.map { $0.split(separator: "|")[0] } == ["long", "small"])
        #expect(try scratch.storedFiles() == Set(rows.map { String($0.split(separator: "|")[1]) }))
        let stored = try #require(try SoundLibrary(paths: scratch.paths, builtIns: [:]).path(named: "long"))
        #expect(try SoundFile(readingAtPath: stored).info.frames == 900 * 44_100)
    }

    /// What a crash can leave: a dead import's temporary file is deleted; the temporary file of an
    /// import still running (its lock held) is kept; a stored sound whose row is gone (a crash between
    /// the removal's row delete and its unlink, or an import's rename and insert) is listed again
    /// from its own metadata; a `.caf` that is not a sound is left as it is and reported. Nothing
    /// but the dead temporary file is deleted.
    @Test func openingTheLibraryRemovesDeadTemporaryFilesOnly() throws {
        let scratch = try Scratch()
        let kept = scratch.path("kept.wav"), orphaned = scratch.path("orphaned.wav")
        try makeSignal(kept, seconds: 0.3)
        try makeSignal(orphaned, seconds: 0.4)
        let library = try scratch.library()
        let keptSound = try library.importSound(at: kept)
        let orphanSound = try library.importSound(at: orphaned)
        try runTool("sqlite3", [scratch.database, "DELETE FROM sounds WHERE name = 'orphaned'"])
        let folder = scratch.soundsFolder
        let deadTemporary = ".import-dead.tmp", notSound = "0123456789abcdef0123456789abcdef.caf"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: folder + "/" + deadTemporary))
        try Data([4, 5, 6]).write(to: URL(fileURLWithPath: folder + "/" + notSound))
        let live = try SoundsFolder(url: scratch.paths.soundsFolder).makeTemporaryFile()
        let liveName = URL(fileURLWithPath: live.path).lastPathComponent

        let reopened = try scratch.library()

        #expect(reopened.removedStaleFiles == [deadTemporary])
        #expect(try scratch.storedFiles() == [keptSound.sound.storedFileName, orphanSound.sound.storedFileName, notSound, liveName])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + notSound)) == Data([4, 5, 6]))
        #expect(try reopened.list().map(\.name) == ["kept", "orphaned"])
        #expect(reopened.opening.adopted.map(\.name) == ["orphaned"])
        #expect(reopened.opening.leftAlone.map(\.storedFileName) == [notSound])
        #expect(reopened.opening.messages.contains { $0.contains("\(notSound) is not listed") && $0.contains("left where it is") })
        #expect(try indexRows(scratch) == [
            "kept|\(keptSound.sound.storedFileName)|\(keptSound.sound.sha256)",
            "orphaned|\(orphanSound.sound.storedFileName)|\(orphanSound.sound.sha256)",
        ])
        withExtendedLifetime(live) {}
    }
}

/// The temporary import files in the sounds folder.
func temporaryFiles(_ scratch: Scratch) throws -> [String] {
    guard FileManager.default.fileExists(atPath: scratch.soundsFolder) else { return [] }
    return try FileManager.default.contentsOfDirectory(atPath: scratch.soundsFolder)
        .filter { $0.hasPrefix(".import-") && $0.hasSuffix(".tmp") }
}

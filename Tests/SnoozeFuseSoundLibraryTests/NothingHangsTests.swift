import Foundation
import Glibc
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// A quick nap that starts at once and rings for a second on ALSA's `null` PCM.
func quickNap(sound: String) -> [String] {
    ["nap", "--no-hold", "--release", "0", "--nap", "1", "--max", "5", "--ring-limit", "1", "--device", "null",
     "--quiet", "--events", "jsonl", "--sound", sound]
}

@Suite("Nothing the user names can hang (special files, locked library)")
struct NothingHangsTests {
    /// A FIFO with no writer, a folder and `/dev/zero` as `--sound` to `nap` and as `sounds play`'s
    /// sound: each refused at once with exit 66 and a message naming the path and what it is. (The
    /// time limit only guards against a hang; before the fix the FIFO hung both commands for ever.)
    @Test(arguments: [("fifo", "a FIFO (named pipe)"), ("folder", "a folder"), ("/dev/zero", "a character device")])
    func specialFilesAreRefusedAtOnce(_ kind: String, _ described: String) async throws {
        let scratch = try Scratch()
        let path: String
        switch kind {
        case "fifo":
            path = scratch.path("alarm.wav")
            #expect(mkfifo(path, 0o600) == 0)
        case "folder":
            path = scratch.path("sounds.d") + "/"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        default:
            path = kind
        }

        let nap = try await scratch.runBounded(quickNap(sound: path))
        let play = try await scratch.runBounded(["sounds", "play", path, "--device", "null", "--duration", "1"])
        let imported = try await scratch.runBounded(["sounds", "import", path])
        let validated = try await scratch.runBounded(["sounds", "validate", path])

        for (command, run) in [("nap", nap), ("sounds play", play), ("sounds import", imported), ("sounds validate", validated)] {
            #expect(!run.timedOut, "\(command) \(path) hung")
            #expect(run.status == 66, "\(command): \(run.standardError)")
            #expect(run.standardError.contains("'\(path)': it is \(described), not a regular file"), "\(command): \(run.standardError)")
        }
        #expect(!nap.standardOutput.contains("\"ringing\""), "refused before the nap began")
    }

    /// `--sound NAME` while another process holds the index's SQLite write lock (an sqlite3 shell in
    /// `BEGIN EXCLUSIVE` with an uncommitted insert), and while another process holds the sounds
    /// folder's lock: the name resolves (WAL readers do not wait; the look-up takes no folder lock),
    /// the nap starts and rings out its limit, and `sounds play NAME` plays the stored file.
    @Test func soundNamesResolveWhileTheLibraryIsLocked() async throws {
        let scratch = try Scratch()
        try makeSignal(scratch.path("wake.wav"), seconds: 0.5)
        #expect(try await scratch.run(["sounds", "import", scratch.path("wake.wav"), "--name", "Wake Up"]).status == 0)
        let stored = try #require(try scratch.storedFiles().first)

        func napAndPlay(_ situation: String) async throws {
            let nap = try await scratch.runBounded(quickNap(sound: "wake up"))
            let play = try await scratch.runBounded(["sounds", "play", "Wake Up", "--device", "null", "--duration", "1"])
            #expect(!nap.timedOut && !play.timedOut, "\(situation): hung")
            #expect(nap.status == 0, "\(situation): \(nap.standardError)")
            let events = nap.outputLines.compactMap { try? JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
            #expect(events.contains { $0.event == "alarm" }, "\(situation): \(nap.standardOutput)")
            #expect(events.last?.event == "end" && events.last?.outcome == "ring_limit", "\(situation): \(nap.standardOutput)")
            #expect(play.status == 0, "\(situation): \(play.standardError)")
            #expect(play.standardError.contains(stored), "\(situation): \(play.standardError)")
            // The stored file by its path, in the locked folder.
            let byPath = try await scratch.runBounded(["sounds", "play", scratch.soundsFolder + "/" + stored, "--device", "null", "--duration", "1"])
            #expect(!byPath.timedOut, "\(situation): hung")
            #expect(byPath.status == 0, "\(situation): \(byPath.standardError)")
        }

        // The index is in WAL mode, so a reader reads the index itself (not only the files' own
        // names) while the writer holds its lock.
        #expect(try runTool("sqlite3", [scratch.database, "PRAGMA journal_mode"]) == "wal\n")
        let sqlite = try SQLiteWriteLock(scratch.database)
        let reader = try #require(try SoundIndex.openForReading(file: scratch.paths.database))
        #expect(try reader.sound(named: "wake up")?.storedFileName == stored)
        try await napAndPlay("SQLite write lock held")
        sqlite.release()

        let folder = try FolderLock(scratch)
        try await napAndPlay("sounds folder lock held")
        // Opening the library for a listing does not wait for the folder's lock either.
        let list = try await scratch.runBounded(["sounds", "list"])
        #expect(!list.timedOut)
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.standardOutput.contains("Wake Up\timported"))
        folder.release()
    }
}

/// One `--events jsonl` line, the fields these tests read.
struct EventLine: Decodable {
    var event: String
    var outcome: String?
}

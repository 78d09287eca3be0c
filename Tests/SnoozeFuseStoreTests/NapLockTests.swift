import Foundation
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// Whether a nap's lock is held, as `status` asks it: from the kernel's list of locks, for the
/// nap's lock and its guardian's in one reading.
@Suite("NapLock: held or not, as the kernel lists it")
struct NapLockTests {
    @Test func aLockHeldHereOrByAnotherProcessIsHeldAndOneLetGoIsNot() throws {
        let folder = try TemporaryFolder()
        let mine = folder.file("nap.lock"), theirs = folder.path("guardian.lock"), free = folder.path("free.lock")
        let missing = folder.path("missing.lock")
        _ = FileManager.default.createFile(atPath: free, contents: nil)
        // Another process holds `theirs` for as long as it lives.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["--exclusive", "--no-fork", theirs, "sleep", "60"]   // sleep itself holds it
        try holder.run()
        // SIGKILL: the test runner's children may have SIGTERM blocked.
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        var held: [Bool?] = []
        for _ in 0 ..< 500 {
            held = NapLock.areHeld(paths: [theirs])
            if held == [true] { break }
            usleep(10_000)
        }
        #expect(held == [true], "flock's lock never showed in /proc/locks")
        var lock = try NapLock.acquire(mine)
        #expect(lock != nil)
        #expect(NapLock.areHeld(paths: [mine.path, theirs, free, missing]) == [true, true, false, false])
        #expect(NapLock.isHeld(path: mine.path) == true && NapLock.isHeld(path: free) == false && NapLock.isHeld(path: missing) == false)
        lock = nil
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        #expect(NapLock.areHeld(paths: [mine.path, theirs, free]) == [false, false, false], "a lock goes with its holder")
    }

    /// The scan of the kernel's list, on lines as the kernel writes them: a held flock, a process
    /// waiting for one, POSIX and open-file-description locks, padding and a line cut short.
    @Test func theListIsReadAsTheKernelWritesIt() {
        let list = """
            1: FLOCK  ADVISORY  WRITE 4242 00:2e:123456 0 EOF
            1: -> FLOCK  ADVISORY  WRITE 4343 00:2e:777 0 EOF
            2: POSIX  ADVISORY  WRITE 4444 fe:00:888 0 EOF
            3: OFDLCK ADVISORY  READ  -1 fe:00:999 0 EOF
            4: FLOCK  ADVISORY  READ 4545 fe:00:5358707 0 EOF
            5: FLOCK  ADVISORY
            6: DELEG  ACTIVE    READ  4646 00:2e:321 0 EOF

            """
        let devices = ["00:2e:123456", "00:2e:777", "fe:00:888", "fe:00:999", "fe:00:5358707", "00:2e:12345", "00:2e:321", ""]
        #expect(NapLock.flocksHeld(on: devices.map { Array($0.utf8) }, in: Array(list.utf8))
                == [true, false, false, false, true, false, false, false])
        #expect(NapLock.flocksHeld(on: [Array("00:2e:123456".utf8)], in: []) == [false])
    }

    /// btrfs lists a subvolume's files under its file system's device, not the device `stat`
    /// gives: a flock on the same inode number under another device cannot be told apart, so the
    /// answer is unknown (the caller asks whether the holder's process runs), not "not held".
    @Test func aFlockOnTheSameInodeUnderAnotherDeviceIsUnknown() {
        let list = """
            1: FLOCK  ADVISORY  WRITE 4242 00:2f:5555 0 EOF
            2: -> FLOCK  ADVISORY  WRITE 4343 00:2f:6666 0 EOF
            3: POSIX  ADVISORY  WRITE 4444 00:2f:7777 0 EOF
            4: FLOCK  ADVISORY  WRITE 4545 00:3a:8888 0 EOF
            5: FLOCK  ADVISORY  WRITE 4646 00:2f:8888 0 EOF

            """
        // Another device, the same inode: unknown. A waiter or a POSIX lock on it: not held. An
        // inode that only ends the same way: not held. A line with the very device: held, whatever
        // else the list has.
        let devices = ["00:3a:5555", "00:3a:6666", "00:3a:7777", "00:3a:555", "00:3a:8888"]
        #expect(NapLock.flocksHeld(on: devices.map { Array($0.utf8) }, in: Array(list.utf8))
                == [nil, false, false, false, true])
    }
}

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
}

import Foundation
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// Whether a nap's lock is held, as `status` asks it: by the process the live state names, from
/// the kernel's view of that process's open files (`/proc/PID/fd` and `fdinfo`).
@Suite("NapLock: held or not, by the process that should hold it")
struct NapLockTests {
    /// Runs `arguments` with stdin from `input` (nil: none), for as long as the test needs it.
    private func start(_ arguments: [String], input: String? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if let input { process.standardInput = FileHandle(forReadingAtPath: input) }
        try process.run()
        return process
    }

    private func end(_ process: Process) {
        // SIGKILL: the test runner's children may have SIGTERM blocked.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    @Test func aLockIsHeldByTheProcessThatHoldsItAndByNoOther() throws {
        let folder = try TemporaryFolder()
        let mine = folder.file("nap.lock"), theirs = folder.path("guardian.lock"), free = folder.path("free.lock")
        let missing = folder.path("missing.lock")
        _ = FileManager.default.createFile(atPath: free, contents: nil)
        // Another process holds `theirs` for as long as it lives (sleep itself holds it), and a
        // third has `free` open as its stdin, with no lock on it.
        let holder = try start(["/usr/bin/flock", "--exclusive", "--no-fork", theirs, "sleep", "60"])
        defer { end(holder) }
        let reader = try start(["/bin/sleep", "60"], input: free)
        defer { end(reader) }
        let them = holder.processIdentifier, me = getpid()
        var held: Bool? = false
        for _ in 0 ..< 500 {
            held = NapLock.isHeld(path: theirs, by: them)
            if held == true { break }
            usleep(10_000)
        }
        #expect(held == true, "flock's lock never showed in its fdinfo")
        var lock = try NapLock.acquire(mine)
        #expect(lock != nil)
        #expect(NapLock.isHeld(path: mine.path, by: me) == true)
        #expect(NapLock.isHeld(path: mine.path, by: them) == false, "another process's lock is not this one's")
        #expect(NapLock.isHeld(path: theirs, by: me) == false)
        #expect(NapLock.isHeld(path: free, by: reader.processIdentifier) == false, "a file open without a lock is not held")
        #expect(NapLock.isHeld(path: missing, by: me) == false)
        #expect(NapLock.isHeld(path: mine.path, by: 0) == false && NapLock.isHeld(path: mine.path, by: -1) == false)
        lock = nil
        #expect(NapLock.isHeld(path: mine.path, by: me) == false, "a lock let go is not held")
        end(holder)
        #expect(NapLock.isHeld(path: theirs, by: them) == false, "a lock goes with its holder, and so does its pid")
    }

    /// `fdinfo` as the kernel writes it: a held flock (written or shared), a POSIX lock, an
    /// open-file-description lock, a waiter, and no lock at all.
    @Test(arguments: [
        ("pos:\t0\nflags:\t02100002\nmnt_id:\t33\nino:\t123456\nlock:\t1: FLOCK  ADVISORY  WRITE 4242 00:2e:123456 0 EOF\n", true),
        ("pos:\t0\nflags:\t02100000\nmnt_id:\t33\nino:\t123456\nlock:\t7: FLOCK  ADVISORY  READ 4242 00:2e:123456 0 EOF\n", true),
        ("pos:\t0\nflags:\t02100002\nlock:\t2: POSIX  ADVISORY  WRITE 4444 fe:00:888 0 EOF\n", false),
        ("pos:\t0\nflags:\t02100002\nlock:\t3: OFDLCK ADVISORY  READ  -1 fe:00:999 0 EOF\n", false),
        ("pos:\t0\nlock:\t1: -> FLOCK  ADVISORY  WRITE 4343 00:2e:777 0 EOF\n", false),
        ("pos:\t0\nflags:\t02100002\nmnt_id:\t33\nino:\t123456\n", false),
        ("", false),
    ])
    func fdinfoIsReadAsTheKernelWritesIt(text: String, held: Bool) {
        #expect(NapLock.holdsFlock(fdinfo: Array(text.utf8)) == held)
    }
}

// snoozefuse-guardian: the idle half of a nap's guardian (SPEC §9). `snoozefuse nap` starts it in a
// session of its own, with descriptor 3 the read end of a pipe whose write end only the nap holds:
//
//   snoozefuse-guardian LOCK LOG -- PROGRAM ARGUMENT...
//
// It takes a shared lock on the file LOCK (`status` sees a guardian by it) and opens PROGRAM (the
// nap's own `snoozefuse`), then sleeps on descriptor 3 until the nap's process has ended however it
// ended, waking only when the nap writes a line (when its alarm is due, that it rings: a few a nap)
// and a second after its alarm is due if the nap has not said it rings (GuardianWatch). Then it becomes PROGRAM ARGUMENT... (`guardian
// --nap PID`) by exec, keeping its PID, its lock and descriptor 3 (whose read now ends at once):
// the whole program decides whether the nap ended its session or must be taken over, and rings
// the whole chain of outputs if so. When it holds the lock on descriptor 4, it adds
// `--watcher-lock 4`, and the whole guardian closes that descriptor once it holds a lock of its own.
//
// Why a program of its own: the guardian waits through every nap, and waiting needs nothing but
// this. It links no Foundation, no argument parser, no audio (only the pure core, for the
// guardian's clock text): its memory is the Swift runtime's (issue 23), where the whole program's
// was twice the floor of a Swift program with Foundation.
// PROGRAM is opened at the start and run from that descriptor, so replacing or removing the
// installed program during a nap cannot leave the alarm without a guardian. When PROGRAM cannot
// be opened, it becomes the whole guardian at once (which waits on descriptor 3 itself). Whatever
// goes wrong is appended to LOG (the guardian's events, `guardian.jsonl`): its standard error is
// /dev/null.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SnoozeFuseCore

/// The nap's end of the watch, and where the lock is kept across exec (defined once, in Core).
let watchDescriptor = GuardianWatch.watchDescriptor
let lockDescriptor = GuardianWatch.lockDescriptor

let arguments = CommandLine.arguments
guard arguments.count >= 5, arguments[3] == "--" else {
    let usage = "usage: snoozefuse-guardian LOCK LOG -- PROGRAM ARGUMENT... (started by `snoozefuse nap`, descriptor 3 its watch)\n"
    _ = usage.withCString { write(2, $0, strlen($0)) }
    exit(64)
}
let lockPath = arguments[1]
let logPath = arguments[2]
var program = Array(arguments[4...])

/// Appends a warning to the guardian's events, in their form (`"output":"guardian"`).
@MainActor func log(_ message: String) {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    let wall = WallClockText.iso8601(millisecondsSince1970: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec / 1_000_000))
    let line = "{\"event\":\"warning\",\"t\":0,\"wall\":\"\(wall)\",\"message\":\(JSONValue.quoted("snoozefuse-guardian: " + message)),\"output\":\"guardian\"}\n"
    let fd = open(logPath, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    _ = line.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}

func errorText() -> String { String(cString: strerror(errno)) }

// The lock, on descriptor 4 and not closed on exec: held without a gap until the whole guardian
// holds its own. Never waited for (LOCK_NB): a lock it cannot take must not keep it from watching.
let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
var holdsLock = false
if lock < 0 {
    log("cannot open the guardian's lock \(lockPath) (\(errorText())): `status` may not see this guardian")
} else if flock(lock, LOCK_SH | LOCK_NB) != 0 {
    log("cannot lock \(lockPath) (\(errorText())): `status` may not see this guardian")
} else if lock == lockDescriptor {
    holdsLock = fcntl(lock, F_SETFD, 0) == 0
} else {
    holdsLock = dup2(lock, lockDescriptor) == lockDescriptor // the copy is not closed on exec
}
if lock >= 0 && lock != lockDescriptor { close(lock) }
if holdsLock { program += ["--watcher-lock", String(lockDescriptor)] }

// The arguments and environment as C strings for exec (they live until exec replaces this image).
let argv: [UnsafeMutablePointer<CChar>?] = program.map { strdup($0) } + [nil]
var environment: [UnsafeMutablePointer<CChar>?] = []
var entry = environ
while let pointer = entry.pointee {
    environment.append(pointer)
    entry += 1
}
environment.append(nil)

/// Becomes PROGRAM: by `executable` when it is open, else by its path; tried a few times (the
/// nap's death may be the system running out of memory), then said and given up.
@MainActor func become(_ executable: Int32) -> Never {
    for attempt in 0 ..< 5 {
        if attempt > 0 { usleep(200_000) }
        if executable >= 0 { fexecve(executable, argv, environment) }
        execve(program[0], argv, environment)
    }
    log("cannot run \(program[0]) to take the nap over (\(errorText())): nothing rings its alarm")
    exit(70)
}

let executable = open(program[0], O_RDONLY | O_CLOEXEC)
if executable < 0 {
    log("cannot open \(program[0]) (\(errorText())): the whole guardian waits instead")
    become(-1)
}

/// The nap's PID, from the whole guardian's arguments (`guardian --nap PID`).
let napPid = program.firstIndex(of: "--nap").flatMap { program.indices.contains($0 + 1) ? Int32(program[$0 + 1]) : nil }

/// CLOCK_BOOTTIME in nanoseconds.
func bootNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

// What the nap says on the pipe (when its alarm is due, that it rings) is read as it comes; in
// between it sleeps in poll until the watch's next check, if any: a nap that has not rung a
// second after its alarm was due is woken (SIGCONT), and ended (SIGKILL) a second later if it
// still has not, after which the pipe ends and this becomes the whole guardian, which rings.
var watch = GuardianWatch()
var buffer = [UInt8](repeating: 0, count: 256)
while true {
    var timeout: Int32 = -1
    if let check = watch.nextCheck {
        let now = bootNanoseconds()
        timeout = check <= now ? 0 : Int32(clamping: (check - now) / 1_000_000 + 1)
    }
    var ready = pollfd(fd: watchDescriptor, events: Int16(POLLIN), revents: 0)
    let count = poll(&ready, 1, timeout)
    if count < 0 {
        if errno == EINTR { continue }
        break
    }
    if count > 0 {
        let bytes = read(watchDescriptor, &buffer, buffer.count)
        if bytes == 0 || (bytes < 0 && errno != EINTR) { break }
        if bytes > 0 { watch.read(buffer[0 ..< bytes]) }
        continue
    }
    // Without the nap's PID (never: the nap names itself) there is no one to wake.
    switch (watch.timeElapsed(now: bootNanoseconds()), napPid) {
    case (.wake?, let napPid?):
        log(GuardianWatch.wakeMessage(napPid))
        kill(napPid, SIGCONT)
    case (.end?, let napPid?):
        log(GuardianWatch.endMessage(napPid))
        kill(napPid, SIGKILL)
    default:
        break
    }
}
become(executable)

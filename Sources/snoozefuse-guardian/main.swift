// snoozefuse-guardian: the idle half of a nap's guardian (SPEC §9). `snoozefuse nap` starts it in a
// session of its own, with descriptor 3 the read end of a pipe whose write end only the nap holds:
//
//   snoozefuse-guardian LOCK -- PROGRAM ARGUMENT...
//
// It takes a shared lock on the file LOCK (`status` sees a guardian by it) and opens PROGRAM (the
// nap's own `snoozefuse`), then sleeps in one read of descriptor 3, with no wake-up at all, until
// the nap's process has ended however it ended. Then it becomes PROGRAM ARGUMENT... (`guardian
// --nap PID`) by exec, keeping its PID, its lock and descriptor 3 (whose read now ends at once):
// the whole program decides whether the nap ended its session or must be taken over, and rings
// the whole chain of outputs if so.
//
// Why a program of its own: the guardian waits through every nap, and waiting needs nothing but
// this. It links no Foundation, no argument parser, no audio: its memory is the Swift runtime's
// (issue 23), where the whole program's was twice the floor of a Swift program with Foundation.
// PROGRAM is opened at the start and run from that descriptor, so replacing or removing the
// installed program during a nap cannot leave the alarm without a guardian.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The nap's end of the watch: descriptor 3 (``Guardian/watchDescriptor`` in the runtime).
let watchDescriptor: Int32 = 3

func fail(_ message: String, status: Int32) -> Never {
    let line = "snoozefuse-guardian: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, arguments[2] == "--" else {
    fail("usage: snoozefuse-guardian LOCK -- PROGRAM ARGUMENT... (started by `snoozefuse nap`, descriptor 3 its watch)", status: 64)
}
let lockPath = arguments[1]
let program = Array(arguments[3...])

// Kept across exec on purpose, on descriptor 4: the lock is held without a gap until the whole
// guardian holds its own (it then closes this one).
let lock = open(lockPath, O_RDWR | O_CREAT, 0o600)
if lock >= 0, flock(lock, LOCK_SH) == 0, lock != 4, dup2(lock, 4) == 4 { close(lock) }
let executable = open(program[0], O_RDONLY | O_CLOEXEC)

var byte: UInt8 = 0
while true {
    let count = read(watchDescriptor, &byte, 1)
    if count == 0 || (count < 0 && errno != EINTR) { break }
}

// The arguments and environment as C strings for exec (they live until exec replaces this image).
func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
    strings.map { strdup($0) } + [nil]
}
let argv = cStrings(program)
var environmentPointers: [UnsafeMutablePointer<CChar>?] = []
var entry = environ
while let pointer = entry.pointee {
    environmentPointers.append(pointer)
    entry += 1
}
environmentPointers.append(nil)
if executable >= 0 { fexecve(executable, argv, environmentPointers) }
// The descriptor could not run (an old kernel, a file system that refuses): the program by its path.
execve(program[0], argv, environmentPointers)
fail("cannot run \(program[0]) to take the nap over: \(String(cString: strerror(errno)))", status: 70)

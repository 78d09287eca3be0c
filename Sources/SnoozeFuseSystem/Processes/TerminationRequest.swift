import CLinux
import Glibc

/// SIGTERM, taken on a thread of its own: the program does what its end takes (ends what it
/// adopted, says so), then exits. The signal's handler only writes a byte to a pipe that thread
/// reads; nothing is blocked, so the processes the program starts get SIGTERM as usual.
public enum TerminationRequest {
    /// Calls `end` on a thread named `name` when SIGTERM arrives; `end` must end the process.
    /// Once per process. False when the pipe, the handler or the thread cannot be had (SIGTERM
    /// then ends the process as it would have).
    public static func handle(onThreadNamed name: String, _ end: @escaping @Sendable () -> Void) -> Bool {
        let descriptor = snoozefuse_term_pipe()
        guard descriptor >= 0 else { return false }
        return SystemThread.start(named: name) {
            var byte: UInt8 = 0
            while true {
                let count = read(descriptor, &byte, 1)
                if count == 1 { break }
                if count < 0 && errno == EINTR { continue }
                return
            }
            end()
        }
    }
}

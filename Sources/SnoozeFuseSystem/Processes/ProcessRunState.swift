/// Whether a process runs, from the state letter the kernel gives in `/proc/PID/stat` (after the
/// command's name in parentheses, which may itself hold spaces and parentheses).
public enum ProcessRunState: Sendable, Hashable {
    /// Running, sleeping, waiting for a disk: it will go on by itself.
    case running
    /// Stopped by a signal (SIGSTOP, SIGTSTP from Ctrl-Z, SIGTTOU/SIGTTIN from its terminal) or
    /// by a debugger: it does nothing until SIGCONT.
    case stopped
    /// Dead but not yet reaped.
    case zombie

    /// The state of `pid`; nil when it has none (gone, or `/proc` not mounted).
    public static func of(_ pid: Int32) -> ProcessRunState? {
        guard pid > 0, let bytes = readProcFile("/proc/\(pid)/stat", limit: 4_096) else { return nil }
        return parse(bytes)
    }

    /// The state in the text of a `/proc/PID/stat` file.
    public static func parse(_ bytes: [UInt8]) -> ProcessRunState? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")), close + 2 < bytes.count else { return nil }
        switch bytes[close + 2] {
        case UInt8(ascii: "T"), UInt8(ascii: "t"): return .stopped
        case UInt8(ascii: "Z"), UInt8(ascii: "X"): return .zombie
        default: return .running
        }
    }
}

import Glibc

/// How long threads were ready to run but waited for a CPU (the second field of the kernel's
/// `schedstat`, kept per thread since it started).
///
/// A time limit meant for the code under test (a plugin's render within 1 s) subtracts it, so a
/// machine busy with other work does not turn a fast plugin into a failing one, while a thread
/// that sleeps, blocks or spins is still measured in full: sleeping and blocking are not waiting
/// for a CPU, and spinning is running.
public enum CPUWait {
    /// What the calling thread has waited so far; nil when the kernel does not keep it
    /// (built without scheduler statistics).
    public static func callingThread() -> Duration? {
        read("/proc/thread-self/schedstat")
    }

    /// The longest any one thread of `process` has waited so far; nil when there is none to read
    /// (the process has ended, or the kernel does not keep it).
    public static func longestThread(of process: Int32) -> Duration? {
        guard let threads = FolderEntries.names(in: "/proc/\(process)/task") else { return nil }
        var longest: Duration?
        for thread in threads {
            guard let waited = read("/proc/\(process)/task/\(thread)/schedstat") else { continue }
            longest = max(longest ?? waited, waited)
        }
        return longest
    }

    /// Reads `schedstat` ("on-CPU ns, waiting ns, time slices"), which the kernel writes in one line.
    private static func read(_ path: String) -> Duration? {
        let handle = open(path, O_RDONLY | O_CLOEXEC)
        guard handle >= 0 else { return nil }
        defer { close(handle) }
        var buffer = [UInt8](repeating: 0, count: 96)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(handle, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = buffer[0 ..< count].split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") })
        guard fields.count >= 2, let nanoseconds = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return .nanoseconds(nanoseconds)
    }
}

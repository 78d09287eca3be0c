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

    /// What each thread of `process` has waited so far, by thread id; nil when there is none to
    /// read (the process has ended, or the kernel does not keep it).
    public static func threads(of process: Int32) -> [Int32: Duration]? {
        guard let names = FolderEntries.names(in: "/proc/\(process)/task") else { return nil }
        var waits: [Int32: Duration] = [:]
        for name in names {
            guard let thread = Int32(name), let waited = read("/proc/\(process)/task/\(name)/schedstat") else { continue }
            waits[thread] = waited
        }
        return waits.isEmpty ? nil : waits
    }

    /// The most any one thread of `process` has waited since `earlier` (its ``threads(of:)`` then;
    /// a thread started since counts from zero); zero when nothing can be read.
    public static func longestWait(of process: Int32, since earlier: [Int32: Duration]) -> Duration {
        var longest = Duration.zero
        for (thread, waited) in threads(of: process) ?? [:] {
            longest = max(longest, waited - (earlier[thread] ?? .zero))
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

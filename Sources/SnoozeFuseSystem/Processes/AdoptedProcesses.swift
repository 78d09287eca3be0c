import CLinux
import Glibc

/// What a child leaves behind when it detaches (a double fork and `setsid`, as a daemon does):
/// such a process leaves its child's process group and session, so killing the group misses it.
/// With ``adoptOrphans()`` this process is a child subreaper, so what its descendants orphan
/// becomes its child instead of init's; ``end(marked:)`` then finds the adopted ones that carry a
/// child's mark in their environment (the variable a hook or a plugin was started with, inherited
/// by everything it starts) and ends them. A program that empties its environment escapes the
/// mark; nothing else it can do does.
public enum AdoptedProcesses {
    /// One process ended.
    public struct Ended: Sendable, Hashable, CustomStringConvertible {
        public var pid: Int32
        /// Its `comm` (the program's name, at most 15 bytes).
        public var name: String

        public var description: String { "\(name), pid \(pid)" }
    }

    /// Makes this process a child subreaper; the errno that says why not, or nil.
    public static func adoptOrphans() -> Int32? {
        snoozefuse_become_subreaper() == 0 ? nil : errno
    }

    /// SIGKILLs and reaps every child of this process whose environment holds `marker`
    /// (`NAME=VALUE`), and then those that killing them orphaned in turn, up to `rounds` times.
    /// Each is waited for at most `limit` (one in uninterruptible sleep dies when its I/O ends).
    /// Blocking: for threads of their own.
    public static func end(marked marker: String, waitingAtMost limit: Duration = .seconds(2), rounds: Int = 8) -> [Ended] {
        end(waitingAtMost: limit, rounds: rounds) { environment(of: $0.pid).contains(marker) }
    }

    /// SIGKILLs and reaps every child of this process, marked or not, and what that orphans in
    /// turn: for a program that starts one child at a time, whose every other child was adopted
    /// from it (`plugins check`). A process that empties its environment is found too.
    public static func endEveryChild(waitingAtMost limit: Duration = .seconds(2), rounds: Int = 8) -> [Ended] {
        end(waitingAtMost: limit, rounds: rounds) { _ in true }
    }

    private static func end(waitingAtMost limit: Duration, rounds: Int, where chosen: (Ended) -> Bool) -> [Ended] {
        // A process that adopts nothing has no such child: no need to read /proc.
        guard snoozefuse_is_subreaper() != 0 else { return [] }
        var ended: [Ended] = []
        for _ in 0 ..< rounds {
            let found = children().filter(chosen)
            guard !found.isEmpty else { break }
            for child in found { _ = kill(child.pid, SIGKILL) }
            for child in found { _ = ProcessSpawn.wait(for: child.pid, atMost: limit) }
            ended += found
        }
        return ended
    }

    /// This process's children, from `/proc` (their parent's id is ours).
    static func children() -> [Ended] {
        let me = getpid()
        guard let folder = opendir("/proc") else { return [] }
        defer { closedir(folder) }
        var found: [Ended] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != me, let stat = read("/proc/\(pid)/stat") else { continue }
            // `pid (comm) state ppid …`: the name can hold spaces and parentheses, so split after the last ')'.
            guard let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == me else { continue }
            found.append(Ended(pid: pid, name: String(stat[stat.index(after: open) ..< close])))
        }
        return found
    }

    /// The `NAME=VALUE` entries of `pid`'s environment (empty when it cannot be read).
    static func environment(of pid: Int32) -> [String] {
        guard let text = read("/proc/\(pid)/environ") else { return [] }
        return text.split(separator: "\0").map(String.init)
    }

    /// A small `/proc` file, whole.
    private static func read(_ path: String) -> String? {
        readProcFile(path, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) }
    }
}

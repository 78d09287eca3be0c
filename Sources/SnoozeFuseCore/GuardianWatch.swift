/// What a guardian does while its nap is alive (SPEC §9: a nap stopped by Ctrl-Z or SIGSTOP, frozen
/// or stuck, still rings). The nap tells its guardian, down the pipe whose end only the nap holds,
/// when the alarm it keeps is due (one line at each change); the guardian sleeps until a second
/// after that. A nap that has not said it rings by then is woken (SIGCONT: a stopped process runs
/// again and rings itself); one that still has not a second later is ended (SIGKILL), and the
/// guardian takes its alarm over as it does when a nap dies. The nap's lines:
///
///     due NANOSECONDS   the alarm it keeps is due then (CLOCK_BOOTTIME)
///     ringing           it rings: nothing to watch until it says otherwise
///     idle              nothing to watch (before its first hold with no time named, or once it
///                       has ended)
///
/// A pure value over boot-time nanoseconds: the guardian's loop reads the pipe into it, sleeps until
/// ``nextCheck``, and does what ``timeElapsed(now:)`` says.
public struct GuardianWatch: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable {
        /// Send the nap SIGCONT: it may be stopped.
        case wake
        /// Send the nap SIGKILL: woken, it still has not rung; its alarm is taken over.
        case end
    }

    /// When the alarm the nap keeps is due, in nanoseconds of CLOCK_BOOTTIME; nil with nothing to watch.
    public private(set) var due: Int64?
    public private(set) var ringing = false
    /// When the nap was woken, for want of ringing.
    public private(set) var wokenAt: Int64?
    /// The nap was ended: nothing more to do but wait for its pipe to close.
    public private(set) var ended = false
    /// What was read of a line not yet ended.
    private var partial: [UInt8] = []

    /// How long after the alarm is due (and after a wake) the nap must have said it rings.
    public static let grace: Int64 = 1_000_000_000

    /// The guardian's descriptor 3: the read end of the pipe whose write end only the nap holds
    /// (the runtime's `Guardian` passes it, the `snoozefuse-guardian` program sleeps on it).
    public static let watchDescriptor: Int32 = 3
    /// Where the `snoozefuse-guardian` program keeps the nap lock across its exec of `snoozefuse
    /// guardian` (`--watcher-lock 4`).
    public static let lockDescriptor: Int32 = 4

    public init() {}

    /// When to look next, in nanoseconds of CLOCK_BOOTTIME; nil to sleep until the nap says more.
    public var nextCheck: Int64? {
        guard !ringing, !ended, let due else { return nil }
        if let wokenAt { return wokenAt.addingReportingOverflow(Self.grace).overflow ? .max : wokenAt + Self.grace }
        return due.addingReportingOverflow(Self.grace).overflow ? .max : due + Self.grace
    }

    /// Takes what was read from the pipe (any number of bytes, lines split anywhere). A line it
    /// does not know is ignored.
    public mutating func read(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            guard byte == UInt8(ascii: "\n") else {
                // A line longer than any the nap writes is not one of its lines.
                if partial.count < 64 { partial.append(byte) }
                continue
            }
            take(String(decoding: partial, as: UTF8.self))
            partial.removeAll(keepingCapacity: true)
        }
    }

    private mutating func take(_ line: String) {
        let words = line.split(separator: " ")
        switch (words.first, words.count) {
        case ("due", 2):
            guard let nanoseconds = Int64(words[1]) else { return }
            due = nanoseconds
            ringing = false
            wokenAt = nil
            ended = false
        case ("ringing", 1):
            ringing = true
            wokenAt = nil
            ended = false
        case ("idle", 1):
            due = nil
            ringing = false
            wokenAt = nil
            ended = false
        default:
            return
        }
    }

    /// What to do at `now` (nanoseconds of CLOCK_BOOTTIME): nothing before ``nextCheck``; then wake
    /// the nap, and end it if it was woken a grace ago and still has not rung.
    public mutating func timeElapsed(now: Int64) -> Action? {
        guard let check = nextCheck, now >= check else { return nil }
        guard wokenAt != nil else {
            wokenAt = now
            return .wake
        }
        ended = true
        return .end
    }

    /// What the guardian says when it wakes the nap with `pid`.
    public static func wakeMessage(_ pid: Int32) -> String {
        "the nap (pid \(pid)) had not rung 1 s after its alarm was due (stopped by Ctrl-Z or SIGSTOP, frozen or stuck): woken with SIGCONT"
    }

    /// What the guardian says when it ends the nap with `pid` to take its alarm over.
    public static func endMessage(_ pid: Int32) -> String {
        "the nap (pid \(pid)) still had not rung 1 s after it was woken: ended with SIGKILL, and its guardian rings its alarm"
    }

    /// The line a nap writes for the alarm it keeps: `due` at `nanoseconds` of CLOCK_BOOTTIME,
    /// `ringing`, or `idle` (nil, not ringing).
    public static func line(due nanoseconds: Int64?, ringing: Bool) -> String {
        if ringing { return "ringing\n" }
        return nanoseconds.map { "due \($0)\n" } ?? "idle\n"
    }
}

public import Glibc

/// An instant on CLOCK_BOOTTIME: time since boot, counting the time the machine spent suspended,
/// so a deadline that passed during a suspend is due at once on resume (SPEC §2, §7). The same
/// time base as Swift's `ContinuousClock` on Linux, and the one every deadline and every time limit
/// of this program is measured on.
public struct BootInstant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Time since boot, including time spent suspended.
    public var sinceBoot: Duration

    public init(sinceBoot: Duration) { self.sinceBoot = sinceBoot }

    /// Reads CLOCK_BOOTTIME.
    public static var now: BootInstant {
        var spec = Glibc.timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return BootInstant(sinceBoot: .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec))
    }

    public func advanced(by duration: Duration) -> BootInstant { BootInstant(sinceBoot: sinceBoot + duration) }
    public func duration(to other: BootInstant) -> Duration { other.sinceBoot - sinceBoot }
    public static func < (lhs: BootInstant, rhs: BootInstant) -> Bool { lhs.sinceBoot < rhs.sinceBoot }
    public var description: String { "boot+\(sinceBoot)" }

    /// Nanoseconds since boot (what crosses a pipe to another process of this boot).
    public var nanoseconds: Int64 {
        let parts = sinceBoot.components
        return parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000
    }

    /// The instant as a `timespec` (for `timerfd_settime` and `clock_nanosleep` with TIMER_ABSTIME).
    public var absoluteTimespec: Glibc.timespec {
        let parts = sinceBoot.components
        guard parts.seconds >= 0 else { return Glibc.timespec(tv_sec: 0, tv_nsec: 1) }
        return Glibc.timespec(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
    }
}

/// The clock of an ``EventLoop``: reads CLOCK_BOOTTIME, and sleeps as timers of its loop, which
/// sleeps in `poll` on one timerfd armed for the earliest deadline. A process waiting for its alarm
/// so does not wake at all until then (Swift's own timers wake the process about once a second),
/// and wakes within microseconds of it. Pass it wherever something waits: every deadline and time
/// limit of a nap is one clock's.
public struct BootClock: Clock, Sendable {
    public typealias Instant = BootInstant

    /// The loop whose thread keeps the timers.
    public let loop: EventLoop

    public init(loop: EventLoop) { self.loop = loop }

    public var now: BootInstant { .now }
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: BootInstant, tolerance: Duration? = nil) async throws {
        try await loop.sleep(until: deadline)
    }
}

extension Duration {
    /// This length as `poll`'s time limit: whole milliseconds plus one, so a wait never ends
    /// before it (poll rounds down to its clock's tick); `Int32.max` for one too long to say.
    /// Meant for a length above zero: the caller has already acted on one that is over.
    public var pollMilliseconds: Int32 {
        let (milliseconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000)
        guard !overflow else { return .max }
        return Int32(clamping: milliseconds + components.attoseconds / 1_000_000_000_000_000 + 1)
    }
}

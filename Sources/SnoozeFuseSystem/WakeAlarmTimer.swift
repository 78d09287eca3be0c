import CLinux
import Glibc

/// A timer that wakes a suspended machine: a timerfd on CLOCK_BOOTTIME_ALARM (SPEC §7).
///
/// Armed for an absolute instant on CLOCK_BOOTTIME (the clock of every deadline here), it makes the
/// kernel program the real-time clock so that the machine resumes in time. Nobody needs to read or
/// poll it: the event loop's own timer rings the alarm once the machine runs; this one only makes
/// sure it runs. Creating it needs CAP_WAKE_ALARM (root, or a local session on systemd 254 or later)
/// and proves only that: waking also needs an RTC (``hasRealTimeClock``).
public final class WakeAlarmTimer: Sendable {
    /// The timerfd (close-on-exec: a program this process starts never holds it).
    public let descriptor: Int32

    /// `CLOCK_BOOTTIME_ALARM`.
    public static let clockID: Int32 = 9

    /// Creates the timer, disarmed.
    /// - Throws: ``WakeAlarmError``; `EPERM` when the process lacks CAP_WAKE_ALARM.
    public init() throws(WakeAlarmError) {
        let descriptor = timerfd_create(Self.clockID, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard descriptor >= 0 else { throw WakeAlarmError(operation: .create, code: errno) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Arms the timer for `instant` (absolute) and returns the instant the kernel holds, read back
    /// with `timerfd_gettime` (which gives the time left; now is added to it). An instant that has
    /// passed fires at once, which wakes nothing that is awake.
    public func arm(at instant: BootInstant) throws(WakeAlarmError) -> BootInstant {
        var setting = itimerspec()
        setting.it_value = instant.absoluteTimespec
        guard timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &setting, nil) == 0 else {
            throw WakeAlarmError(operation: .arm, code: errno)
        }
        return try armedFor() ?? BootInstant.now
    }

    /// The instant the timer will fire, as the kernel reads it back; `nil` when disarmed.
    public func armedFor() throws(WakeAlarmError) -> BootInstant? {
        var current = itimerspec()
        guard timerfd_gettime(descriptor, &current) == 0 else { throw WakeAlarmError(operation: .read, code: errno) }
        let now = BootInstant.now
        let left = Duration.seconds(current.it_value.tv_sec) + .nanoseconds(current.it_value.tv_nsec)
        return left == .zero ? nil : now.advanced(by: left)
    }

    /// Disarms the timer (the alarm rings, or the nap ended).
    public func disarm() {
        var setting = itimerspec()
        _ = timerfd_settime(descriptor, 0, &setting, nil)
    }

    /// Whether the machine has a real-time clock the kernel can program to wake it
    /// (`/sys/class/rtc/rtc0`). Without one, an armed wake alarm wakes nothing.
    public static var hasRealTimeClock: Bool {
        access(realTimeClockPath, F_OK) == 0
    }

    /// Where the first RTC appears.
    public static let realTimeClockPath = "/sys/class/rtc/rtc0"
}

/// A wake alarm that could not be created or set.
public struct WakeAlarmError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Operation: String, Sendable, Hashable {
        case create = "timerfd_create(CLOCK_BOOTTIME_ALARM)"
        case arm = "timerfd_settime"
        case read = "timerfd_gettime"
    }

    public var operation: Operation
    public var code: Int32

    public init(operation: Operation, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// The process lacks CAP_WAKE_ALARM.
    public var isMissingCapability: Bool { code == EPERM }

    public var description: String {
        let text = strerror(code).map { String(cString: $0) } ?? "error \(code)"
        if isMissingCapability {
            return "\(operation.rawValue): \(text): this process lacks CAP_WAKE_ALARM"
        }
        if code == EINVAL && operation == .create {
            return "\(operation.rawValue): \(text): this kernel has no alarm timers (CONFIG_RTC_CLASS)"
        }
        return "\(operation.rawValue): \(text)"
    }
}

import CLinux
import Glibc

/// A wake-up call between threads: an eventfd that one thread rings and another sleeps on, with or
/// without a deadline. Ringing is one `write` that never blocks, never allocates and takes no lock,
/// so a real-time thread (the audio thread) may ring it. Closed when the value goes away.
public final class EventBell: Sendable {
    /// Polled beside another descriptor by a ``BusConnection`` of the same module.
    let descriptor: Int32

    /// Nil when the system refuses an eventfd.
    public init?() {
        descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else { return nil }
    }

    deinit {
        close(descriptor)
    }

    /// Wakes the sleeper (rings pile up into one wake-up).
    public func ring() {
        signalEventDescriptor(descriptor)
    }

    /// Sleeps until the bell rings or `other` is readable (data, its end, an error): whether the
    /// bell rang (its rings are taken). For threads of their own, never an event loop's.
    public func wait(orReadable other: Int32) -> Bool {
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: other, events: Int16(POLLIN), revents: 0)]
        while poll(&descriptors, 2, -1) < 0 {
            if errno != EINTR { return false }
        }
        guard descriptors[0].revents != 0 else { return false }
        drainCounter(descriptor)
        return true
    }

    /// Takes the rings (after a poll that found the bell readable).
    func drain() {
        drainCounter(descriptor)
    }

    /// Sleeps until the bell rings or `deadline` passes on CLOCK_BOOTTIME (never, when nil);
    /// whether it rang (the rings are taken). For threads of their own, never an event loop's.
    public func wait(until deadline: BootInstant?) -> Bool {
        guard waitReadable(descriptor, until: deadline) else { return false }
        drainCounter(descriptor)
        return true
    }
}

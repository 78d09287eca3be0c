import CLinux
import Glibc

/// Writes all of `text` to `fileDescriptor` in as few writes as the kernel allows, retrying partial
/// writes and EINTR, so lines from different threads never interleave mid-line. Errors are
/// dropped: this is for the terminal and standard streams, and a closed one leaves nowhere better
/// to report to.
public func writeAll(_ text: String, to fileDescriptor: Int32) {
    var text = text
    text.withUTF8 { buffer in
        _ = writeAll(UnsafeRawBufferPointer(buffer), to: fileDescriptor)
    }
}

/// Writes every byte of `bytes`, retrying partial writes and EINTR.
/// - Returns: `true` when all were written, `false` on the first other error (`errno` says which).
@discardableResult
public func writeAll(_ bytes: UnsafeRawBufferPointer, to fileDescriptor: Int32) -> Bool {
    guard var pointer = bytes.baseAddress else { return true }
    var remaining = bytes.count
    while remaining > 0 {
        let written = write(fileDescriptor, pointer, remaining)
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        pointer += written
        remaining -= written
    }
    return true
}

/// Adds one to an eventfd counter (wakes whoever polls it).
func signalEventDescriptor(_ descriptor: Int32) {
    var one: UInt64 = 1
    while withUnsafeBytes(of: &one, { write(descriptor, $0.baseAddress, 8) }) < 0 && errno == EINTR {}
}

/// Reads (and so resets) an eventfd or timerfd counter; a non-blocking descriptor with nothing to
/// read is fine.
func drainCounter(_ descriptor: Int32) {
    var scratch: UInt64 = 0
    while read(descriptor, &scratch, 8) < 0 && errno == EINTR {}
}

/// Blocks the calling thread until `descriptor` is readable (or hung up), or `deadline` passes on
/// CLOCK_BOOTTIME (never, when nil). Returns whether it became readable. The time limit is a
/// timerfd polled with it, so it is exact and counts through suspend. For threads of their own,
/// never an event loop's.
public func waitReadable(_ descriptor: Int32, until deadline: BootInstant?) -> Bool {
    let timer = deadlineTimer(deadline)
    defer { if timer >= 0 { close(timer) } }
    var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: timer, events: Int16(POLLIN), revents: 0)]
    while true {
        if poll(&descriptors, 2, -1) < 0 {
            if errno == EINTR { continue }
            return false
        }
        if descriptors[0].revents != 0 { return true }
        if descriptors[1].revents != 0 { return false }
    }
}

/// A timerfd on CLOCK_BOOTTIME that becomes readable at `deadline`; -1 for none (no deadline, or
/// the system refused one). The caller closes it.
private func deadlineTimer(_ deadline: BootInstant?) -> Int32 {
    guard let deadline else { return -1 }
    let timer = timerfd_create(CLOCK_BOOTTIME, Int32(TFD_CLOEXEC))
    var setting = itimerspec()
    setting.it_value = deadline.absoluteTimespec
    if timer >= 0 { timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME), &setting, nil) }
    return timer
}

/// What ``waitReadable(_:until:whileOpen:)`` saw.
public enum ReadableWait: Sendable, Hashable {
    case readable, deadline
    /// The other end of `whileOpen` went away (a pipe's reader closed it, a terminal hung up).
    case peerGone
}

/// As ``waitReadable(_:until:)``, and ends as soon as `output`, a descriptor this process writes
/// to, has lost its reader: a status bar that quits takes its `status --follow` with it, even
/// while there is nothing to write.
public func waitReadable(_ descriptor: Int32, until deadline: BootInstant?, whileOpen output: Int32) -> ReadableWait {
    let timer = deadlineTimer(deadline)
    defer { if timer >= 0 { close(timer) } }
    // No event asked of the output: poll reports its error and hang-up whatever is asked.
    var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: timer, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: output, events: 0, revents: 0)]
    while true {
        if poll(&descriptors, 3, -1) < 0 {
            if errno == EINTR { continue }
            return .deadline
        }
        if descriptors[2].revents & Int16(POLLERR | POLLHUP) != 0 { return .peerGone }
        if descriptors[0].revents != 0 { return .readable }
        if descriptors[1].revents != 0 { return .deadline }
    }
}

/// A pipe whose ends are both close-on-exec from the start (no child started meanwhile by another
/// thread inherits them); nil with `errno` set when the system refuses one.
public func makePipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [-1, -1]
    guard snoozefuse_pipe_cloexec(&ends) == 0 else { return nil }
    return (ends[0], ends[1])
}

/// The whole of a `/proc` file (whose size `stat` calls 0), read until its end, a read error or
/// `limit` bytes; nil when it cannot be opened.
func readProcFile(_ path: String, limit: Int) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { _ = close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while bytes.count < limit {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
    }
    return bytes
}

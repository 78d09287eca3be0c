import CWayland
import Glibc

/// A Wayland compositor's idle notification (CWayland, through libwayland-client, loaded at the
/// first use): `idled` once no input has come on the seat for a length, `resumed` at the next input
/// after it. `ext_idle_notifier_v1` where the compositor offers it, else `org_kde_kwin_idle`.
///
/// Every wait for the compositor while it is set up is bounded by `limit`; ``next(orRung:)``
/// sleeps on the connection (no polling) until the compositor says something or the bell rings.
/// One thread uses it at a time.
public final class WaylandIdleNotification {
    public enum Notice: Sendable, Hashable {
        case idled, resumed
    }

    /// `ext_idle_notifier_v1` or `org_kde_kwin_idle`: what the compositor answered with.
    public let protocolName: String
    private var idle: OpaquePointer?

    /// Connects to the compositor at `socket` and asks to be told after `timeout` without input
    /// (`.zero`: nothing asked, to see whether it could be).
    public init(socket: String, after timeout: Duration, limit: Duration) throws(WaylandIdleError) {
        var why = [CChar](repeating: 0, count: 512)
        let milliseconds = UInt32(clamping: Self.milliseconds(timeout))
        guard let opened = snoozefuse_wayland_idle_open(socket, milliseconds, Int32(clamping: Self.milliseconds(limit)), &why, why.count) else {
            throw WaylandIdleError(reason: Self.text(why))
        }
        idle = opened
        protocolName = String(cString: snoozefuse_wayland_idle_protocol(opened))
    }

    deinit { close() }

    /// Sleeps until the compositor tells (what), or `bell` rings (nil).
    /// - Throws: when the connection broke (the compositor went away or refused a request).
    public func next(orRung bell: EventBell?) throws(WaylandIdleError) -> Notice? {
        guard let idle else { throw WaylandIdleError(reason: "the notification was ended") }
        var why = [CChar](repeating: 0, count: 512)
        func failed() -> WaylandIdleError {
            close()
            return WaylandIdleError(reason: Self.text(why))
        }
        while true {
            switch snoozefuse_wayland_idle_take(idle, &why, why.count) {
            case Int32(SNOOZEFUSE_WAYLAND_IDLED): return .idled
            case Int32(SNOOZEFUSE_WAYLAND_RESUMED): return .resumed
            case Int32(SNOOZEFUSE_WAYLAND_NOTHING): break
            default: throw failed()
            }
            let prepared = snoozefuse_wayland_idle_prepare(idle, &why, why.count)
            if prepared < 0 { throw failed() }
            if prepared > 0 { continue }
            let descriptor = snoozefuse_wayland_idle_fd(idle)
            let rang = bell?.wait(orReadable: descriptor) ?? !Self.waitReadable(descriptor)
            if rang {
                snoozefuse_wayland_idle_cancel(idle)
                return nil
            }
            if snoozefuse_wayland_idle_read(idle, &why, why.count) < 0 { throw failed() }
        }
    }

    /// Ends the notification and the connection.
    public func close() {
        if let idle { snoozefuse_wayland_idle_close(idle) }
        idle = nil
    }

    /// Sleeps until `descriptor` is readable; false when the wait itself failed.
    private static func waitReadable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, -1) < 0 {
            if errno != EINTR { return false }
        }
        return true
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        max(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000, 0)
    }

    /// A C buffer's text, up to its NUL.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A compositor's idle notification could not be had, or its connection broke: why, in words.
public struct WaylandIdleError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

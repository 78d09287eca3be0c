import Glibc
import SnoozeFuseSystem

/// The idle time of the sources that answer over D-Bus, each call bounded by `limit`. One
/// connection is kept between reads (logind's read is two calls on it); a failed read closes it,
/// and the next read connects again.
///
/// Not thread-safe on its own: one thread uses it at a time. A nap probes it while it sets up,
/// then hands it to ``DesktopHold``'s thread, which alone uses it from then on (starting the
/// thread orders the two); `doctor` uses it on one thread.
final class BusIdleTime: IdleTimeReader, @unchecked Sendable {
    enum Kind: Sendable, Hashable {
        /// GNOME Shell: `org.gnome.Mutter.IdleMonitor.GetIdletime` (milliseconds), and its idle
        /// and user-active watches (``MutterIdleWatches``).
        case mutter
        /// KDE Plasma and others: `org.freedesktop.ScreenSaver.GetSessionIdleTime`, read as
        /// milliseconds as KDE answers it.
        case screenSaver
        /// systemd-logind: the session's `IdleHint` and `IdleSinceHintMonotonic`, which the desktop
        /// sets when it judges the session idle: coarse (often minutes), the last resort.
        case logind
    }

    let kind: Kind
    let limit: Duration
    private var connection: BusConnection?

    init(kind: Kind, limit: Duration) {
        self.kind = kind
        self.limit = limit
    }

    var name: String {
        switch kind {
        case .mutter: "GNOME (org.gnome.Mutter.IdleMonitor)"
        case .screenSaver: "org.freedesktop.ScreenSaver"
        case .logind: "systemd-logind (IdleHint)"
        }
    }

    func finish() {
        connection?.close()
        connection = nil
    }

    /// GNOME tells when the idle time reaches a length and when input comes (its watches), so
    /// nothing needs polling; the other sources are read.
    func watches() -> (any IdleWatches)? {
        kind == .mutter ? MutterIdleWatches(limit: limit) : nil
    }

    /// logind's hint means something only in a graphical session (the desktop sets it); on a text
    /// console or over SSH it stays "not idle" and would hold the nap until its failsafe.
    func probe() throws(IdleTimeError) {
        _ = try idleTime()
        guard kind == .logind else { return }
        let type: String
        do {
            guard case .string(let found) = try sessionProperty("Type", .string) else {
                throw IdleTimeError(source: name, problem: "no session Type in its reply")
            }
            type = found
        } catch let error as BusError {
            finish()
            throw IdleTimeError(source: name, problem: error.reason)
        } catch let error as IdleTimeError {
            throw error
        } catch {
            throw IdleTimeError(source: name, problem: "\(error)")
        }
        guard ["x11", "wayland", "mir"].contains(type) else {
            throw IdleTimeError(source: name, problem: "a \(type) session, not a graphical one: nothing sets its idle hint")
        }
    }

    func idleTime() throws(IdleTimeError) -> Duration {
        do {
            switch kind {
            case .mutter:
                return try Self.mutterIdleTime(on: open(for: MutterIdleWatches.getIdletime), limit: limit, source: name)
            case .screenSaver:
                let method = BusMethod(service: "org.freedesktop.ScreenSaver", path: "/org/freedesktop/ScreenSaver",
                                       interface: "org.freedesktop.ScreenSaver", member: "GetSessionIdleTime")
                guard case .uint32(let milliseconds) = try open(for: method).call(method, replying: [.uint32], timeout: limit).first else {
                    throw IdleTimeError(source: name, problem: "no idle time in its reply")
                }
                return .milliseconds(Int64(milliseconds))
            case .logind:
                return try logindIdleTime()
            }
        } catch {
            finish()
            throw IdleTimeError(error, source: name)
        }
    }

    /// GNOME's idle time, asked on `connection`.
    static func mutterIdleTime(on connection: BusConnection, limit: Duration, source: String) throws -> Duration {
        guard case .uint64(let milliseconds) = try connection.call(MutterIdleWatches.getIdletime, replying: [.uint64], timeout: limit).first else {
            throw IdleTimeError(source: source, problem: "no idle time in its reply")
        }
        return .milliseconds(Int64(clamping: milliseconds))
    }

    /// The connection kept between reads, opened when there is none.
    private func open(for method: BusMethod) throws(BusError) -> BusConnection {
        if let connection { return connection }
        let opened = try BusConnection(kind == .logind ? .system : .session, for: method)
        connection = opened
        return opened
    }

    /// A property of this process's logind session.
    private func sessionProperty(_ property: String, _ type: BusReplyType) throws -> BusReplyValue? {
        let method = BusMethod(service: "org.freedesktop.login1", path: "/org/freedesktop/login1/session/auto",
                               interface: "org.freedesktop.DBus.Properties", member: "Get")
        return try open(for: method).call(method, [.string("org.freedesktop.login1.Session"), .string(property)],
                                          replying: [.variant(type)], timeout: limit).first
    }

    /// logind says idle or not, and since when on CLOCK_MONOTONIC; not idle is no idle time.
    private func logindIdleTime() throws -> Duration {
        guard case .boolean(let idle) = try sessionProperty("IdleHint", .boolean) else {
            throw IdleTimeError(source: name, problem: "no IdleHint in its reply")
        }
        guard idle else { return .zero }
        guard case .uint64(let since) = try sessionProperty("IdleSinceHintMonotonic", .uint64) else {
            throw IdleTimeError(source: name, problem: "no IdleSinceHintMonotonic in its reply")
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        return .microseconds(Int64(clamping: nowMicroseconds &- min(since, nowMicroseconds)))
    }
}

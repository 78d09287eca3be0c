import SnoozeFuseCore
import SnoozeFuseSystem

/// The desktop's idleness from the Wayland compositor of the session (`WAYLAND_DISPLAY`):
/// `ext_idle_notifier_v1` where it offers it (wlroots 0.17+, KWin 6, Mutter 45+), else
/// `org_kde_kwin_idle` (sway 1.7, KWin 5). A compositor tells when no input has come for a length
/// and when input comes again; it never tells the idle time itself, so this source holds a nap by
/// its watches alone (``watches()``) and cannot be read: a read fails, and where the watches fail
/// the hold gives up as for any source whose reads fail (the release starts: when in doubt, ring).
///
/// Every wait for the compositor while it is set up is bounded by `limit` (its connection, its
/// globals, the notification asked for); libwayland-client is loaded at the first use.
final class WaylandIdleTime: IdleTimeReader, Sendable {
    static let genericName = "Wayland (ext_idle_notifier_v1 or org_kde_kwin_idle)"

    /// The compositor's socket.
    let path: String
    let limit: Duration
    /// The protocol the compositor answered with, once probed.
    private let answered = Locked<String?>(nil)

    /// Nil outside a Wayland session (no `WAYLAND_DISPLAY`).
    init?(environment: [String: String], limit: Duration) {
        guard let display = environment["WAYLAND_DISPLAY"], !display.isEmpty else { return nil }
        if display.hasPrefix("/") {
            path = display
        } else {
            guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
            path = runtime + "/" + display
        }
        self.limit = limit
    }

    var name: String {
        answered.withLock { protocolName in protocolName.map { "Wayland (\($0) on \(path))" } } ?? Self.genericName
    }

    func probe() throws(IdleTimeError) {
        do throws(WaylandIdleError) {
            let notification = try WaylandIdleNotification(socket: path, after: .zero, limit: limit)
            notification.close()
            answered.withLock { $0 = notification.protocolName }
        } catch {
            throw IdleTimeError(source: Self.genericName, problem: error.reason)
        }
    }

    func idleTime() throws(IdleTimeError) -> Duration {
        throw IdleTimeError(source: name, problem: "a Wayland compositor tells when input stops and starts again, never the idle time itself")
    }

    func answer() throws(IdleTimeError) -> String {
        "tells when input stops and comes again: nothing is read"
    }

    func watches() -> (any IdleWatches)? {
        WaylandIdleWatches(path: path, limit: limit, name: name)
    }
}

/// A Wayland compositor's idle notification as ``IdleWatches``: `idled` after `--idle-after`
/// without input, `resumed` at the next input after it (the input watch is that same
/// notification, so there is nothing to ask for); the idle time is known only once idled.
final class WaylandIdleWatches: IdleWatches {
    let name: String
    private let path: String
    private let limit: Duration
    private var notification: WaylandIdleNotification?
    private var idleAfter: Duration = .zero
    /// When the compositor said no input had come for `idleAfter` (nil: input since, or not yet).
    private var idledAt: BootInstant?

    init(path: String, limit: Duration, name: String) {
        self.path = path
        self.limit = limit
        self.name = name
    }

    deinit { close() }

    func watchIdle(after length: Duration) throws(IdleTimeError) {
        close()
        do throws(WaylandIdleError) {
            notification = try WaylandIdleNotification(socket: path, after: max(length, .milliseconds(1)), limit: limit)
        } catch {
            throw IdleTimeError(source: name, problem: error.reason)
        }
        idleAfter = length
        idledAt = nil
    }

    /// Nothing to ask: after `idled` the notification says `resumed` at the next input.
    func watchActive() throws(IdleTimeError) {}

    /// What the notifications imply: `idleAfter` and the time since `idled`; none before it (the
    /// notification counts from when it was asked for, as if input had just come).
    func idleTime() throws(IdleTimeError) -> Duration {
        guard let idledAt else { return .zero }
        return idleAfter + idledAt.duration(to: BootInstant.now)
    }

    func next(orRung bell: EventBell?) throws(IdleTimeError) -> IdleNotice? {
        guard let notification else { throw IdleTimeError(source: name, problem: "no notification was asked for") }
        do throws(WaylandIdleError) {
            switch try notification.next(orRung: bell) {
            case .idled?:
                idledAt = BootInstant.now
                return .idle
            case .resumed?:
                idledAt = nil
                return .active
            case nil:
                return nil
            }
        } catch {
            close()
            throw IdleTimeError(source: name, problem: error.reason)
        }
    }

    func close() {
        notification?.close()
        notification = nil
        idledAt = nil
    }
}

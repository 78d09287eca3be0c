import SnoozeFuseCore
import SnoozeFuseSystem

/// Notifications of the desktop's idleness and input, so that a nap is held without reading the
/// idle time on a schedule. Each call to the desktop is bounded (a bus call's time limit);
/// ``next(orRung:)`` sleeps until a watch fires or its bell rings. It blocks its thread: one
/// ``DesktopHold`` thread uses it, never an event loop's or Swift's shared pool.
protocol IdleWatches: AnyObject {
    /// Names the source in messages.
    var name: String { get }
    /// From now on, tell each time no input has come for `length` (once per quiet spell).
    func watchIdle(after length: Duration) throws(IdleTimeError)
    /// Tell at the next input, once.
    func watchActive() throws(IdleTimeError)
    /// The idle time, read now.
    func idleTime() throws(IdleTimeError) -> Duration
    /// Sleeps until a watch fires (which one), or `bell` rings (nil).
    /// - Throws: when the watches are gone (the connection broke, the desktop restarted).
    func next(orRung bell: EventBell?) throws(IdleTimeError) -> IdleNotice?
    /// Ends the watches.
    func close()
}

/// GNOME Shell's watches (`org.gnome.Mutter.IdleMonitor`: `AddIdleWatch`, `AddUserActiveWatch`
/// and the `WatchFired` signal), on a session-bus connection of their own. Mutter ties a watch to
/// the connection that added it and drops it when that connection closes.
///
/// An idle watch fires when no input has come for its interval (at once when that is already so)
/// and again after each new quiet spell; a user-active watch fires once, at the next input.
final class MutterIdleWatches: IdleWatches {
    static let service = "org.gnome.Mutter.IdleMonitor"
    static let path = "/org/gnome/Mutter/IdleMonitor/Core"
    static var getIdletime: BusMethod { method("GetIdletime") }

    let limit: Duration
    let name = "GNOME (org.gnome.Mutter.IdleMonitor)"
    private var connection: BusConnection?
    private var idleWatch: UInt32?
    private var activeWatch: UInt32?

    init(limit: Duration) {
        self.limit = limit
    }

    deinit { close() }

    private static func method(_ member: String) -> BusMethod {
        BusMethod(service: service, path: path, interface: service, member: member)
    }

    func watchIdle(after length: Duration) throws(IdleTimeError) {
        let milliseconds = UInt64(clamping: length.components.seconds * 1000 + length.components.attoseconds / 1_000_000_000_000_000)
        idleWatch = try addWatch(Self.method("AddIdleWatch"), [.uint64(max(milliseconds, 1))])
    }

    func watchActive() throws(IdleTimeError) {
        activeWatch = try addWatch(Self.method("AddUserActiveWatch"), [])
    }

    func idleTime() throws(IdleTimeError) -> Duration {
        let connection = try connected()
        return try asking { try BusIdleTime.mutterIdleTime(on: connection, limit: limit, source: name) }
    }

    func next(orRung bell: EventBell?) throws(IdleTimeError) -> IdleNotice? {
        let connection = try connected()
        while true {
            let signal: BusSignal?
            do {
                signal = try connection.nextSignal(orRung: bell)
            } catch {
                throw failure(error)
            }
            guard let signal else { return nil }
            if signal.member == "NameOwnerChanged" {
                throw IdleTimeError(source: name, problem: "GNOME Shell left the bus or was restarted: its watches are gone")
            }
            guard case .uint32(let watch)? = signal.arguments.first else { continue }
            if watch == activeWatch {
                activeWatch = nil
                return .active
            }
            if watch == idleWatch { return .idle }
        }
    }

    func close() {
        connection?.close()
        connection = nil
        idleWatch = nil
        activeWatch = nil
    }

    /// The watches' connection, listening for `WatchFired` and for GNOME Shell's name changing
    /// hands (a restarted shell has forgotten every watch).
    private func connected() throws(IdleTimeError) -> BusConnection {
        if let connection { return connection }
        do {
            let opened = try BusConnection(.session, for: Self.method("AddIdleWatch"))
            try opened.listen(to: BusSignalRule(service: Self.service, path: Self.path, interface: Self.service, member: "WatchFired"),
                              timeout: limit)
            try opened.listen(to: BusSignalRule(service: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                                member: "NameOwnerChanged", firstArgument: Self.service), timeout: limit)
            connection = opened
            return opened
        } catch {
            throw failure(error)
        }
    }

    private func addWatch(_ method: BusMethod, _ arguments: [BusArgument]) throws(IdleTimeError) -> UInt32 {
        let connection = try connected()
        return try asking {
            guard case .uint32(let watch)? = try connection.call(method, arguments, replying: [.uint32], timeout: limit).first else {
                throw IdleTimeError(source: name, problem: "no watch in the reply to \(method.member)")
            }
            return watch
        }
    }

    /// `body`'s result, its failure told as this source's (the watches are closed then).
    private func asking<Value>(_ body: () throws -> Value) throws(IdleTimeError) -> Value {
        do {
            return try body()
        } catch {
            throw failure(error)
        }
    }

    private func failure(_ error: any Error) -> IdleTimeError {
        close()
        return IdleTimeError(error, source: name, namingMethod: true)
    }
}

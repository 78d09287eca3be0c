import SnoozeFuseCore
import SnoozeFuseSystem

/// What a person asked of the alarm from its notification.
enum NotificationAction: Sendable, Hashable {
    /// `Snooze 5 min` (or a click on the notification).
    case snooze
    /// `Stop` (offered only where one key stops the alarm: `--dismiss key`).
    case stop
}

/// The alarm on the desktop too (issues 15 and 39): while it rings, one critical notification
/// through `org.freedesktop.Notifications` on the session bus, with the actions `Snooze N min`
/// (also a click on it) and, where one key stops the alarm, `Stop`; with a word or a hold it says
/// how to stop. It is replaced, never stacked: by one that says when it rings again while snoozed,
/// and by the ringing one again after; it is closed when the nap ends (dismissed, its ring limit,
/// a cancel). An action the
/// server reports (`ActionInvoked`) goes to `act`, which snoozes or stops the nap as another
/// terminal's `snoozefuse snooze` or `stop` does.
///
/// It follows the nap's records (``NapPorts/onRecord``) and never holds anything up: one thread of
/// its own (started at the first alarm) makes every call, each bounded by `timeout`, on one
/// connection (a server sends a notification's actions to the connection that made it), and
/// sleeps on that connection between them. Without a session bus (SSH, cron, a container) there
/// is no desktop to tell and it says nothing; with one but no notification server, or when a call
/// fails, it says so once and tries no more.
final class AlarmNotification: Sendable {
    static let notify = method("Notify")
    static let close = method("CloseNotification")

    /// How long each bus call may take, connecting included.
    let timeout: Duration
    /// The nap's snooze length, for the action's label.
    let snooze: Duration
    /// How a ringing alarm is stopped for good: only `key` offers `Stop` here.
    let dismissal: DismissMode
    private let act: @Sendable (NotificationAction) -> Void
    private let warn: @Sendable (String) -> Void
    private let bell = EventBell()
    private let state = Locked(State())

    private enum Command: Sendable {
        case show(AlarmReason?)
        /// Snoozed for this long: the notification says so, and when it rings again.
        case snoozed(Duration?)
        case close
        case finish
    }

    private struct State {
        var commands: [Command] = []
        /// The thread that makes the calls, once started.
        var server: BoundedCall<Void>?
    }

    init(timeout: Duration = .seconds(3), snooze: Duration, dismissal: DismissMode, act: @escaping @Sendable (NotificationAction) -> Void,
         warn: @escaping @Sendable (String) -> Void) {
        self.timeout = timeout
        self.snooze = snooze
        self.dismissal = dismissal
        self.act = act
        self.warn = warn
    }

    /// Follows one record of the nap (on its loop: returns at once).
    func follow(_ record: SessionRecord) {
        switch record.event {
        case .alarm: send(.show(record.reason))
        case .phase where record.phase == .snoozed:
            send(.snoozed(record.until.map { .milliseconds(Int64((($0 - record.t) * 1000).rounded())) }))
        case .end: send(.close)
        default: break
        }
    }

    /// Closes what is shown and ends the thread, waiting for it at most two calls' time on `clock`.
    func finish(on clock: BootClock) async {
        guard let server = state.withLock({ state -> BoundedCall<Void>? in
            state.commands.append(.finish)
            return state.server
        }) else { return }
        bell?.ring()
        _ = await server.value(waitingAtMost: timeout * 2, on: clock)
    }

    private func send(_ command: Command) {
        // Without a bell the thread could not sleep: no notification (the alarm is not affected).
        guard bell != nil else { return }
        let start = state.withLock { state -> Bool in
            // Nothing is shown before the first alarm: nothing to close, no thread.
            guard state.server != nil || { if case .show = command { true } else { false } }() else { return false }
            state.commands.append(command)
            return state.server == nil
        }
        if start {
            let server = BoundedCall.start(named: "snoozefuse-notify") { [self] in serve() }
            state.withLock { $0.server = server }
        }
        bell?.ring()
    }

    /// The label of the snooze action: `Snooze 5 min`.
    var snoozeLabel: String {
        let seconds = snooze.components.seconds
        return seconds % 60 == 0 ? "Snooze \(seconds / 60) min" : "Snooze \(snooze.compactDescription)"
    }

    /// The actions offered: the key and label of each, in order (`default` is a click on it).
    var actions: [String] {
        ["default", snoozeLabel, "snooze", snoozeLabel] + (dismissal == .key ? ["stop", "Stop"] : [])
    }

    func body(for reason: AlarmReason?) -> String {
        let rings = reason == .max ? "The nap ran out of time (its max) and the alarm rings." : "Your nap is over and the alarm rings."
        return "\(rings) \(stopText)"
    }

    /// How the alarm is stopped for good, as the dismissal asks.
    var stopText: String {
        switch dismissal {
        case .key: "Stop it here, or with `snoozefuse stop`."
        case .word: "To stop it, type the word it shows in the nap's terminal, or run `snoozefuse stop` and type it there."
        case .hold: "To stop it, hold a key for 3 s in the nap's terminal, or run `snoozefuse stop`."
        }
    }

    /// The thread's loop: the commands in order, and between them the server's signals.
    private func serve() {
        var connection: BusConnection?
        var shown: UInt32?
        var givenUp = false
        while true {
            let commands = state.withLock { state -> [Command] in
                defer { state.commands = [] }
                return state.commands
            }
            for command in commands {
                if case .finish = command {
                    if let id = shown, let connection { _ = try? connection.call(Self.close, [.uint32(id)], timeout: timeout) }
                    connection?.close()
                    return
                }
                guard !givenUp else { continue }
                do throws(BusError) {
                    switch command {
                    case .show(let reason):
                        shown = try show(on: &connection, replacing: shown, summary: "Time to wake up", body: body(for: reason),
                                         actions: actions, urgency: 2)
                    case .snoozed(let length):
                        // Only the one shown is replaced: a snooze before any is shown shows none.
                        guard shown != nil else { break }
                        let again = length.map { " in \($0.compactDescription)" } ?? ""
                        shown = try show(on: &connection, replacing: shown, summary: "Snoozed",
                                         body: "The alarm rings again\(again). \(stopText)", actions: dismissal == .key ? ["stop", "Stop"] : [],
                                         urgency: 1)
                    case .close:
                        if let id = shown, let connection { _ = try connection.call(Self.close, [.uint32(id)], timeout: timeout) }
                        shown = nil
                    case .finish:
                        break
                    }
                } catch {
                    givenUp = true
                    connection?.close()
                    connection = nil
                    shown = nil
                    giveUp(after: error)
                }
            }
            guard let open = connection, shown != nil else {
                _ = bell?.wait(until: nil)
                continue
            }
            do throws(BusError) {
                guard let signal = try open.nextSignal(orRung: bell) else { continue }
                guard case .uint32(let id)? = signal.arguments.first, id == shown else { continue }
                if signal.member == "NotificationClosed" {
                    shown = nil
                } else if signal.member == "ActionInvoked", signal.arguments.count > 1, case .string(let key) = signal.arguments[1] {
                    switch key {
                    case "default", "snooze": act(.snooze)
                    case "stop" where dismissal == .key: act(.stop)
                    default: break
                    }
                }
            } catch {
                // The server or the bus went away: what is shown is gone with it.
                open.close()
                connection = nil
                shown = nil
            }
        }
    }

    /// Shows a notification, replacing `shown` (never two), on `connection` (opened, and made to
    /// hear the server, at the first): its id.
    private func show(on connection: inout BusConnection?, replacing shown: UInt32?, summary: String, body: String, actions: [String],
                      urgency: UInt8) throws(BusError) -> UInt32? {
        let listening = connection != nil
        let open: BusConnection
        if let connection { open = connection } else { open = try BusConnection(.session, for: Self.notify) }
        connection = open
        let reply = try open.call(Self.notify, [
            .string("snoozefuse"), .uint32(shown ?? 0), .string("appointment-soon"), .string(summary), .string(body), .strings(actions),
            .variants(["urgency": .byte(urgency), "category": .string("alarm")]), .int32(0),
        ], replying: [.uint32], timeout: timeout)
        let id: UInt32? = if case .uint32(let id) = reply.first { id } else { shown }
        // Heard after the first call, which starts a server the bus activates. Not heard, the
        // notification has no working actions, but it is shown and is closed at the end.
        if !listening {
            do throws(BusError) {
                try listen(on: open)
            } catch {
                warn("the alarm's notification cannot be answered (snooze and stop it from a terminal): \(error)")
            }
        }
        return id
    }

    /// Makes `connection` hear the server's actions and closings.
    private func listen(on connection: BusConnection) throws(BusError) {
        for member in ["ActionInvoked", "NotificationClosed"] {
            try connection.listen(to: BusSignalRule(service: Self.notify.service, path: Self.notify.path, interface: Self.notify.interface,
                                                    member: member), timeout: timeout)
        }
    }

    /// Says why it stopped trying, once, unless there is no session bus at all (nothing to tell then).
    private func giveUp(after error: BusError) {
        guard !(error.stage == .connect && error.isUnavailable) else { return }
        warn("no desktop notification of the alarm (the alarm itself is not affected): \(error)")
    }

    private static func method(_ member: String) -> BusMethod {
        BusMethod(service: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                  interface: "org.freedesktop.Notifications", member: member)
    }
}

import SnoozeFuseCore
import SnoozeFuseSystem

/// The alarm on the desktop too (issue 15): while it rings, a critical notification through
/// `org.freedesktop.Notifications` on the session bus, closed when the alarm stops (dismissed,
/// snoozed, its ring limit, a cancel) and shown again when it rings again after a snooze.
///
/// It follows the nap's records (``NapPorts/onRecord``) and never holds anything up: each bus call
/// runs after the one before it on a thread of its own, after the alarm has started sounding.
/// Without a session bus (SSH, cron, a container) there is no desktop to tell and it says nothing;
/// with one but no notification server, or when a call fails, it says so once.
final class AlarmNotification: Sendable {
    static let notify = method("Notify")
    static let close = method("CloseNotification")

    /// How long each bus call may take, connecting included.
    let timeout: Duration
    /// How the alarm is stopped from elsewhere, for the body (`snoozefuse stop`).
    let stopHint: String
    private let warn: @Sendable (String) -> Void
    private let calls = CallSequence(named: "snoozefuse-notify")
    private let state = Locked(State())

    private struct State {
        /// The notification shown now, by the server's id.
        var shown: UInt32?
        /// Nothing more is tried: no session bus, or a failure was reported.
        var givenUp = false
    }

    init(timeout: Duration = .seconds(3), stopHint: String, warn: @escaping @Sendable (String) -> Void) {
        self.timeout = timeout
        self.stopHint = stopHint
        self.warn = warn
    }

    /// Follows one record of the nap (on its loop: returns at once).
    func follow(_ record: SessionRecord) {
        switch record.event {
        case .alarm:
            let reason = record.reason
            calls.add { [self] in show(reason: reason) }
        case .alarmStopped, .end:
            calls.add { [self] in closeShown() }
        default:
            break
        }
    }

    /// Waits until the calls made so far have returned (the last notification is closed), at most
    /// two calls' time on `clock`.
    func finish(on clock: BootClock) async {
        await calls.settled(waitingAtMost: timeout * 2, on: clock)
    }

    private func show(reason: AlarmReason?) {
        guard !state.withLock({ $0.givenUp }) else { return }
        let body = reason == .max
            ? "The nap ran out of time (its max) and the alarm rings. \(stopHint)"
            : "Your nap is over and the alarm rings. \(stopHint)"
        do {
            let reply = try Bus.call(Self.notify, on: .session, [
                .string("snoozefuse"), .uint32(0), .string("appointment-soon"), .string("Time to wake up"), .string(body),
                .strings([]), .variants(["urgency": .byte(2)]), .int32(0),
            ], replying: [.uint32], timeout: timeout)
            if case .uint32(let id) = reply.first {
                state.withLock { $0.shown = id }
            }
        } catch {
            giveUp(after: error)
        }
    }

    private func closeShown() {
        guard let id = state.withLock({ state -> UInt32? in
            defer { state.shown = nil }
            return state.shown
        }) else { return }
        do {
            _ = try Bus.call(Self.close, on: .session, [.uint32(id)], timeout: timeout)
        } catch {
            giveUp(after: error)
        }
    }

    /// Stops trying; says why once, unless there is no session bus at all (nothing to tell then).
    private func giveUp(after error: BusError) {
        let first = state.withLock { state -> Bool in
            defer { state.givenUp = true }
            return !state.givenUp
        }
        guard first, !(error.stage == .connect && error.isUnavailable) else { return }
        warn("no desktop notification of the alarm (the alarm itself is not affected): \(error)")
    }

    private static func method(_ member: String) -> BusMethod {
        BusMethod(service: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                  interface: "org.freedesktop.Notifications", member: member)
    }
}

import Glibc
public import SnoozeFuseSystem

/// What keeps the machine from sleeping while something needs it awake (SPEC §7): a
/// reference-counted service in which each holder names its reason. While anything is held it
/// keeps one inhibitor (systemd-logind's `sleep:idle` block, see ``LogindInhibitor``) whose reason
/// lists what is held; when the last holder lets go, the inhibitor is released. If the process
/// dies, the kernel closes the inhibitor's descriptor and logind lets the machine sleep again.
///
/// Taking and releasing the inhibitor happen on threads of their own (``CallSequence``), never on
/// the caller's: ``hold(_:)`` and ``KeepAwake/Hold/release()`` return at once. Where no inhibitor
/// can be had (no system bus in a container), it says so once through `warn` and carries on.
public final class KeepAwake: Sendable {
    /// Why the machine must stay awake.
    public enum Reason: String, Sendable, Hashable, CaseIterable, Comparable {
        /// A nap waits for its alarm.
        case nap
        /// An alarm rings.
        case alarm
        /// Sounds are being imported.
        case `import`

        public static func < (lhs: Reason, rhs: Reason) -> Bool { lhs.order < rhs.order }

        private var order: Int {
            switch self {
            case .nap: 0
            case .alarm: 1
            case .import: 2
            }
        }
    }

    /// One holder's claim. Let go with ``release()`` (more than once is harmless); a hold that goes
    /// away unreleased lets go then.
    public final class Hold: Sendable {
        public let reason: Reason
        private let service: KeepAwake
        private let released = Locked(false)

        fileprivate init(reason: Reason, service: KeepAwake) {
            self.reason = reason
            self.service = service
        }

        deinit {
            release()
        }

        /// Lets go; the inhibitor goes when this was the last hold.
        public func release() {
            let first = released.withLock { released -> Bool in
                defer { released = true }
                return !released
            }
            if first { service.letGo(reason) }
        }
    }

    private let inhibitor: any SleepInhibitor
    private let warn: @Sendable (String) -> Void
    private let calls = CallSequence(named: "snoozefuse-awake")
    private let state = Locked(State())

    private struct State {
        /// How many holds of each reason are held.
        var holds: [Reason: Int] = [:]
        /// The inhibitor held now, with the reasons it was taken for.
        var current: (why: String, lock: any InhibitorLock)?
        /// An inhibitor could not be had: no more attempts (and the warning was given).
        var unavailable = false
    }

    /// - Parameters:
    ///   - inhibitor: what takes the inhibitor (logind through the system bus; a fake in tests).
    ///   - warn: told once, on a thread of the service's, when no inhibitor can be had.
    public init(inhibitor: any SleepInhibitor = LogindInhibitor(), warn: @escaping @Sendable (String) -> Void) {
        self.inhibitor = inhibitor
        self.warn = warn
    }

    /// Holds the machine awake for `reason` until the returned hold is released.
    public func hold(_ reason: Reason) -> Hold {
        state.withLock { $0.holds[reason, default: 0] += 1 }
        calls.add { [self] in reconcile() }
        return Hold(reason: reason, service: self)
    }

    /// The reasons held now, in ``Reason`` order, as the inhibitor's `why` says them (`nap`,
    /// `nap, alarm`); `nil` when nothing is held.
    public var reasons: String? {
        state.withLock { Self.why($0.holds) }
    }

    /// The reasons the inhibitor held now was taken for; `nil` when none is held.
    public var inhibiting: String? {
        state.withLock { $0.current?.why }
    }

    /// Waits until the inhibitor matches the holds (taken, replaced or released), at most `limit`.
    /// Returns whether it does.
    @discardableResult
    public func settled(waitingAtMost limit: Duration) -> Bool {
        calls.settled(waitingAtMost: limit)
    }

    /// ``settled(waitingAtMost:)`` for a task, waiting on `clock`.
    @discardableResult
    public func settled(waitingAtMost limit: Duration, on clock: BootClock) async -> Bool {
        await calls.settled(waitingAtMost: limit, on: clock)
    }

    fileprivate func letGo(_ reason: Reason) {
        state.withLock { state in
            let left = (state.holds[reason] ?? 1) - 1
            state.holds[reason] = left > 0 ? left : nil
        }
        calls.add { [self] in reconcile() }
    }

    /// Makes the inhibitor match the holds: releases it when nothing is held, takes one when
    /// something is, and replaces it (the new one first, so there is no gap) when the reasons
    /// changed. Every change of the holds adds one of these after it, so the last one sees the last
    /// holds. Runs on the sequence's thread: it may block in the bus call.
    private func reconcile() {
        let (wanted, current, unavailable) = state.withLock { ($0.holds.isEmpty ? nil : Self.why($0.holds), $0.current, $0.unavailable) }
        guard wanted != current?.why else { return }
        guard let wanted else {
            state.withLock { $0.current = nil }
            current?.lock.release()
            return
        }
        guard !unavailable else { return }
        do {
            let lock = try inhibitor.inhibit(why: wanted)
            let replaced = state.withLock { state in
                defer { state.current = (wanted, lock) }
                return state.current
            }
            replaced?.lock.release()
        } catch {
            state.withLock { $0.unavailable = true }
            warn(error.warning)
        }
    }

    private static func why(_ holds: [Reason: Int]) -> String? {
        holds.isEmpty ? nil : holds.keys.sorted().map(\.rawValue).joined(separator: ", ")
    }
}

/// What keeps the machine from sleeping: takes an inhibitor (blocking; called on a thread of its
/// own, never an event loop's).
public protocol SleepInhibitor: Sendable {
    /// Takes an inhibitor for `why`.
    /// - Throws: ``InhibitorError`` saying what failed and what it means for the nap.
    func inhibit(why: String) throws(InhibitorError) -> any InhibitorLock
}

/// An inhibitor held: the machine stays awake until it is released.
public protocol InhibitorLock: Sendable {
    /// Releases it (more than once is harmless).
    func release()
}

/// An inhibitor that could not be taken.
public struct InhibitorError: Error, Sendable, CustomStringConvertible {
    /// What failed and why (the bus call's own description).
    public var description: String
    /// Whether there is nothing to take one from here (no system bus, no logind).
    public var isUnavailable: Bool

    public init(_ description: String, isUnavailable: Bool) {
        self.description = description
        self.isUnavailable = isUnavailable
    }

    /// The warning a nap gives: what it means, then what failed.
    var warning: String {
        "nothing keeps this machine awake during the nap (\(isUnavailable ? "no inhibitor here" : "the inhibitor was refused")): if it suspends, the alarm rings when it resumes. \(description)"
    }
}

/// systemd-logind's inhibitor: `org.freedesktop.login1.Manager.Inhibit("sleep:idle", "snoozefuse",
/// why, "block")` on the system bus (the bus `DBUS_SYSTEM_BUS_ADDRESS` names, when set). logind
/// blocks suspend and idle actions until the descriptor it returns is closed.
public struct LogindInhibitor: SleepInhibitor {
    /// The method called.
    public static let method = BusMethod(service: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                                         interface: "org.freedesktop.login1.Manager", member: "Inhibit")
    /// How long the call may take, connecting included.
    public var timeout: Duration

    public init(timeout: Duration = .seconds(3)) {
        self.timeout = timeout
    }

    public func inhibit(why: String) throws(InhibitorError) -> any InhibitorLock {
        let reply: [BusReplyValue]
        do {
            reply = try Bus.call(Self.method, on: .system,
                                 [.string("sleep:idle"), .string("snoozefuse"), .string(why), .string("block")],
                                 replying: [.fileDescriptor], timeout: timeout)
        } catch {
            throw InhibitorError("\(error)", isUnavailable: error.isUnavailable)
        }
        guard case .fileDescriptor(let descriptor) = reply.first else {
            throw InhibitorError("\(Self.method) replied without a descriptor", isUnavailable: false)
        }
        return DescriptorLock(descriptor: descriptor)
    }

    /// The inhibitor's descriptor (close-on-exec: a program this process starts, its guardian
    /// among them, never holds it).
    private final class DescriptorLock: InhibitorLock {
        private let descriptor: Locked<Int32?>

        init(descriptor: Int32) {
            self.descriptor = Locked(descriptor)
        }

        deinit {
            release()
        }

        func release() {
            if let descriptor = descriptor.withLock({ value -> Int32? in
                defer { value = nil }
                return value
            }) {
                close(descriptor)
            }
        }
    }
}

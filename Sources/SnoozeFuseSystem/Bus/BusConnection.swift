import CSystemd
import Glibc

/// A signal to listen for on a ``BusConnection``: what the bus is asked to deliver (a match rule)
/// and what the connection hands on.
public struct BusSignalRule: Sendable, Hashable, CustomStringConvertible {
    /// The bus name that sends it (`org.gnome.Mutter.IdleMonitor`; the bus itself is
    /// `org.freedesktop.DBus`).
    public var service: String
    /// The object it comes from; nil for any.
    public var path: String?
    public var interface: String
    public var member: String
    /// The value its first argument must have (a string); nil for any.
    public var firstArgument: String?

    public init(service: String, path: String? = nil, interface: String, member: String, firstArgument: String? = nil) {
        self.service = service
        self.path = path
        self.interface = interface
        self.member = member
        self.firstArgument = firstArgument
    }

    /// `org.gnome.Mutter.IdleMonitor.WatchFired of org.gnome.Mutter.IdleMonitor`.
    public var description: String { "\(interface).\(member) of \(service)" }

    /// The match rule the bus is given (`AddMatch`). The values are names and paths, which hold no
    /// quote.
    var matchRule: String {
        var rule = "type='signal',sender='\(service)',interface='\(interface)',member='\(member)'"
        if let path { rule += ",path='\(path)'" }
        if let firstArgument { rule += ",arg0='\(firstArgument)'" }
        return rule
    }

    /// As a method, for the errors of listening (``BusError`` names a method).
    var asMethod: BusMethod { BusMethod(service: service, path: path ?? "/", interface: interface, member: member) }

    /// Whether `signal` is one of these, sent by `owner` (the unique name that owned `service`
    /// when listening began). A signal addressed to this connection reaches it whatever its match
    /// rules say, so the sender is compared here: no other program on the bus can pass for the
    /// service.
    func matches(_ signal: BusSignal, from owner: String) -> Bool {
        guard signal.sender == owner, signal.interface == interface, signal.member == member,
              path.map({ $0 == signal.path }) ?? true else { return false }
        guard let firstArgument else { return true }
        if case .string(let value)? = signal.arguments.first { return value == firstArgument }
        return false
    }
}

/// A signal received on a ``BusConnection``.
public struct BusSignal: Sendable, Hashable {
    /// The unique name of the connection that sent it (`:1.42`).
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    /// Its leading arguments of the basic types ``BusReplyValue`` has (`u`, `t`, `b`, `s`, `o`),
    /// in order, up to the first of another type.
    public var arguments: [BusReplyValue]
}

/// One connection to a bus, kept open: method calls on it, each bounded in time like
/// ``Bus/call(_:on:_:replying:timeout:)``'s, and the signals it listens for.
///
/// Everything a service ties to its caller (GNOME's idle watches) lives as long as the connection:
/// the service drops it when the connection closes (on ``close()``, on deinit, or when the process
/// dies).
///
/// Blocks the calling thread; not thread-safe: one thread of its own uses it, never an event
/// loop's or Swift's shared pool.
public final class BusConnection {
    public let bus: BusKind
    private var connection: OpaquePointer?
    private let inbox = Inbox()

    /// What the connection's filter collects while sd-bus processes messages.
    private final class Inbox {
        /// Each rule with the unique name of its sender.
        var rules: [(rule: BusSignalRule, owner: String)] = []
        var signals: [BusSignal] = []
        var disconnected = false
    }

    /// Opens a connection to `bus`. Connecting and authenticating happen within the first call's
    /// time limit. `method` names what the connection is for in an error.
    /// - Throws: ``BusError`` (stage `connect`) when there is no bus to connect to.
    public init(_ bus: BusKind, for method: BusMethod) throws(BusError) {
        self.bus = bus
        // No bus at its address: said without loading or calling sd-bus (see BusKind.absence).
        if let absence = bus.absence { throw BusError(bus: bus, method: method, stage: .connect, code: absence) }
        // sd-bus is linked on first use (CLazyLink): a libsystemd that cannot be loaded is a bus
        // that is not there, said as such, never the end of the program at its first call.
        if let failure = LazyLibrary.failure(of: { snoozefuse_systemd_load($0, $1) }) {
            var error = BusError(bus: bus, method: method, stage: .connect, code: ENOENT)
            error.libraryFailure = failure
            throw error
        }
        var opened: OpaquePointer?
        let result = bus == .system ? sd_bus_open_system(&opened) : sd_bus_open_user(&opened)
        guard result >= 0, let opened else { throw BusError(bus: bus, method: method, stage: .connect, code: -result) }
        connection = opened
        // Sees every incoming message before sd-bus dispatches it; keeps the signals listened for.
        let added = sd_bus_add_filter(opened, nil, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let inbox = Unmanaged<Inbox>.fromOpaque(userdata).takeUnretainedValue()
            BusConnection.collect(message, into: inbox)
            return 0
        }, Unmanaged.passUnretained(inbox).toOpaque())
        guard added >= 0 else {
            sd_bus_close_unref(opened)
            connection = nil
            throw BusError(bus: bus, method: method, stage: .connect, code: -added)
        }
    }

    deinit { close() }

    /// Closes the connection; whatever a service tied to it goes with it. Calls after it fail.
    public func close() {
        guard let connection else { return }
        // The filter belongs to the connection: closing drops it before the inbox goes away.
        sd_bus_close_unref(connection)
        self.connection = nil
        withExtendedLifetime(inbox) {}
    }

    /// Calls `method` with `arguments` and returns the reply's values of `replyTypes` (see
    /// ``Bus/call(_:on:_:replying:timeout:)``).
    public func call(_ method: BusMethod, _ arguments: [BusArgument] = [], replying replyTypes: [BusReplyType] = [],
                     timeout: Duration) throws(BusError) -> [BusReplyValue] {
        let bus = bus
        let fail = { (stage: BusError.Stage, result: Int32) in BusError(bus: bus, method: method, stage: stage, code: -result) }
        guard let connection, !inbox.disconnected else { throw fail(.wait, -ECONNRESET) }
        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(connection, &message, method.service, method.path, method.interface, method.member)
        guard result >= 0, let message else { throw fail(.message, result) }
        defer { sd_bus_message_unref(message) }
        for argument in arguments {
            result = Bus.append(argument, to: message)
            guard result >= 0 else { throw fail(.message, result) }
        }
        let box = ReplyBox()
        var slot: OpaquePointer?
        result = sd_bus_call_async(connection, &slot, message, { reply, userdata, _ in
            guard let userdata else { return 0 }
            let box = Unmanaged<ReplyBox>.fromOpaque(userdata).takeUnretainedValue()
            box.reply = sd_bus_message_ref(reply)
            return 1
        }, Unmanaged.passUnretained(box).toOpaque(), Bus.microseconds(timeout))
        guard result >= 0 else { throw fail(.send, result) }
        // A call given up on is cancelled: its callback never runs after `box` has gone. A reply
        // that came in a pass that then failed is let go too.
        defer {
            sd_bus_slot_unref(slot)
            if let reply = box.reply { sd_bus_message_unref(reply) }
        }
        // Drives the connection (connecting, authenticating, sending, receiving) until the reply is
        // in or the time is up.
        let deadline = BootInstant.now.advanced(by: timeout)
        while box.reply == nil {
            result = sd_bus_process(connection, nil)
            if result == -EINTR { continue }
            guard result >= 0 else { throw fail(.wait, result) }
            if result > 0 { continue }
            let left = BootInstant.now.duration(to: deadline)
            guard left > .zero else {
                throw BusError(bus: bus, method: method, stage: .wait, code: ETIMEDOUT, timeout: timeout)
            }
            result = sd_bus_wait(connection, Bus.microseconds(left))
            if result < 0 && result != -EINTR { throw fail(.wait, result) }
        }
        guard let reply = box.reply else { throw fail(.wait, -EIO) }
        if let error = sd_bus_message_get_error(reply), sd_bus_error_is_set(error) != 0 {
            let name = error.pointee.name.map { String(cString: $0) }
            let text = error.pointee.message.map { String(cString: $0) }
            var failure = BusError(bus: bus, method: method, stage: .reply, code: sd_bus_error_get_errno(error))
            failure.remoteName = name
            failure.remoteMessage = text
            if name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Timeout" {
                failure.timeout = timeout
            }
            throw failure
        }
        return try Bus.read(replyTypes, from: reply, bus: bus, method: method)
    }

    /// Asks the bus for the signals of `rule` (`AddMatch`) from the program that owns its service
    /// now (`GetNameOwner`), each call bounded by `timeout`; from then on ``nextSignal(orRung:)``
    /// hands them on. Once that program leaves the bus, its successor's signals are not taken.
    /// - Throws: ``BusError`` when nothing owns the service, or a call fails.
    public func listen(to rule: BusSignalRule, timeout: Duration) throws(BusError) {
        let owner: String
        if rule.service == Self.busService {
            owner = Self.busService // the bus speaks for itself
        } else {
            let getOwner = Self.busMethod("GetNameOwner", of: rule.service)
            guard case .string(let found)? = try call(getOwner, [.string(rule.service)], replying: [.string], timeout: timeout).first else {
                throw BusError(bus: bus, method: getOwner, stage: .reply, code: EBADMSG)
            }
            owner = found
        }
        _ = try call(Self.busMethod("AddMatch", of: rule.service), [.string(rule.matchRule)], timeout: timeout)
        inbox.rules.append((rule, owner))
    }

    private static let busService = "org.freedesktop.DBus"

    /// A method of the bus itself, named in errors as being about `service`.
    private static func busMethod(_ member: String, of service: String) -> BusMethod {
        BusMethod(service: busService, path: "/org/freedesktop/DBus", interface: busService, member: member)
    }

    /// The next signal listened for, sleeping until one comes or `bell` rings: nil for the bell
    /// (its rings are taken). Without a bell it waits until a signal comes or the connection ends.
    /// - Throws: ``BusError`` (stage `wait`) when the connection breaks or is closed.
    public func nextSignal(orRung bell: EventBell?) throws(BusError) -> BusSignal? {
        let method = inbox.rules.first?.rule.asMethod
            ?? BusMethod(service: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "AddMatch")
        let bus = bus
        let fail = { (result: Int32) in BusError(bus: bus, method: method, stage: .wait, code: -result) }
        while true {
            if !inbox.signals.isEmpty { return inbox.signals.removeFirst() }
            guard let connection, !inbox.disconnected else { throw fail(-ECONNRESET) }
            let processed = sd_bus_process(connection, nil)
            if processed == -EINTR { continue }
            guard processed >= 0 else { throw fail(processed) }
            if processed > 0 { continue }
            let descriptor = sd_bus_get_fd(connection)
            let events = sd_bus_get_events(connection)
            guard descriptor >= 0, events >= 0 else { throw fail(descriptor < 0 ? descriptor : events) }
            // sd-bus's own next deadline (authentication, a pending call), on CLOCK_MONOTONIC.
            var busTimeout: UInt64 = .max
            _ = sd_bus_get_timeout(connection, &busTimeout)
            var milliseconds: Int64 = -1
            if busTimeout != .max {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
                milliseconds = Int64(clamping: (busTimeout &- min(busTimeout, nowMicroseconds) + 999) / 1000)
            }
            var descriptors = [pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: events), revents: 0)]
            if let bell { descriptors.append(pollfd(fd: bell.descriptor, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                throw fail(-errno)
            }
            if let bell, descriptors[1].revents != 0 {
                bell.drain()
                return nil
            }
        }
    }

    /// Keeps `message` in `inbox` when it is a signal listened for; notes the connection's end.
    private static func collect(_ message: OpaquePointer, into inbox: Inbox) {
        guard sd_bus_message_is_signal(message, nil, nil) > 0,
              let interface = sd_bus_message_get_interface(message).map({ String(cString: $0) }),
              let member = sd_bus_message_get_member(message).map({ String(cString: $0) }) else { return }
        if interface == "org.freedesktop.DBus.Local" && member == "Disconnected" {
            inbox.disconnected = true
            return
        }
        let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
        let sender = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
        var signal = BusSignal(sender: sender, path: path, interface: interface, member: member, arguments: [])
        // The rules' first argument is a string: read the arguments before matching.
        signal.arguments = basicArguments(of: message)
        sd_bus_message_rewind(message, 1)
        if inbox.rules.contains(where: { $0.rule.matches(signal, from: $0.owner) }) { inbox.signals.append(signal) }
    }

    /// The leading arguments of `message` of the basic types a ``BusReplyValue`` holds.
    private static func basicArguments(of message: OpaquePointer) -> [BusReplyValue] {
        var values: [BusReplyValue] = []
        while values.count < 8 {
            var type: CChar = 0
            guard sd_bus_message_peek_type(message, &type, nil) > 0 else { break }
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "u"):
                var value: UInt32 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return values }
                values.append(.uint32(value))
            case UInt8(ascii: "t"):
                var value: UInt64 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return values }
                values.append(.uint64(value))
            case UInt8(ascii: "b"):
                var value: Int32 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return values }
                values.append(.boolean(value != 0))
            case UInt8(ascii: "s"), UInt8(ascii: "o"):
                var pointer: UnsafePointer<CChar>?
                guard sd_bus_message_read_basic(message, type, &pointer) > 0, let pointer else { return values }
                values.append(.string(String(cString: pointer)))
            default:
                return values
            }
        }
        return values
    }

    /// Where a reply lands: set by the callback, on the calling thread, inside `sd_bus_process`.
    private final class ReplyBox {
        var reply: OpaquePointer?
    }
}

/// One thread uses a connection (sd-bus's are not thread-safe).
@available(*, unavailable)
extension BusConnection: Sendable {}

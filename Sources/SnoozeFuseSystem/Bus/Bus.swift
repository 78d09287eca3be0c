import CSystemd
import Glibc

/// Which D-Bus bus a call goes to.
public enum BusKind: String, Sendable, Hashable {
    /// The machine's bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`), where
    /// systemd-logind takes inhibitors.
    case system
    /// The logged-in user's bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`), where the
    /// desktop shows notifications.
    case session

    /// "the system bus", "the session bus".
    public var name: String { "the \(rawValue) bus" }

    /// The address sd-bus connects to, as its environment says (for messages).
    public var address: String {
        switch self {
        case .system:
            return getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
        case .session:
            if let address = getenv("DBUS_SESSION_BUS_ADDRESS") { return String(cString: address) }
            return getenv("XDG_RUNTIME_DIR").map { "unix:path=\(String(cString: $0))/bus" } ?? "none (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)"
        }
    }
}

/// A method of an object of a service on a bus.
public struct BusMethod: Sendable, Hashable, CustomStringConvertible {
    /// The bus name that provides it (`org.freedesktop.login1`).
    public var service: String
    /// The object (`/org/freedesktop/login1`).
    public var path: String
    /// The interface (`org.freedesktop.login1.Manager`).
    public var interface: String
    /// The method (`Inhibit`).
    public var member: String

    public init(service: String, path: String, interface: String, member: String) {
        self.service = service
        self.path = path
        self.interface = interface
        self.member = member
    }

    /// `org.freedesktop.login1.Manager.Inhibit of org.freedesktop.login1`.
    public var description: String { "\(interface).\(member) of \(service)" }
}

/// One argument of a method call, in D-Bus's types.
public enum BusArgument: Sendable, Hashable {
    /// `s`
    case string(String)
    /// `u`
    case uint32(UInt32)
    /// `t`
    case uint64(UInt64)
    /// `i`
    case int32(Int32)
    /// `y`
    case byte(UInt8)
    /// `as`
    case strings([String])
    /// `a{sv}`: each value goes in a variant of its own type (hints, options).
    case variants([String: BusArgument])

    /// The D-Bus signature of the argument.
    var signature: String {
        switch self {
        case .string: "s"
        case .uint32: "u"
        case .uint64: "t"
        case .int32: "i"
        case .byte: "y"
        case .strings: "as"
        case .variants: "a{sv}"
        }
    }
}

/// What a reply carries, in order, as the caller expects it.
public indirect enum BusReplyType: Sendable, Hashable {
    /// `u`
    case uint32
    /// `t`
    case uint64
    /// `b`
    case boolean
    /// `v` holding a value of the given type (a property, as `org.freedesktop.DBus.Properties.Get`
    /// answers); its value is read as that type's.
    case variant(BusReplyType)
    /// `s`
    case string
    /// `h`: a file descriptor, duplicated into this process (close-on-exec) and the caller's to close.
    case fileDescriptor

    /// Its D-Bus signature.
    var signature: String {
        switch self {
        case .uint32: "u"
        case .uint64: "t"
        case .boolean: "b"
        case .string: "s"
        case .fileDescriptor: "h"
        case .variant: "v"
        }
    }
}

/// One value of a reply (see ``BusReplyType``).
public enum BusReplyValue: Sendable, Hashable {
    case uint32(UInt32)
    case uint64(UInt64)
    case boolean(Bool)
    case string(String)
    /// Owned by the caller, close-on-exec.
    case fileDescriptor(Int32)
}

/// D-Bus method calls through sd-bus (libsystemd), each bounded in time.
///
/// A call opens its own connection, sends, waits for the reply with a time limit that covers
/// connecting, authenticating and the call itself (sd-bus's own waits would otherwise allow its
/// 25 s method and 90 s authentication defaults), reads the reply and closes the connection. It
/// blocks the calling thread, so it is for threads of their own (``CallSequence``), never an event
/// loop's or Swift's shared pool.
public enum Bus {
    /// Calls `method` on `bus` with `arguments` and returns the reply's values of `replyTypes`.
    /// - Throws: ``BusError`` naming the bus, the method and what to do, when the bus cannot be
    ///   reached, the service is missing or refuses, no answer came within `timeout`, or the reply
    ///   is not of `replyTypes`.
    public static func call(_ method: BusMethod, on bus: BusKind, _ arguments: [BusArgument] = [],
                            replying replyTypes: [BusReplyType] = [], timeout: Duration) throws(BusError) -> [BusReplyValue] {
        let connection = try BusConnection(bus, for: method)
        defer { connection.close() }
        return try connection.call(method, arguments, replying: replyTypes, timeout: timeout)
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let parts = duration.components
        guard parts.seconds >= 0 else { return 1 }
        return UInt64(parts.seconds) * 1_000_000 + UInt64(parts.attoseconds / 1_000_000_000_000) + 1
    }

    /// Appends one argument; returns sd-bus's result (negative errno on failure).
    static func append(_ argument: BusArgument, to message: OpaquePointer) -> Int32 {
        switch argument {
        case .string(let text):
            return text.withCString { sd_bus_message_append_basic(message, type("s"), $0) }
        case .uint32(var value):
            return sd_bus_message_append_basic(message, type("u"), &value)
        case .uint64(var value):
            return sd_bus_message_append_basic(message, type("t"), &value)
        case .int32(var value):
            return sd_bus_message_append_basic(message, type("i"), &value)
        case .byte(var value):
            return sd_bus_message_append_basic(message, type("y"), &value)
        case .strings(let texts):
            return inContainer("a", "s", of: message) {
                for text in texts {
                    let result = append(.string(text), to: message)
                    if result < 0 { return result }
                }
                return 0
            }
        case .variants(let entries):
            return inContainer("a", "{sv}", of: message) {
                for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                    let result = inContainer("e", "sv", of: message) {
                        let keyResult = append(.string(key), to: message)
                        if keyResult < 0 { return keyResult }
                        return inContainer("v", value.signature, of: message) { append(value, to: message) }
                    }
                    if result < 0 { return result }
                }
                return 0
            }
        }
    }

    private static func inContainer(_ kind: Character, _ contents: String, of message: OpaquePointer, _ body: () -> Int32) -> Int32 {
        var result = sd_bus_message_open_container(message, type(kind), contents)
        guard result >= 0 else { return result }
        result = body()
        guard result >= 0 else { return result }
        return sd_bus_message_close_container(message)
    }

    static func read(_ types: [BusReplyType], from reply: OpaquePointer, bus: BusKind,
                             method: BusMethod) throws(BusError) -> [BusReplyValue] {
        var values: [BusReplyValue] = []
        func failed(_ result: Int32) -> BusError {
            for case .fileDescriptor(let descriptor) in values { close(descriptor) }
            var error = BusError(bus: bus, method: method, stage: .reply, code: result < 0 ? -result : EBADMSG)
            error.expected = types
            return error
        }
        for expected in types {
            var expected = expected
            var inVariant = false
            if case .variant(let inner) = expected {
                let result = sd_bus_message_enter_container(reply, type("v"), inner.signature)
                guard result > 0 else { throw failed(result) }
                expected = inner
                inVariant = true
            }
            switch expected {
            case .uint32:
                var value: UInt32 = 0
                let result = sd_bus_message_read_basic(reply, type("u"), &value)
                guard result > 0 else { throw failed(result) }
                values.append(.uint32(value))
            case .uint64:
                var value: UInt64 = 0
                let result = sd_bus_message_read_basic(reply, type("t"), &value)
                guard result > 0 else { throw failed(result) }
                values.append(.uint64(value))
            case .boolean:
                var value: Int32 = 0 // sd-bus reads a `b` into an int
                let result = sd_bus_message_read_basic(reply, type("b"), &value)
                guard result > 0 else { throw failed(result) }
                values.append(.boolean(value != 0))
            case .variant:
                throw failed(-EINVAL) // a variant in a variant: no caller expects one
            case .string:
                var pointer: UnsafePointer<CChar>?
                let result = sd_bus_message_read_basic(reply, type("s"), &pointer)
                guard result > 0, let pointer else { throw failed(result) }
                values.append(.string(String(cString: pointer)))
            case .fileDescriptor:
                var received: Int32 = -1
                let result = sd_bus_message_read_basic(reply, type("h"), &received)
                guard result > 0 else { throw failed(result) }
                // The message owns what it received: this process keeps a copy of its own, never
                // inherited by a program it starts.
                let descriptor = fcntl(received, F_DUPFD_CLOEXEC, 3)
                guard descriptor >= 0 else { throw failed(-errno) }
                values.append(.fileDescriptor(descriptor))
            }
            if inVariant {
                let result = sd_bus_message_exit_container(reply)
                guard result >= 0 else { throw failed(result) }
            }
        }
        return values
    }

    private static func type(_ character: Character) -> CChar {
        CChar(bitPattern: character.asciiValue ?? 0)
    }
}

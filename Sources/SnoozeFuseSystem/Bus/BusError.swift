import Glibc

/// A D-Bus call that failed: which bus, which method of which service, at which step, why, and what
/// to do about it. The one place where sd-bus's negative errno returns and the error replies of
/// services become something a person can act on.
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the call was when it failed.
    public enum Stage: String, Sendable, Hashable {
        /// Opening the connection (no bus, or a bus that refuses this process).
        case connect
        /// Building the call's message (a bug, or out of memory).
        case message
        /// Sending it.
        case send
        /// Waiting for the reply (the connection broke, or no answer in time).
        case wait
        /// The reply: an error the service sent, or not what was expected.
        case reply
    }

    public var bus: BusKind
    public var method: BusMethod
    public var stage: Stage
    /// The errno (positive) sd-bus returned, or the one it maps the service's error to.
    public var code: Int32
    /// The D-Bus error name of an error reply (`org.freedesktop.DBus.Error.ServiceUnknown`).
    public var remoteName: String?
    /// The service's message with it.
    public var remoteMessage: String?
    /// For a call that got no answer: how long it waited.
    public var timeout: Duration?
    /// For a reply that was not what the caller expected: what it expected.
    public var expected: [BusReplyType]?

    /// libsystemd (sd-bus), linked on first use, cannot be loaded: why.
    public var libraryFailure: String?

    public init(bus: BusKind, method: BusMethod, stage: Stage, code: Int32, timeout: Duration? = nil) {
        self.bus = bus
        self.method = method
        self.stage = stage
        self.code = code
        self.timeout = timeout
    }

    /// No bus to talk to, or nothing on it provides the service: the feature is absent here, not
    /// broken (a container has no system bus; a session without a desktop has no notification server).
    public var isUnavailable: Bool {
        libraryFailure != nil || (stage == .connect && Self.absentCodes.contains(code))
            || remoteName == "org.freedesktop.DBus.Error.ServiceUnknown"
            || remoteName == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }

    /// Whether no answer came in time.
    public var timedOut: Bool { timeout != nil }

    /// The errnos of connecting to a bus that is not there.
    private static let absentCodes: Set<Int32> = [ENOENT, ECONNREFUSED, ENOTDIR, ENXIO, ENOMEDIUM, EADDRNOTAVAIL, EHOSTUNREACH]

    /// One line: what failed, why, what to do.
    public var description: String {
        "\(method.member) (\(method)) on \(bus.name) at \(bus.address) failed \(stageText): \(reason); \(fix)"
    }

    private var stageText: String {
        switch stage {
        case .connect: "to connect"
        case .message: "to build its message"
        case .send: "to send"
        case .wait: "waiting for the reply"
        case .reply: "in its reply"
        }
    }

    /// Why, in the service's words or the system's.
    public var reason: String {
        if let libraryFailure {
            return "libsystemd.so.0 cannot be loaded (\(libraryFailure))"
        }
        if let timeout {
            return "no answer within \(timeout)"
        }
        if let remoteName {
            return "\(remoteName)\(remoteMessage.map { " (\($0))" } ?? "")"
        }
        if let expected {
            return "the reply is not \(expected) (\(Self.errnoText(code)))"
        }
        return Self.errnoText(code)
    }

    /// What to do about it.
    public var fix: String {
        if libraryFailure != nil {
            return "install Debian's package libsystemd0"
        }
        if isUnavailable {
            if remoteName != nil {
                return "nothing on \(bus.name) provides \(method.service): start the service that does"
            }
            switch bus {
            case .system:
                return "no system bus runs here (normal in a container): install and start D-Bus (Debian package `dbus`), or point DBUS_SYSTEM_BUS_ADDRESS at one"
            case .session:
                return "no session bus here (outside a desktop session: SSH, cron, a container): log in to a desktop session, or point DBUS_SESSION_BUS_ADDRESS at its bus"
            }
        }
        if timedOut {
            return "\(method.service) did not answer in time: it hangs or the bus is overloaded; check it with `busctl --\(bus.rawValue) status \(method.service)`"
        }
        if remoteName == "org.freedesktop.DBus.Error.AccessDenied" || [EACCES, EPERM].contains(code) {
            return "the bus or \(method.service) refused this process (a D-Bus policy or polkit rule): allow it there, or run as a user who may"
        }
        if remoteName == "org.freedesktop.DBus.Error.UnknownMethod" || remoteName == "org.freedesktop.DBus.Error.UnknownObject"
            || remoteName == "org.freedesktop.DBus.Error.UnknownInterface" || remoteName == "org.freedesktop.DBus.Error.InvalidArgs"
            || expected != nil {
            return "\(method.service) does not offer this method as expected (another version of it?): report it with `busctl --\(bus.rawValue) introspect \(method.service) \(method.path)`"
        }
        if stage == .message {
            return "a message this program builds was refused by sd-bus: please report it"
        }
        return "the connection to \(bus.name) broke: check that D-Bus runs (`busctl --\(bus.rawValue) status`)"
    }

    /// `No such file or directory (ENOENT)`.
    static func errnoText(_ code: Int32) -> String {
        let text = strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return symbols[code].map { "\(text) (\($0))" } ?? text
    }

    private static let symbols: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO", EBADF: "EBADF",
        ENOMEM: "ENOMEM", EACCES: "EACCES", ENOTDIR: "ENOTDIR", EINVAL: "EINVAL", EPROTO: "EPROTO",
        EBADMSG: "EBADMSG", ENOMEDIUM: "ENOMEDIUM", ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET",
        ENOTCONN: "ENOTCONN", ETIMEDOUT: "ETIMEDOUT", EHOSTUNREACH: "EHOSTUNREACH", EADDRNOTAVAIL: "EADDRNOTAVAIL",
        EOPNOTSUPP: "EOPNOTSUPP", EHOSTDOWN: "EHOSTDOWN", EPIPE: "EPIPE",
    ]
}

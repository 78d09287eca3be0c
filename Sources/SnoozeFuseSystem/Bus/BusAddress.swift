import Glibc

extension BusKind {
    /// Why there is no bus to connect to, as connecting would have said it (`ENOENT`, `ENOTDIR`;
    /// `ENOMEDIUM` for a session bus when neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR`
    /// is set, sd-bus's own answer), found without sd-bus: the bus's address is one `unix:path=`
    /// socket and no file is there. Nil when sd-bus must judge: a file is there, or the address is
    /// an abstract socket, a list, escaped beyond reading or another transport.
    ///
    /// Checked before libsystemd is loaded or called: a failed `sd_bus_open_user` alone faulted in
    /// 0.6 MiB of libsystemd's code, and the alarm's desktop notification tried it while the alarm
    /// rang on every machine without a desktop (SSH, a server, a container; issue 23).
    var absence: Int32? {
        let address: String
        switch self {
        case .system:
            address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
        case .session:
            if let variable = getenv("DBUS_SESSION_BUS_ADDRESS") {
                address = String(cString: variable)
            } else if let folder = getenv("XDG_RUNTIME_DIR") {
                return Self.absence(ofSocket: String(cString: folder) + "/bus")
            } else {
                return ENOMEDIUM
            }
        }
        return Self.socketPath(inAddress: address).flatMap(Self.absence(ofSocket:))
    }

    /// The file of a D-Bus address that is exactly one `unix:path=P` (with `guid=` beside it at
    /// most), `P` unescaped from D-Bus's `%XX`; nil for anything else.
    public static func socketPath(inAddress address: String) -> String? {
        let addresses = address.split(separator: ";")
        guard addresses.count == 1, addresses[0].hasPrefix("unix:") else { return nil }
        var path: [UInt8]?
        for pair in addresses[0].dropFirst(5).split(separator: ",", omittingEmptySubsequences: false) {
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            switch pair[..<equals] {
            case "path" where path == nil:
                guard let unescaped = unescape(pair[pair.index(after: equals)...]), !unescaped.isEmpty else { return nil }
                path = unescaped
            case "guid":
                continue
            default:
                return nil
            }
        }
        return path.map { String(decoding: $0, as: UTF8.self) }
    }

    /// D-Bus's address escaping undone (`%2f` is `/`); nil for a `%` without two hex digits.
    private static func unescape(_ value: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var utf8 = value.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexDigit), let low = utf8.next().flatMap(hexDigit) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `ENOENT` or `ENOTDIR` when nothing is at `path`, as `connect` would fail; nil otherwise.
    private static func absence(ofSocket path: String) -> Int32? {
        var status = stat()
        guard stat(path, &status) != 0 else { return nil }
        let code = errno
        return code == ENOENT || code == ENOTDIR ? code : nil
    }
}

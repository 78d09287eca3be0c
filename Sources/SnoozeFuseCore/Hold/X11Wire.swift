/// The few messages of the X11 protocol that reading the idle time takes, as pure functions over
/// bytes: the connection set-up, `QueryExtension` and the MIT-SCREEN-SAVER extension's `QueryInfo`
/// (the request behind libXss's `XScreenSaverQueryInfo`), little-endian. Nothing here reads a
/// socket; the runtime's `X11IdleTime` does, with a time limit on every read.
///
/// snoozefuse speaks them itself rather than loading Xlib: Xlib ends the whole process when its
/// connection breaks (its I/O error handler may not return), and a nap must outlive its X server.
public enum X11Wire {
    /// A display named by `DISPLAY`: `:0`, `:1.0`, `unix:0`. TCP displays (`host:10.0`, as SSH
    /// forwards them) are refused: their idle time is another machine's.
    public struct Display: Sendable, Hashable {
        public var number: Int

        /// The socket an X server listens on for this display.
        public var socketPath: String { "/tmp/.X11-unix/X\(number)" }

        public init?(_ name: String) {
            guard let colon = name.lastIndex(of: ":") else { return nil }
            let host = name[..<colon]
            guard host.isEmpty || host == "unix" else { return nil }
            let rest = name[name.index(after: colon)...]
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6, let number = Int(digits) else { return nil }
            let screen = rest.dropFirst(digits.count)
            guard screen.isEmpty || (screen.first == "." && screen.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }) else { return nil }
            self.number = number
        }
    }

    public static let cookieName = "MIT-MAGIC-COOKIE-1"

    /// The MIT-MAGIC-COOKIE-1 for `display` in an Xauthority file's bytes (big-endian entries of
    /// family, address, display number, name and data), for a wildcard entry or a local one of
    /// `host` (this machine's name: a home folder shared between machines holds each one's
    /// cookies); nil when there is none (the server may need none) or the file is not one.
    public static func cookie(in file: [UInt8], display: Display, host: String) -> [UInt8]? {
        var offset = 0
        func field() -> ArraySlice<UInt8>? {
            guard offset + 2 <= file.count else { return nil }
            let length = Int(file[offset]) << 8 | Int(file[offset + 1])
            offset += 2
            guard offset + length <= file.count else { return nil }
            defer { offset += length }
            return file[offset ..< offset + length]
        }
        let number = Array("\(display.number)".utf8)
        while offset + 2 <= file.count {
            let family = Int(file[offset]) << 8 | Int(file[offset + 1])
            offset += 2
            guard let address = field(), let entryNumber = field(), let name = field(), let data = field() else { return nil }
            // 256: FamilyLocal (its address is the host's name); 65535: FamilyWild.
            guard family == 65535 || (family == 256 && Array(address) == Array(host.utf8)) else { continue }
            if Array(entryNumber) == number || entryNumber.isEmpty, Array(name) == Array(cookieName.utf8) {
                return Array(data)
            }
        }
        return nil
    }

    /// The client's opening bytes: little-endian, protocol 11.0, with the cookie when there is one.
    public static func setupRequest(cookie: [UInt8]?) -> [UInt8] {
        let name: [UInt8] = cookie == nil ? [] : Array(cookieName.utf8)
        let data = cookie ?? []
        var bytes: [UInt8] = [0x6C, 0]
        bytes += le16(11) + le16(0) + le16(name.count) + le16(data.count) + [0, 0]
        bytes += padded(name) + padded(data)
        return bytes
    }

    /// What the server answered to the set-up, once its first 8 bytes are in: how many bytes follow.
    public static func setupLength(header: [UInt8]) -> Int? {
        guard header.count >= 8 else { return nil }
        return Int(le16(header, at: 6)) * 4
    }

    public enum SetupAnswer: Sendable, Hashable {
        /// Accepted: the first screen's root window.
        case accepted(root: UInt32)
        /// Refused, with the server's reason (`No protocol specified`, `Invalid MIT-MAGIC-COOKIE-1 key`).
        case refused(String)
        /// Not an answer this client can use.
        case malformed
    }

    /// Reads the server's answer to the set-up: its 8-byte header and the `setupLength` bytes after.
    public static func setupAnswer(header: [UInt8], body: [UInt8]) -> SetupAnswer {
        guard header.count >= 8 else { return .malformed }
        switch header[0] {
        case 0, 2:
            // Failed (reason length in byte 1) or Authenticate (reason fills the body).
            let length = header[0] == 0 ? min(Int(header[1]), body.count) : body.count
            let reason = String(decoding: body.prefix(length), as: UTF8.self)
            return .refused(reason.trimmingCharacters { $0 == "\n" || $0 == "\0" })
        case 1:
            // release, id base, id mask, motion buffer (16), vendor length, max request (4), screens,
            // formats, then 6 bytes and 4 unused: 32 bytes; then the vendor and 8 bytes per format.
            guard body.count >= 32 else { return .malformed }
            let vendor = Int(le16(body, at: 16))
            let screens = Int(body[20])
            let formats = Int(body[21])
            let root = 32 + (vendor + 3) / 4 * 4 + 8 * formats
            guard screens > 0, root + 4 <= body.count else { return .malformed }
            return .accepted(root: le32(body, at: root))
        default:
            return .malformed
        }
    }

    /// `QueryExtension` for `name` (opcode 98).
    public static func queryExtension(_ name: String) -> [UInt8] {
        let bytes = Array(name.utf8)
        let padded = padded(bytes)
        return [98, 0] + le16(2 + padded.count / 4) + le16(bytes.count) + [0, 0] + padded
    }

    /// MIT-SCREEN-SAVER's `QueryInfo` (minor 1) of `root`, once the extension's opcode is known.
    public static func queryInfo(opcode: UInt8, root: UInt32) -> [UInt8] {
        [opcode, 1] + le16(2) + le32(root)
    }

    /// What one 32-byte unit the server sent is, for a client that sent requests and wants their
    /// replies in order.
    public enum Unit: Sendable, Hashable {
        /// A reply; `extra` more bytes of it follow (4 × its length field).
        case reply(sequence: UInt16, extra: Int)
        /// An error for the request numbered `sequence` (`code`: 1 Request, 2 Value, 17 Implementation …).
        case error(sequence: UInt16, code: UInt8)
        /// An event: skipped.
        case event
    }

    public static func unit(_ bytes: [UInt8]) -> Unit {
        guard bytes.count >= 32 else { return .event }
        switch bytes[0] {
        case 0: return .error(sequence: le16(bytes, at: 2), code: bytes[1])
        case 1: return .reply(sequence: le16(bytes, at: 2), extra: Int(le32(bytes, at: 4)) * 4)
        default: return .event
        }
    }

    /// `QueryExtension`'s reply: the extension's major opcode when the server has it.
    public static func extensionOpcode(reply: [UInt8]) -> UInt8? {
        guard reply.count >= 32, reply[0] == 1, reply[8] != 0 else { return nil }
        return reply[9]
    }

    /// `QueryInfo`'s reply: milliseconds since the last input anywhere on the server.
    public static func idleMilliseconds(reply: [UInt8]) -> UInt32? {
        guard reply.count >= 32, reply[0] == 1 else { return nil }
        return le32(reply, at: 16)
    }

    private static func padded(_ bytes: [UInt8]) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    private static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }

    private static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }

    private static func le16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private static func le32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}

private extension String {
    func trimmingCharacters(where predicate: (Character) -> Bool) -> String {
        var text = Substring(self)
        while let last = text.last, predicate(last) { text = text.dropLast() }
        return String(text)
    }
}

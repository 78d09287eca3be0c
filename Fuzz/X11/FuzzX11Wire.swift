// libFuzzer entry for the X11 messages snoozefuse reads (X11Wire): the first byte picks the
// message, the rest is what a server, an Xauthority file or DISPLAY holds. Whatever the bytes, no
// read goes past their end, a refused set-up's reason comes from the body, and the requests this
// client builds are whole 4-byte units. Anything else (a crash, a trap, a sanitizer report) is a bug.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzX11Wire(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let rest = Array(bytes.dropFirst())
    switch bytes[0] % 5 {
    case 0:
        // A set-up answer: 8 bytes of header, then the body its length names (or what there is).
        let header = Array(rest.prefix(8))
        let body = Array(rest.dropFirst(8))
        if let length = X11Wire.setupLength(header: header) { precondition(length >= 0 && length % 4 == 0) }
        _ = X11Wire.setupAnswer(header: header, body: body)
    case 1:
        // An Xauthority file, for display 0 and for one past the numbers it may name.
        _ = X11Wire.cookie(in: rest, display: X11Wire.Display(":0")!, host: "host")
        _ = X11Wire.cookie(in: rest, display: X11Wire.Display(":65535")!, host: "")
    case 2:
        // A 32-byte unit and the replies read from it.
        switch X11Wire.unit(rest) {
        case .reply(_, let extra): precondition(extra >= 0)
        case .error, .event: break
        }
        _ = X11Wire.extensionOpcode(reply: rest)
        _ = X11Wire.idleMilliseconds(reply: rest)
    case 3:
        // DISPLAY: a local display has a socket path of its own.
        if let display = X11Wire.Display(String(decoding: rest, as: UTF8.self)) {
            precondition(display.number >= 0 && display.socketPath.hasPrefix("/tmp/.X11-unix/X"))
        }
    default:
        // Requests built from any name and cookie are whole units.
        let name = String(decoding: rest.prefix(64), as: UTF8.self)
        precondition(X11Wire.queryExtension(name).count % 4 == 0)
        precondition(X11Wire.setupRequest(cookie: Array(rest.dropFirst(64).prefix(64))).count % 4 == 0)
        precondition(X11Wire.setupRequest(cookie: nil).count == 12)
    }
    return 0
}

import Glibc
import SnoozeFuseCore
import SnoozeFuseSystem

/// The X server's own idle time (MIT-SCREEN-SAVER's `QueryInfo`: milliseconds since the last key
/// or pointer input anywhere on the display), over the display's socket, each read bounded by
/// ``limit``. One connection is kept between reads; a failed read closes it, and the next read
/// connects again.
///
/// Not thread-safe on its own: one thread uses it at a time (a nap probes it while it sets up and
/// hands it to ``DesktopHold``'s thread, which alone uses it from then on).
final class X11IdleTime: IdleTimeReader, @unchecked Sendable {
    let display: X11Wire.Display
    let displayName: String
    private let limit: Duration
    private var connection: (fd: Int32, root: UInt32, opcode: UInt8, sequence: UInt16)?

    /// Reads `DISPLAY` from `environment`; nil without one or for a TCP display.
    init?(environment: [String: String], limit: Duration = .seconds(1)) {
        guard let name = environment["DISPLAY"], let display = X11Wire.Display(name) else { return nil }
        self.display = display
        self.displayName = name
        self.limit = limit
        self.authorityPath = environment["XAUTHORITY"] ?? environment["HOME"].map { "\($0)/.Xauthority" }
    }

    private let authorityPath: String?

    deinit { disconnect() }

    func finish() { disconnect() }

    var name: String { "X11 (MIT-SCREEN-SAVER on \(displayName))" }

    func idleTime() throws(IdleTimeError) -> Duration {
        let deadline = BootInstant.now.advanced(by: limit)
        if connection == nil { try connect(until: deadline) }
        guard var open = connection else { throw failure("not connected") }
        do throws(IdleTimeError) {
            try send(X11Wire.queryInfo(opcode: open.opcode, root: open.root), on: open.fd, until: deadline)
            open.sequence &+= 1
            connection = open
            let reply = try reply(to: open.sequence, on: open.fd, until: deadline)
            guard let milliseconds = X11Wire.idleMilliseconds(reply: reply) else { throw failure("its QueryInfo reply is not one") }
            return .milliseconds(Int64(milliseconds))
        } catch {
            disconnect()
            throw error
        }
    }

    private func connect(until deadline: BootInstant) throws(IdleTimeError) {
        let fd: Int32
        do {
            fd = try UnixSocket.connect(to: display.socketPath, limit: limit)
        } catch {
            throw failure("cannot connect to \(display.socketPath): \(error.description) (is the X server of DISPLAY=\(displayName) running?)")
        }
        do throws(IdleTimeError) {
            var host = [CChar](repeating: 0, count: 256)
            gethostname(&host, host.count - 1)
            let hostName = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let cookie = authorityPath.flatMap { readSmallFile($0) }.flatMap { X11Wire.cookie(in: $0, display: display, host: hostName) }
            try send(X11Wire.setupRequest(cookie: cookie), on: fd, until: deadline)
            let header = try receive(8, from: fd, until: deadline)
            guard let length = X11Wire.setupLength(header: header), length <= 1 << 20 else { throw failure("it did not answer as an X server") }
            let body = try receive(length, from: fd, until: deadline)
            let root: UInt32
            switch X11Wire.setupAnswer(header: header, body: body) {
            case .accepted(let found): root = found
            case .refused(let reason):
                throw failure("the X server refused the connection: \(reason.isEmpty ? "no reason given" : reason) (XAUTHORITY names the cookie file)")
            case .malformed: throw failure("it did not answer as an X server")
            }
            try send(X11Wire.queryExtension("MIT-SCREEN-SAVER"), on: fd, until: deadline)
            let answer = try reply(to: 1, on: fd, until: deadline)
            guard let opcode = X11Wire.extensionOpcode(reply: answer) else {
                throw failure("the X server has no MIT-SCREEN-SAVER extension, which tells the idle time")
            }
            connection = (fd, root, opcode, 1)
        } catch {
            close(fd)
            throw error
        }
    }

    private func disconnect() {
        if let open = connection { close(open.fd) }
        connection = nil
    }

    /// The reply to request `sequence`, skipping events; an X error for it is a failure.
    private func reply(to sequence: UInt16, on fd: Int32, until deadline: BootInstant) throws(IdleTimeError) -> [UInt8] {
        while true {
            let unit = try receive(32, from: fd, until: deadline)
            switch X11Wire.unit(unit) {
            case .event: continue
            case .error(let number, let code):
                guard number == sequence else { continue }
                throw failure("the X server answered request \(number) with error \(code)")
            case .reply(let number, let extra):
                guard extra <= 1 << 20 else { throw failure("a reply of \(extra) bytes is not one") }
                let rest = extra > 0 ? try receive(extra, from: fd, until: deadline) : []
                if number == sequence { return unit + rest }
            }
        }
    }

    private func send(_ bytes: [UInt8], on fd: Int32, until deadline: BootInstant) throws(IdleTimeError) {
        var sent = 0
        while sent < bytes.count {
            guard try waitFor(Int16(POLLOUT), on: fd, until: deadline) else { throw failure("the X server did not take a request within \(limit)") }
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw failure("writing to the X server: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    private func receive(_ count: Int, from fd: Int32, until deadline: BootInstant) throws(IdleTimeError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            guard try waitFor(Int16(POLLIN), on: fd, until: deadline) else { throw failure("the X server did not answer within \(limit)") }
            let read = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, Int32(MSG_DONTWAIT)) }
            if read < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw failure("reading from the X server: \(String(cString: strerror(errno)))")
            }
            if read == 0 { throw failure("the X server closed the connection") }
            got += read
        }
        return bytes
    }

    private func waitFor(_ events: Int16, on fd: Int32, until deadline: BootInstant) throws(IdleTimeError) -> Bool {
        while true {
            let left = BootInstant.now.duration(to: deadline)
            guard left > .zero else { return false }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, left.pollMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw failure("waiting for the X server: \(String(cString: strerror(errno)))")
            }
            if ready > 0 { return true }
        }
    }

    private func failure(_ what: String) -> IdleTimeError {
        IdleTimeError(source: name, problem: what)
    }
}

/// At most 64 KiB of a small file (an Xauthority file), or nil; bounded like every open of a user
/// path: a FIFO or device is not read.
func readSmallFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size <= 65_536 else { return nil }
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    var got = 0
    while got < bytes.count {
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, $0.count - got) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        got += count
    }
    return Array(bytes[0 ..< got])
}

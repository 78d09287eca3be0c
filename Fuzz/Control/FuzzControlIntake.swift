// libFuzzer entry for the control socket's intake (ControlIntake): the bytes are a script of
// connections accepting, sending pieces, ending and running out of time. Whatever the order, a
// request never holds a newline or passes the line limit (in bytes received: a byte that is not
// UTF-8 becomes one replacement character), no more than `capacity` connections wait,
// and no connection is reported twice. Anything else (a crash, a trap, a sanitizer report) is a bug.

/// A clock of its own, advanced by the script.
struct ScriptInstant: InstantProtocol, Hashable, Sendable {
    var offset: Duration
    func advanced(by duration: Duration) -> ScriptInstant { ScriptInstant(offset: offset + duration) }
    func duration(to other: ScriptInstant) -> Duration { other.offset - offset }
    static func < (a: ScriptInstant, b: ScriptInstant) -> Bool { a.offset < b.offset }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlIntake(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var intake = ControlIntake<ScriptInstant>(timeLimit: .milliseconds(100), lineLimit: 32, capacity: 4)
    var now = ScriptInstant(offset: .zero)
    var gone = Set<Int32>()
    var next: Int32 = 0
    var index = 0
    func finished(_ id: Int32) {
        precondition(!gone.contains(id), "connection \(id) reported twice")
        gone.insert(id)
    }
    while index < bytes.count {
        let op = bytes[index]
        index += 1
        let open = intake.open
        switch op % 5 {
        case 0:
            next += 1
            for dropped in intake.accepted(next, at: now) { finished(dropped) }
            precondition(intake.open.count <= intake.capacity)
        case 1, 2:
            guard !open.isEmpty, index < bytes.count else { continue }
            let id = open[Int(op / 5) % open.count]
            let length = min(Int(bytes[index]) % 40, bytes.count - index - 1)
            index += 1
            let piece = Array(bytes[index ..< index + length])
            index += length
            switch intake.received(piece, on: id) {
            case .request(let line):
                precondition(!line.utf8.contains(UInt8(ascii: "\n")) && line.unicodeScalars.count <= intake.lineLimit)
                finished(id)
            case .tooLong, .empty: finished(id)
            case .waiting: break
            }
        case 3:
            guard !open.isEmpty else { continue }
            let id = open[Int(op / 5) % open.count]
            if case .request(let line) = intake.ended(id) {
                precondition(!line.utf8.contains(UInt8(ascii: "\n")) && line.unicodeScalars.count <= intake.lineLimit)
            }
            finished(id)
        default:
            now = now.advanced(by: .milliseconds(Int64(op / 5) * 10))
            for late in intake.expire(at: now) { finished(late) }
            if let deadline = intake.nextDeadline { precondition(deadline > now) }
        }
    }
    return 0
}

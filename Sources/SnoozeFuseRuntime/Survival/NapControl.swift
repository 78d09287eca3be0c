import Foundation
import Glibc
import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem

/// What another terminal asks of the running nap (or its guardian), one JSON object per line.
public struct ControlRequest: Codable, Sendable, Hashable {
    public enum Command: String, Codable, Sendable, Hashable {
        /// Dismiss a ringing alarm; cancel a nap before it rings.
        case stop
        /// Snooze a ringing alarm (`seconds`, or the nap's snooze length).
        case snooze
        /// Move the coming alarm by `seconds` (negative: sooner).
        case add
        /// Only the state.
        case status
    }

    public var command: Command
    public var seconds: Double?
    /// For `stop` of a ringing or snoozed alarm: the answer to its challenge (the word; `held`
    /// once the asking terminal measured a long enough hold).
    public var answer: String?
    /// For `stop` before the alarm: the person confirmed that the nap is to be cancelled.
    public var confirmed: Bool?
    /// The reply carries the live state as saved after the change (`--json`).
    public var withState: Bool?

    public init(_ command: Command, seconds: Double? = nil, answer: String? = nil, confirmed: Bool? = nil, withState: Bool? = nil) {
        self.command = command
        self.seconds = seconds
        self.answer = answer
        self.confirmed = confirmed
        self.withState = withState
    }
}

extension ControlRequest {
    /// The request as one line of JSON, written here rather than by JSONEncoder, whose first use
    /// cost `add`, `stop` and `snooze` 0.7 M instructions (its keyed container's generic metadata,
    /// instantiated inside Foundation, has its requirements looked up in every conformance record;
    /// issue 23). The nap reads it with Core's JSONValueDecoder; a test checks that it and
    /// JSONDecoder read every request back as it was. nil for a length that is not a number
    /// (JSONEncoder refused those too).
    public var jsonLine: String? {
        var fields: [String] = []
        if let answer { fields.append(#""answer":"# + JSONValue.quoted(answer)) }
        fields.append(#""command":"# + JSONValue.quoted(command.rawValue))
        if let confirmed { fields.append(#""confirmed":"# + (confirmed ? "true" : "false")) }
        if let seconds {
            guard seconds.isFinite else { return nil }
            fields.append(#""seconds":"# + "\(seconds)")
        }
        if let withState { fields.append(#""withState":"# + (withState ? "true" : "false")) }
        // Joined by hand: `joined(separator:)` runs unspecialised here and asks the runtime for
        // its element type by name, whose first lookup scans every conformance record (issue 23).
        var line = "{"
        for (index, field) in fields.enumerated() {
            if index > 0 { line += "," }
            line += field
        }
        return line + "}"
    }
}

/// The answer: whether it was done, what was done, and the state after it.
public struct ControlReply: Codable, Sendable, Hashable {
    /// What the asking terminal must do before `stop` is done.
    public enum Needs: String, Codable, Sendable, Hashable {
        /// Type `word` (``ControlRequest/answer``).
        case word
        /// Hold a key for 3 s (answer `held`).
        case hold
        /// Confirm that the nap is cancelled (``ControlRequest/confirmed``).
        case confirmation
    }

    public var ok: Bool
    public var message: String
    public var state: LiveSessionState?
    /// `stop` was not done: this is needed first.
    public var needs: Needs?
    /// With `needs` `word`: the word.
    public var word: String?

    public init(ok: Bool, message: String, state: LiveSessionState?, needs: Needs? = nil, word: String? = nil) {
        self.ok = ok
        self.message = message
        self.state = state
        self.needs = needs
        self.word = word
    }
}

extension ControlReply {
    /// The reply as one line of JSON, keys sorted (as JSONEncoder's `.sortedKeys` writes them).
    /// Written here rather than by JSONEncoder, which looked up its generic types by name on every
    /// answer (issue 23); only a `status` answer's live state is still encoded by it. A test reads
    /// every kind of reply back with JSONDecoder.
    public var jsonLine: String {
        var line = #"{"message":"# + JSONValue.quoted(message)
        if let needs { line += #","needs":"# + JSONValue.quoted(needs.rawValue) }
        line += #","ok":"# + (ok ? "true" : "false")
        // A state that cannot be encoded (never seen: its values are plain and finite) is left out.
        if let state, case let encoded = state.encoded(), !encoded.isEmpty { line += #","state":"# + String(decoding: encoded, as: UTF8.self) }
        if let word { line += #","word":"# + JSONValue.quoted(word) }
        return line + "}"
    }
}

/// Serves a running nap to the other terminals of its user, on a Unix socket in the runtime folder
/// (folder 0700, socket 0600). A connection from another uid is refused (`SO_PEERCRED`). No client
/// can hold the nap or another client up: every connection is read at once, side by side
/// (``ControlIntake``), and one that has not sent its request line within a second is dropped, as
/// is the oldest waiting one when 32 wait.
///
/// Connections are served, and requests answered, on a thread of their own. An answer reads the
/// session's phase and hands it a command, neither waiting (each behind the session's lock, not
/// both under one hold), so it needs nothing from the nap's event loop: a loop busy saving the
/// state after the last `add` does not hold up the next one, and an answer costs no hop to the
/// loop and back (two thread wake-ups; issue 23). The phase it reads can be a moment old (the
/// alarm starting): what must not act on an old phase, a cancel, is checked again by the session.
final class ControlServer: Sendable {
    let path: String
    private let listener: Int32
    private let running = Locked(true)

    /// Listens at `socket`; each request is answered by `answer`, on the server's thread.
    init(socket: URL, answer: @escaping @Sendable (ControlRequest) -> ControlReply) throws(NapSetupError) {
        path = socket.path
        do {
            try PrivateFolder.ensure(socket.deletingLastPathComponent())
            listener = try UnixSocket.listen(at: path)
        } catch {
            throw NapSetupError(.badConfiguration, ["cannot serve other terminals at \(path): \(error)"])
        }
        UnixSocket.setNonBlocking(listener)
        let listener = listener, owner = getuid()
        SystemThread.start(named: "snoozefuse-ctl") { [self] in
            var intake = ControlIntake<BootInstant>()
            var buffer = [UInt8](repeating: 0, count: 4_096)
            // Connections of another user: answered with a refusal once their request is read
            // (closing before would reset the connection and lose the answer).
            var strangers = Set<Int32>()
            let refusal = ControlReply(ok: false, message: "refused: this nap belongs to another user", state: nil)
            func finish(_ connection: Int32, with reply: ControlReply?) {
                if let reply { Self.reply(connection, reply) }
                Glibc.close(connection)
            }
            // Reads what arrived on `connection` and answers it once its request is whole.
            func take(_ connection: Int32) {
                let count = read(connection, &buffer, buffer.count)
                let outcome: ControlIntake<BootInstant>.Outcome
                if count > 0 {
                    outcome = intake.received(buffer[0 ..< count], on: connection)
                } else if count == 0 {
                    outcome = intake.ended(connection)
                } else if errno == EINTR || errno == EAGAIN {
                    return
                } else {
                    intake.forget(connection)
                    strangers.remove(connection)
                    finish(connection, with: nil)
                    return
                }
                if outcome != .waiting, strangers.remove(connection) != nil {
                    finish(connection, with: refusal)
                    return
                }
                switch outcome {
                case .waiting:
                    return
                case .empty:
                    finish(connection, with: nil)
                case .tooLong:
                    finish(connection, with: ControlReply(ok: false, message: "not a request: its line is longer than \(intake.lineLimit) bytes", state: nil))
                case .request(let line):
                    guard let request = try? JSONValueDecoder().decode(ControlRequest.self, from: line) else {
                        finish(connection, with: ControlReply(ok: false, message: "not a request: expected one JSON object such as {\"command\":\"stop\"}", state: nil))
                        return
                    }
                    finish(connection, with: answer(request))
                }
            }
            while running.withLock({ $0 }) {
                let open = intake.open
                var watched = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                    + open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                let wait = intake.nextDeadline.map { deadline -> Int32 in
                    let left = BootInstant.now.duration(to: deadline)
                    return left <= .zero ? 0 : min(left.pollMilliseconds, 60_000)
                } ?? -1
                if poll(&watched, nfds_t(watched.count), wait) < 0, errno != EINTR { break }
                guard running.withLock({ $0 }) else { break }
                // What arrived on each connection, before anyone's time is counted out.
                for entry in watched.dropFirst() where entry.revents != 0 { take(entry.fd) }
                for late in intake.expire(at: .now) {
                    if strangers.remove(late) != nil {
                        finish(late, with: refusal)
                        continue
                    }
                    finish(late, with: ControlReply(ok: false, message: "no request within \(intake.timeLimit.compactDescription): the connection is closed", state: nil))
                }
                guard watched[0].revents & Int16(POLLIN) != 0 else {
                    if watched[0].revents != 0 { break }   // the listener was closed
                    continue
                }
                while let connection = UnixSocket.acceptWaiting(listener) {
                    if UnixSocket.peerUID(connection) != owner { strangers.insert(connection) }
                    for dropped in intake.accepted(connection, at: .now) {
                        if strangers.remove(dropped) != nil {
                            finish(dropped, with: refusal)
                            continue
                        }
                        finish(dropped, with: ControlReply(ok: false, message: "dropped: \(intake.capacity) other connections wait for their request", state: nil))
                    }
                    // A client writes its request as soon as it connects: it is usually here
                    // already, and is answered without another wait in poll (issue 23).
                    take(connection)
                }
            }
            for connection in intake.open { Glibc.close(connection) }
        }
    }

    /// Stops serving and removes the socket.
    func close() {
        running.withLock { $0 = false }
        unlink(path)
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    /// Writes `reply` on the non-blocking `connection` (waiting at most a second for a client that
    /// does not read).
    private static func reply(_ connection: Int32, _ reply: ControlReply) {
        UnixSocket.writeLine(connection, reply.jsonLine, waitingAtMost: .seconds(1))
    }
}

/// How a nap, or the guardian holding it, answers another terminal: the same answer for the same
/// phase, whoever holds the nap.
public enum ControlAnswer {
    /// How long `snooze` and `add` wait for the nap to have made and saved their change.
    static let applyLimit = Duration.seconds(2)

    /// Answers `request` from `session` (its phase and key prompt); `state` is the live state that a
    /// `status` request gets along, and any request that asks for it (`--json`). The other
    /// answers carry none: encoding it was a quarter of the nap's work per `add` (2.35 -> 1.75 ms
    /// of CPU; issue 23). `snooze` and `add` answer once the nap has made the change and saved
    /// it, so a `status` right after shows it; one that would change nothing says so (not ok).
    /// Blocking: on the control thread, never the nap's loop.
    public static func reply<C: Clock>(to request: ControlRequest, session: NapSession<C>, state: () -> LiveSessionState?) -> ControlReply
        where C.Duration == Duration {
        let phase = session.phase
        let message: String
        switch request.command {
        case .status:
            return ControlReply(ok: true, message: phase.rawValue, state: state())
        case .stop:
            if phase == .ringing || phase == .snoozed {
                // The same challenge as on the nap's terminal (--dismiss).
                guard session.dismiss(answer: request.answer) else {
                    let prompt = session.keyPrompt
                    let wrong = request.answer == nil ? "" : "wrong answer: "
                    switch prompt.dismissal {
                    case .word:
                        return ControlReply(ok: false, message: "\(wrong)the alarm stops when its word is typed", state: nil,
                                            needs: .word, word: prompt.word)
                    case .hold, .key:
                        return ControlReply(ok: false, message: "\(wrong)the alarm stops when a key is held for 3 s", state: nil,
                                            needs: .hold)
                    }
                }
                message = "alarm stopped"
            } else {
                guard request.confirmed == true else {
                    return ControlReply(ok: false, message: "cancelling the nap needs a confirmation: its alarm will not ring",
                                        state: nil, needs: .confirmation)
                }
                // Checked against the phase again by the session itself: an alarm that started
                // since the phase above was read is not silenced by it.
                session.send(.cancelBeforeAlarm)
                message = "nap cancelled"
            }
        case .snooze:
            guard phase == .ringing else {
                return ControlReply(ok: false, message: "nothing to snooze: the nap is \(phase.rawValue)", state: nil)
            }
            var length: Duration?
            if let seconds = request.seconds {
                guard let given = Self.length(seconds) else { return Self.notALength(seconds) }
                length = given
            }
            let before = session.saved.changes
            session.send(.snooze(length))
            // The save that shows it: one still ringing (saved just before the snooze was made) is
            // not it.
            guard let after = session.waitForSave(after: before, atMost: applyLimit, until: { $0.phase != .ringing }),
                  after.phase == .snoozed else {
                return ControlReply(ok: false, message: "the alarm was not snoozed (the nap is \(session.phase.rawValue))", state: nil)
            }
            // Says when it rings again: a sleepy person asks exactly that.
            message = after.snoozeDeadline.map { "snoozed: it rings again in \(Self.spoken(session.now.duration(to: $0)))" } ?? "snoozed"
        case .add:
            guard let seconds = request.seconds else {
                return ControlReply(ok: false, message: "add needs a duration", state: nil)
            }
            guard phase == .napping || phase == .snoozed else {
                // A time named (`--until`) is kept as it is until the nap begins.
                let why = phase.isBeforeAlarm && session.saved.session?.alarmAt != nil
                    ? "the time named with --until is moved only once the nap has begun (it is \(phase.rawValue))"
                    : "no alarm time to move while \(phase.rawValue)"
                return ControlReply(ok: false, message: why, state: nil)
            }
            guard let change = Self.length(seconds) else { return Self.notALength(seconds) }
            let (saved, before) = session.saved
            let now = session.now
            let due = saved?.alarmToKeep(now: now)?.due
            // What the nap would make of it, on a copy of the session as last saved (when that is
            // the phase this answer sees): a move that does not go the way asked (the alarm already
            // as near as it may be, or as far) is said, and not sent.
            if var preview = saved, preview.phase == phase, let due {
                _ = preview.handle(.adjust(change), at: now)
                let moved = preview.alarmToKeep(now: now).map { due.duration(to: $0.due) } ?? .zero
                if moved == .zero || (moved < .zero) != (change < .zero) {
                    return ControlReply(ok: false, message: "the alarm did not move: it is never moved within 10 s of now, nor past the longest a nap may wait", state: nil)
                }
            }
            session.send(.adjust(change))
            // The save that shows the move, or that the alarm came first (it rang, or the nap ended).
            guard let after = session.waitForSave(after: before, atMost: applyLimit, until: { saved in
                !(saved.phase == .napping || saved.phase == .snoozed) || saved.alarmToKeep(now: now)?.due != due
            }) else {
                return ControlReply(ok: false, message: "the nap did not move its alarm within \(applyLimit.components.seconds) s", state: nil)
            }
            guard after.phase == .napping || after.phase == .snoozed else {
                return ControlReply(ok: false, message: "the alarm was not moved: the nap is \(after.phase.rawValue)", state: nil)
            }
            // By how much (a move is kept 10 s from now at least) and when it rings now.
            if let due, let moved = after.alarmToKeep(now: now)?.due {
                let by = due.duration(to: moved)
                message = "alarm moved by \(by.signedDescription): it rings in \(Self.spoken(session.now.duration(to: moved)))"
            } else {
                message = "alarm moved"
            }
        }
        // The state after the change; none for stop, whose change (the nap ends) is made after the answer.
        return ControlReply(ok: true, message: message, state: request.withState == true && request.command != .stop ? state() : nil)
    }

    /// `duration` in whole seconds, for people (`1m05s`, `10s`).
    static func spoken(_ duration: Duration) -> String {
        Duration.seconds(max(duration.components.seconds, 0)).compactDescription
    }

    /// `seconds` as a length, to the millisecond; nil beyond a year either way (or not a number),
    /// which a client of the socket can send but no command does.
    static func length(_ seconds: Double) -> Duration? {
        guard seconds.isFinite, abs(seconds) <= 366 * 86_400 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    static func notALength(_ seconds: Double) -> ControlReply {
        ControlReply(ok: false, message: "not a length: \(seconds) s (at most a year either way)", state: nil)
    }

}

/// Talks to the running nap (or its guardian) from another terminal.
public enum NapControl {
    /// Sends `request` and returns the reply, with its state only when the request asked. Throws when no nap listens or it
    /// does not answer within three seconds. A nap that a process holds but that nobody listens
    /// for yet is waited for (``ListenerWait``): up to 5 s for a guardian taking it over, 1 s for
    /// the nap's own process.
    public static func send(_ request: ControlRequest,
                            environment given: [String: String]? = nil) throws(NapControlError) -> ControlReply {
        let environment = given ?? NapStatus.currentEnvironment()
        let paths: StorePaths
        do { paths = try StorePaths(environment: environment) } catch { throw .unusable(error.description) }
        let socket = paths.controlSocketPath(environment: environment)
        let wait = ListenerWait(from: BootInstant.now)
        var connection: Int32 = -1
        while connection < 0 {
            do {
                connection = try UnixSocket.connect(to: socket, limit: .seconds(3))
            } catch {
                guard error.isNobodyListening else { throw .unusable(error.description) }
                let status = NapStatus.read(environment: environment)
                // A nap whose process is gone but whose lock is held is being taken over: its
                // guardian holds the lock before it saves the state as its own.
                let takingOver = status.state?.holder == .guardian || status.state.map { !NapStatus.isAlive($0.pid) } == true
                let holder: ListenerWait<BootInstant>.Holder = switch status.status {
                case .guarded: .guardian
                case .running, .ringing, .snoozed: takingOver ? .guardian : .process
                case .none, .interrupted, .damaged, .unreadable: .nobody
                }
                switch wait.nobodyListened(at: BootInstant.now, holder: holder) {
                case .noNap:
                    throw .noNap
                case .giveUp:
                    // During a takeover the state still names the dead nap's process: the guardian's is its own.
                    let pid = ((holder == .guardian ? status.state?.guardianPid : nil) ?? status.pid).map(String.init) ?? "unknown"
                    throw .notListening(holder: holder == .guardian ? "its guardian (pid \(pid))" : "its process (pid \(pid))",
                                        socket: socket, waited: wait.start.duration(to: wait.deadline(for: holder)))
                case .retry(let next):
                    _ = SystemThread.sleep(until: next) { false }
                }
            }
        }
        defer { close(connection) }
        guard let requestLine = request.jsonLine,
              UnixSocket.writeLine(connection, requestLine),
              let line = UnixSocket.readLine(connection),
              let answer = try? JSONValueDecoder().decode(Answer.self, from: line) else {
            throw .noAnswer(socket)
        }
        // The state only when asked for (`--json`), read by hand from its member.
        var state: LiveSessionState?
        if request.withState == true, let value = try? JSONValue(parsing: line), case .object(let members) = value,
           let member = members.first(where: { $0.key == "state" }), let fields = try? JSONFields(member.value, path: "state") {
            state = try? LiveSessionState(fields)
        }
        return ControlReply(ok: answer.ok, message: answer.message, state: state, needs: answer.needs, word: answer.word)
    }

    /// A reply without its state, which no command shows: decoding the whole live state was most of
    /// what `add`, `stop` and `snooze` did after the nap answered (Codable's first use of each of
    /// its types; issue 23). `status` reads the state from its file.
    private struct Answer: Decodable {
        var ok: Bool
        var message: String
        var needs: ControlReply.Needs?
        var word: String?
    }
}

/// Another terminal could not reach a nap.
public enum NapControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No nap (and no guardian) listens.
    case noNap
    /// One listens but did not answer in time.
    case noAnswer(String)
    /// A process holds the nap (`holder`: which, with its pid) but nobody listened at `socket`
    /// for `waited`.
    case notListening(holder: String, socket: String, waited: Duration)
    /// The folders or socket cannot be used.
    case unusable(String)

    public var description: String {
        switch self {
        case .noNap: "no nap is running (start one with `snoozefuse nap`)"
        case .noAnswer(let path): "the nap at \(path) did not answer within 3 s"
        case .notListening(let holder, let socket, let waited):
            "the nap is held by \(holder), but nothing listened at \(socket) for \(waited.compactDescription): "
                + "a nap whose start said it cannot serve other terminals never listens, and one started with another "
                + "XDG_RUNTIME_DIR listens elsewhere; a guardian still taking the nap over may answer in a moment (`snoozefuse status`)"
        case .unusable(let reason): reason
        }
    }
}

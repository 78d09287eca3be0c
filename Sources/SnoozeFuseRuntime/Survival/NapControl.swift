public import Foundation
import Glibc
import SnoozeFuseCore
import SnoozeFuseStore
import SnoozeFuseSystem
import Synchronization

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

    public init(_ command: Command, seconds: Double? = nil, answer: String? = nil, confirmed: Bool? = nil) {
        self.command = command
        self.seconds = seconds
        self.answer = answer
        self.confirmed = confirmed
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

/// Serves a running nap to the other terminals of its user, on a Unix socket in the runtime folder
/// (folder 0700, socket 0600). A connection from another uid is refused (`SO_PEERCRED`), and each
/// request has two seconds to arrive, so no client can hold the nap up. Connections are taken on a
/// thread of their own; the request is answered on the nap's event loop.
final class ControlServer: Sendable {
    let path: String
    private let listener: Int32
    private let running = Mutex(true)

    /// Listens at `socket`; each request is answered by `answer` on `loop`.
    init(socket: URL, loop: EventLoop, answer: @escaping @Sendable (ControlRequest) async -> ControlReply) throws(NapSetupError) {
        path = socket.path
        do {
            try PrivateFolder.ensure(socket.deletingLastPathComponent())
            listener = try UnixSocket.listen(at: path)
        } catch {
            throw NapSetupError(.badConfiguration, ["cannot serve other terminals at \(path): \(error)"])
        }
        let listener = listener, owner = getuid()
        SystemThread.start(named: "snoozefuse-ctl") { [self] in
            while let connection = UnixSocket.accept(listener) {
                defer { Glibc.close(connection) }
                guard running.withLock({ $0 }) else { return }
                UnixSocket.setTimeLimit(connection, .seconds(2))
                let line = UnixSocket.readLine(connection)
                guard UnixSocket.peerUID(connection) == owner else {
                    Self.reply(connection, ControlReply(ok: false, message: "refused: this nap belongs to another user", state: nil))
                    continue
                }
                guard let line,
                      let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) else {
                    Self.reply(connection, ControlReply(ok: false, message: "not a request: expected one JSON object such as {\"command\":\"stop\"}", state: nil))
                    continue
                }
                let reply = (try? loop.runBlocking { await answer(request) })
                    ?? ControlReply(ok: false, message: "the nap did not answer", state: nil)
                Self.reply(connection, reply)
            }
        }
    }

    /// Stops serving and removes the socket.
    func close() {
        running.withLock { $0 = false }
        unlink(path)
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private static func reply(_ connection: Int32, _ reply: ControlReply) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(reply) else { return }
        UnixSocket.writeLine(connection, String(decoding: data, as: UTF8.self))
    }
}

/// Talks to the running nap (or its guardian) from another terminal.
public enum NapControl {
    /// Sends `request` and returns the reply. Throws when no nap listens or it does not answer
    /// within three seconds.
    public static func send(_ request: ControlRequest,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(NapControlError) -> ControlReply {
        let paths: StorePaths
        do { paths = try StorePaths(environment: environment) } catch { throw .unusable(error.description) }
        let socket = paths.controlSocket(environment: environment).path
        let connection: Int32
        do {
            connection = try UnixSocket.connect(to: socket, limit: .seconds(3))
        } catch {
            throw error.isNobodyListening ? .noNap : .unusable(error.description)
        }
        defer { close(connection) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(request),
              UnixSocket.writeLine(connection, String(decoding: data, as: UTF8.self)),
              let line = UnixSocket.readLine(connection),
              let reply = try? JSONDecoder().decode(ControlReply.self, from: Data(line.utf8)) else {
            throw .noAnswer(socket)
        }
        return reply
    }
}

/// Another terminal could not reach a nap.
public enum NapControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No nap (and no guardian) listens.
    case noNap
    /// One listens but did not answer in time.
    case noAnswer(String)
    /// The folders or socket cannot be used.
    case unusable(String)

    public var description: String {
        switch self {
        case .noNap: "no nap is running (start one with `snoozefuse nap`)"
        case .noAnswer(let path): "the nap at \(path) did not answer within 3 s"
        case .unusable(let reason): reason
        }
    }
}

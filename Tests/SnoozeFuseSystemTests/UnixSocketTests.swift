import Foundation
import Glibc
import SnoozeFuseSystem
import Testing

/// The control socket's calls on real sockets in a temporary folder: what an accepted connection
/// is made, and how a reply is written on a non-blocking one.
@Suite struct UnixSocketTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sf-sock-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func listening() throws -> (listener: Int32, path: String) {
        let path = folder.appendingPathComponent("control.sock").path
        let listener = try UnixSocket.listen(at: path)
        UnixSocket.setNonBlocking(listener)
        return (listener, path)
    }

    /// A client connected to a listener, and the listener's end of it (the listener closed: the
    /// connection outlives it).
    func connected() throws -> (client: Int32, accepted: Int32) {
        let (listener, path) = try listening()
        defer { close(listener) }
        let client = try UnixSocket.connect(to: path, limit: .seconds(10))
        guard let accepted = UnixSocket.acceptWaiting(listener) else {
            close(client)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return (client, accepted)
    }

    @Test func anAcceptedConnectionIsNonBlockingAndCloseOnExecAndNoneWaitsAfterIt() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (listener, path) = try listening()
        defer { close(listener) }
        #expect(UnixSocket.acceptWaiting(listener) == nil, "nobody has connected yet")
        let client = try UnixSocket.connect(to: path, limit: .seconds(3))
        defer { close(client) }
        let accepted = try #require(UnixSocket.acceptWaiting(listener))
        defer { close(accepted) }
        try #require(fcntl(accepted, F_GETFL) & O_NONBLOCK != 0, "a read with nothing to read returns at once")
        #expect(fcntl(accepted, F_GETFD) & FD_CLOEXEC != 0, "nothing the nap starts inherits a client's connection")
        var byte: UInt8 = 0
        #expect(read(accepted, &byte, 1) == -1 && errno == EAGAIN)
        #expect(UnixSocket.acceptWaiting(listener) == nil, "one connection was made, one accepted")
        #expect(UnixSocket.peerUID(accepted) == getuid())
    }

    @Test func aReplyLongerThanTheSocketHoldsArrivesWholeToAClientThatReads() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (client, accepted) = try connected()
        defer { close(client); close(accepted) }
        // Several times what the socket buffers: the write must wait for the reader, more than once.
        let line = String(repeating: "0123456789abcdef", count: 256 * 1024)
        let received = Received()
        Thread {
            received.line = UnixSocket.readLine(client, limit: 8 << 20)
            received.done.signal()
        }.start()
        #expect(UnixSocket.writeLine(accepted, line, waitingAtMost: .seconds(30)))
        received.done.wait()
        #expect(received.line == line)
    }

    @Test func aReplyToAClientThatNeverReadsGivesUpAtItsLimit() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (client, accepted) = try connected()
        defer { close(client); close(accepted) }
        let line = String(repeating: "x", count: 16 << 20)
        #expect(!UnixSocket.writeLine(accepted, line, waitingAtMost: .milliseconds(200)),
                "16 MiB cannot fit a socket nobody reads: the write gives up rather than waiting for ever")
        var chunk = [UInt8](repeating: 0, count: 65_536)
        #expect(read(client, &chunk, chunk.count) > 0, "what was written before giving up is there to read")
    }
}

/// What the reading thread read, handed over by its semaphore.
private final class Received: @unchecked Sendable {
    var line: String?
    let done = DispatchSemaphore(value: 0)
}

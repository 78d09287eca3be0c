import Foundation
import Glibc
import Testing
import SnoozeFuseCore
import SnoozeFuseSystem
import SnoozeFuseTestSupport
@testable import SnoozeFuseRuntime

@Suite("The desktop's idle time: the X server's own, and the driver that holds a nap with it")
struct DesktopIdleTests {
    @Test func theXServersIdleTimeGrowsWithoutInputAndStartsOverAtAKeyOrAPointerMove() async throws {
        let x = try PrivateXServer()
        defer { x.stop() }
        let reader = try #require(X11IdleTime(environment: x.clientEnvironment()))
        try x.press("a")
        let first = try reader.idleTime()
        try await Task.sleep(for: .milliseconds(600))
        let later = try reader.idleTime()
        #expect(later >= first + .milliseconds(500), "idle \(first) then \(later)")
        try x.press("space")
        #expect(try reader.idleTime() < .milliseconds(400))
        try await Task.sleep(for: .milliseconds(600))
        try x.movePointer(toX: 100, y: 100)
        #expect(try reader.idleTime() < .milliseconds(400), "a pointer move is input too")
    }

    @Test func aClientWithoutTheCookieIsRefusedWithTheServersReason() throws {
        let x = try PrivateXServer()
        defer { x.stop() }
        var environment = x.clientEnvironment()
        environment["XAUTHORITY"] = x.folder.path("no-such-file")
        let reader = try #require(X11IdleTime(environment: environment))
        #expect {
            _ = try reader.idleTime()
        } throws: { error in
            "\(error)".contains("the X server refused the connection") && "\(error)".contains("XAUTHORITY")
        }
    }

    @Test func aDisplayWithNoServerFailsAtOnceNamingTheSocket() throws {
        let reader = try #require(X11IdleTime(environment: ["DISPLAY": ":4093"]))
        #expect {
            _ = try reader.idleTime()
        } throws: { error in
            "\(error)".contains("/tmp/.X11-unix/X4093") && "\(error)".contains("DISPLAY=:4093")
        }
    }

    @Test(arguments: [("localhost:10.0", false), (":0", true), (":12.1", true), ("unix:3", true), (":", false), (":x", false), ("", false)])
    func displayNames(_ name: String, _ local: Bool) {
        #expect((X11Wire.Display(name) != nil) == local, "\(name)")
    }

    @Test func theCookieIsFoundForItsDisplayAmongOtherEntries() {
        func field(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
        func entry(_ family: [UInt8], _ number: String, _ name: String, _ data: [UInt8]) -> [UInt8] {
            family + field(Array("host".utf8)) + field(Array(number.utf8)) + field(Array(name.utf8)) + field(data)
        }
        let file = entry([0, 0], "7", "MIT-MAGIC-COOKIE-1", [9, 9]) // family Internet: not ours
            + entry([1, 0], "3", "MIT-MAGIC-COOKIE-1", [1, 2, 3])
            + entry([1, 0], "7", "XDM-AUTHORIZATION-1", [4])
            + entry([1, 0], "7", "MIT-MAGIC-COOKIE-1", [5, 6, 7, 8])
        let seven = X11Wire.Display(":7")!
        #expect(X11Wire.cookie(in: file, display: seven, host: "host") == [5, 6, 7, 8])
        #expect(X11Wire.cookie(in: file, display: seven, host: "other") == nil, "another machine's cookie (a shared home folder)")
        #expect(X11Wire.cookie(in: Array(file.dropLast(2)), display: seven, host: "host") == nil, "a cut file")
        #expect(X11Wire.cookie(in: [], display: seven, host: "host") == nil)
    }

    @Test func setupAnswersAreReadOrRefusedWithoutReadingPastTheirEnd() {
        // Refused: "No protocol specified\n" (22 bytes), padded to 24.
        let reason = Array("No protocol specified\n".utf8) + [0, 0]
        #expect(X11Wire.setupAnswer(header: [0, 22, 11, 0, 0, 0, 6, 0], body: reason) == .refused("No protocol specified"))
        // Accepted with a 3-byte vendor (padded to 4), one pixmap format, root window 0x1234.
        var body = [UInt8](repeating: 0, count: 32)
        body[16] = 3 // vendor length
        body[20] = 1 // screens
        body[21] = 1 // formats
        body += [UInt8](repeating: 0x41, count: 4) + [UInt8](repeating: 0, count: 8) + [0x34, 0x12, 0, 0] + [UInt8](repeating: 0, count: 36)
        #expect(X11Wire.setupAnswer(header: [1, 0, 11, 0, 0, 0, 0, 0], body: body) == .accepted(root: 0x1234))
        #expect(X11Wire.setupAnswer(header: [1, 0, 11, 0, 0, 0, 0, 0], body: Array(body.prefix(40))) == .malformed)
        #expect(X11Wire.setupAnswer(header: [7, 0, 0, 0, 0, 0, 0, 0], body: body) == .malformed)
        #expect(X11Wire.setupAnswer(header: [1], body: []) == .malformed)
    }

    /// A source whose reads keep failing for `giveUpAfter` while the nap is held ends the hold
    /// (the release starts: when in doubt, ring) and says why: a hold by nothing from there (the
    /// history's time to fall asleep then ends at the release, not --idle-after before it).
    @Test func readsThatKeepFailingWhileHeldStartTheRelease() async throws {
        struct Failing: IdleTimeReader {
            var name: String { "a broken desktop" }
            func idleTime() throws(IdleTimeError) -> Duration { throw IdleTimeError(source: name, problem: "it went away") }
        }
        let sent = Locked<[NapCommand]>([])
        let notes = Locked<[SessionNote]>([])
        let hold = DesktopHold(reader: Failing(), idleAfter: .seconds(1), giveUpAfter: .seconds(1))
        hold.start(phase: { .holding }, send: { command in sent.withLock { $0.append(command) } },
                   note: { note in notes.withLock { $0.append(note) } })
        defer { hold.stop() }
        for _ in 0 ..< 400 where notes.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(25)) }
        #expect(sent.withLock { $0 } == [.hold, .release])
        #expect(notes.withLock { $0 } == [.hold(what: .none, message: "the desktop's idle time cannot be read any more (it went away): the release starts now")])
    }
}

import SnoozeFuseSystem
public import Foundation
import Glibc

/// A real X server of the test's own (`Xvfb`, Debian package `xvfb`) on a free display number, with
/// an authority file of its own (a fresh MIT-MAGIC-COOKIE-1: clients without it are refused), and
/// `xdotool` (package `xdotool`) for input: its idle time is the server's own, as on a desktop.
/// Stopped by PID.
public final class PrivateXServer: Sendable {
    /// `:N`.
    public let display: String
    /// The authority file that holds the server's cookie (point `XAUTHORITY` at it).
    public let authority: String
    public let folder: TemporaryFolder
    private let server: BackgroundProcess

    /// Starts `Xvfb` and waits until it takes connections.
    public init() throws {
        folder = try TemporaryFolder(prefix: "snoozefuse-x")
        let xvfb = executableInPath("Xvfb")
        guard FileManager.default.isExecutableFile(atPath: xvfb.path) else {
            throw ToolFailure(description: "'Xvfb' is not installed (Debian package `xvfb`; Scripts/apt-packages.txt lists what the tests need)")
        }
        guard FileManager.default.isExecutableFile(atPath: executableInPath("xdotool").path) else {
            throw ToolFailure(description: "'xdotool' is not installed (Debian package `xdotool`)")
        }
        // Xvfb picks a display number no other server uses and says which (-displayfd): tests that
        // run side by side never meet on one.
        authority = folder.path("Xauthority")
        var cookie = [UInt8](repeating: 0, count: 16)
        for index in cookie.indices { cookie[index] = UInt8.random(in: 0 ... 255) }
        try Data(Self.authorityEntry(cookie: cookie)).write(to: URL(fileURLWithPath: authority))
        let chosen = folder.path("display")
        server = try BackgroundProcess(xvfb, ["-displayfd", "1", "-auth", authority, "-nolisten", "tcp", "-screen", "0", "640x480x24", "-noreset"],
                                       environment: ProcessInfo.processInfo.environment,
                                       standardOutput: chosen, standardError: folder.path("xvfb.err"))
        var number: Int?
        for _ in 0 ..< 500 {
            let said = (try? String(contentsOfFile: chosen, encoding: .utf8)) ?? ""
            if said.hasSuffix("\n"), let found = Int(said.trimmingCharacters(in: .whitespacesAndNewlines)) {
                number = found
                break
            }
            guard server.isRunning else { break }
            usleep(20_000)
        }
        guard let number, FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") else {
            let said = (try? String(contentsOfFile: folder.path("xvfb.err"), encoding: .utf8)) ?? ""
            display = ":?"
            stop()
            throw ToolFailure(description: "Xvfb did not start: \(said)")
        }
        display = ":\(number)"
    }

    deinit { stop() }

    /// The environment of a client of this server: `DISPLAY` and `XAUTHORITY` set.
    public func clientEnvironment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment["DISPLAY"] = display
        environment["XAUTHORITY"] = authority
        return environment
    }

    /// Presses and lets go of `key` (`a`, `space`) on the server, as a keyboard would.
    public func press(_ key: String) throws {
        try xdotool(["key", key])
    }

    /// Moves the pointer to `x`, `y`.
    public func movePointer(toX x: Int, y: Int) throws {
        try xdotool(["mousemove", "\(x)", "\(y)"])
    }

    private func xdotool(_ arguments: [String]) throws {
        let result = try runProcessBlocking(executableInPath("xdotool"), arguments, environment: clientEnvironment())
        guard result.status == 0 else {
            throw ToolFailure(description: "xdotool \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.standardError)")
        }
    }

    /// Stops the server (SIGTERM, by PID, so that it removes its socket and lock; SIGKILL after
    /// 2 s) and reaps it.
    public func stop() {
        guard server.isRunning else { return }
        server.signal(SIGTERM)
        for _ in 0 ..< 100 where server.isRunning { usleep(20_000) }
        if server.isRunning {
            server.signal(SIGKILL)
            server.wait()
            // Its own display (-displayfd): nobody else's files.
            if let number = Int(display.dropFirst()) {
                unlink("/tmp/.X\(number)-lock")
                unlink("/tmp/.X11-unix/X\(number)")
            }
        }
    }

    /// One Xauthority entry (big-endian): FamilyWild, no address, any display number (the server's
    /// is not known until it has started), the cookie.
    private static func authorityEntry(cookie: [UInt8]) -> [UInt8] {
        func field(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
        return [0xFF, 0xFF] + field([]) + field([]) + field(Array("MIT-MAGIC-COOKIE-1".utf8)) + field(cookie)
    }
}

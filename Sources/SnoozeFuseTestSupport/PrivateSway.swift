public import Foundation
import Glibc

/// A real Wayland compositor of the test's own: sway (Debian package `sway`), headless (wlroots'
/// headless backend and pixman renderer: no GPU, no input device, no seat of logind), with a
/// runtime folder and a configuration of its own, and `wtype` (package `wtype`) for input through
/// its virtual keyboard. sway refuses to run as root: run as root, the test starts it as `nobody`
/// (setpriv), with folders `nobody` owns; clients (the nap, wtype) reach its socket by path.
/// Stopped by PID.
public final class PrivateSway: Sendable {
    /// The compositor's socket, by path (what `WAYLAND_DISPLAY` may name).
    public let socket: String
    public let folder: TemporaryFolder
    private let compositor: BackgroundProcess

    /// Starts sway and waits until its socket takes connections.
    public init() throws {
        folder = try TemporaryFolder(prefix: "snoozefuse-sway")
        let sway = executableInPath("sway")
        guard FileManager.default.isExecutableFile(atPath: sway.path) else {
            throw ToolFailure(description: "'sway' is not installed (Debian package `sway`; Scripts/apt-packages.txt lists what the tests need)")
        }
        guard FileManager.default.isExecutableFile(atPath: executableInPath("wtype").path) else {
            throw ToolFailure(description: "'wtype' is not installed (Debian package `wtype`)")
        }
        let runtime = folder.path("run"), home = folder.path("home"), configuration = folder.path("config")
        for made in [runtime, home] { try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true) }
        try "output HEADLESS-1 resolution 800x600\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        chmod(runtime, 0o700)
        var command = [sway.path, "-c", configuration]
        if geteuid() == 0 {
            // sway refuses root: an ordinary user of the system's own, with folders it owns (the
            // test's folder lets it pass).
            chmod(folder.url.path, 0o711)
            for owned in [runtime, home] { chown(owned, 65534, 65534) }
            chmod(configuration, 0o644)
            command = [executableInPath("setpriv").path, "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": runtime,
                           "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1", "WAYLAND_DISPLAY": "wayland-snoozefuse"]
        compositor = try BackgroundProcess(URL(fileURLWithPath: command[0]), Array(command.dropFirst()), environment: environment,
                                           standardOutput: folder.path("sway.out"), standardError: folder.path("sway.err"))
        // sway picks its socket's name (wayland-1 …) in its own runtime folder.
        var found: String?
        for _ in 0 ..< 500 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
            if let name = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }) {
                found = runtime + "/" + name
                break
            }
            guard compositor.isRunning else { break }
            usleep(20_000)
        }
        guard let found else {
            let said = (try? String(contentsOfFile: folder.path("sway.err"), encoding: .utf8)) ?? ""
            socket = "?"
            stop()
            throw ToolFailure(description: "sway did not start: \(said.suffix(2000))")
        }
        socket = found
    }

    deinit { stop() }

    /// The compositor's process.
    public var pid: Int32 { compositor.pid }

    /// The environment of a client of this compositor: `WAYLAND_DISPLAY` its socket's path, no X
    /// display and no session bus (sway has neither).
    public func clientEnvironment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment["WAYLAND_DISPLAY"] = socket
        environment["XDG_SESSION_TYPE"] = "wayland"
        environment["DISPLAY"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + folder.path("no-session-bus")
        return environment
    }

    /// Types `text` through the compositor's virtual keyboard, as a keyboard would.
    public func type(_ text: String) throws {
        let result = try runProcessBlocking(executableInPath("wtype"), [text], environment: clientEnvironment())
        guard result.status == 0 else {
            throw ToolFailure(description: "wtype \(text) failed (\(result.status)): \(result.standardError)")
        }
    }

    /// Ends the compositor (SIGTERM, then SIGKILL) and waits for it.
    public func stop() {
        guard compositor.isRunning else { return }
        compositor.signal(SIGTERM)
        for _ in 0 ..< 100 where compositor.isRunning { usleep(20_000) }
        if compositor.isRunning { compositor.signal(SIGKILL) }
        _ = compositor.wait()
    }
}

public import Foundation
import Glibc

/// A real GNOME compositor of the test's own: Mutter (Debian package `mutter`), headless with a
/// virtual monitor, Wayland only, on a session bus of the test's own (``PrivateBus``): its
/// `org.gnome.Mutter.IdleMonitor` is GNOME's own, and input is made through its RemoteDesktop API
/// (`CreateSession`, `Start`, `NotifyKeyboardKeycode`), all on one bus connection, by a small
/// python3-dbus program the test drives (``press()``). Stopped by PID.
public final class PrivateMutter: Sendable {
    public let bus: PrivateBus
    /// The compositor's Wayland socket, by path.
    public let socket: String
    public let folder: TemporaryFolder
    private let compositor: BackgroundProcess
    private let keyboard: BackgroundProcess

    /// Starts Mutter and its input program, and waits until both are ready.
    public init() throws {
        let mutter = executableInPath("mutter")
        guard FileManager.default.isExecutableFile(atPath: mutter.path) else {
            throw ToolFailure(description: "'mutter' is not installed (Debian package `mutter`; Scripts/apt-packages.txt lists what the tests need)")
        }
        folder = try TemporaryFolder(prefix: "snoozefuse-mutter")
        bus = try PrivateBus()
        let runtime = folder.path("run")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        chmod(runtime, 0o700)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + folder.path("no-system-bus")
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["HOME"] = folder.url.path
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        compositor = try BackgroundProcess(mutter, ["--headless", "--wayland", "--no-x11", "--virtual-monitor", "800x600"],
                                           environment: environment, standardOutput: folder.path("mutter.out"),
                                           standardError: folder.path("mutter.err"))
        socket = runtime + "/wayland-0"
        let script = folder.path("keyboard.py")
        try Self.keyboardScript.write(toFile: script, atomically: true, encoding: .utf8)
        var started: BackgroundProcess?
        for _ in 0 ..< 500 {
            if FileManager.default.fileExists(atPath: socket), started == nil {
                started = try? BackgroundProcess(URL(fileURLWithPath: "/usr/bin/python3"), [script, bus.address, folder.path("keys")],
                                                 environment: environment, standardOutput: folder.path("keyboard.out"),
                                                 standardError: folder.path("keyboard.err"))
            }
            if let started, (try? String(contentsOfFile: folder.path("keyboard.out"), encoding: .utf8))?.contains("ready") == true || !started.isRunning {
                break
            }
            guard compositor.isRunning else { break }
            usleep(20_000)
        }
        guard let started, started.isRunning, compositor.isRunning else {
            let place = folder
            let said = ["mutter.err", "keyboard.err"].map { (try? String(contentsOfFile: place.path($0), encoding: .utf8)) ?? "" }.joined(separator: "\n")
            started?.signal(SIGKILL)
            _ = started?.wait()
            if compositor.isRunning { compositor.signal(SIGKILL) }
            _ = compositor.wait()
            throw ToolFailure(description: "mutter or its RemoteDesktop session did not start: \(said.suffix(3000))")
        }
        keyboard = started
    }

    deinit { stop() }

    /// The environment of a client of this GNOME session: its session bus, its Wayland socket.
    public func clientEnvironment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["WAYLAND_DISPLAY"] = socket
        environment["XDG_SESSION_TYPE"] = "wayland"
        environment["DISPLAY"] = nil
        return environment
    }

    /// Presses and lets go of a key (A) through RemoteDesktop; returns once Mutter has it.
    public func press() throws {
        let before = keysDone
        try "key\n".write(toFile: folder.path("keys") + ".\(before)", atomically: true, encoding: .utf8)
        for _ in 0 ..< 250 {
            if keysDone > before { return }
            guard keyboard.isRunning else { break }
            usleep(20_000)
        }
        throw ToolFailure(description: "the RemoteDesktop key was not sent: \((try? String(contentsOfFile: folder.path("keyboard.err"), encoding: .utf8)) ?? "")")
    }

    private var keysDone: Int {
        ((try? String(contentsOfFile: folder.path("keyboard.out"), encoding: .utf8)) ?? "").components(separatedBy: "sent\n").count - 1
    }

    /// Ends the input program, Mutter and the bus.
    public func stop() {
        for process in [keyboard, compositor] where process.isRunning {
            process.signal(SIGTERM)
            for _ in 0 ..< 100 where process.isRunning { usleep(20_000) }
            if process.isRunning { process.signal(SIGKILL) }
            _ = process.wait()
        }
        bus.stop()
    }

    /// One RemoteDesktop session, kept on one connection; a key for each file `keys.N` that appears.
    private static let keyboardScript = #"""
        import os, sys, time
        import dbus

        address, keys = sys.argv[1], sys.argv[2]
        bus = dbus.bus.BusConnection(address)
        remote = bus.get_object("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop")
        path = remote.CreateSession(dbus_interface="org.gnome.Mutter.RemoteDesktop")
        session = dbus.Interface(bus.get_object("org.gnome.Mutter.RemoteDesktop", path), "org.gnome.Mutter.RemoteDesktop.Session")
        session.Start()
        print("ready", flush=True)
        done = 0
        while True:
            name = "%s.%d" % (keys, done)
            if os.path.exists(name):
                session.NotifyKeyboardKeycode(dbus.UInt32(30), True)
                session.NotifyKeyboardKeycode(dbus.UInt32(30), False)
                os.remove(name)
                done += 1
                print("sent", flush=True)
            time.sleep(0.01)
        """#
}

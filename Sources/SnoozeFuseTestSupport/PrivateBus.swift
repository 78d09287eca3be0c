import SnoozeFuseSystem
import Foundation

// D-Bus tests against a `dbus-daemon` of the test's own, on a private socket, with small stand-ins
// for the services a nap calls (systemd-logind's inhibitor, the desktop's notification server)
// written in Python (python3-dbus with a GLib main loop). Everything is stopped by PID.

/// A `dbus-daemon` on a socket in a folder of its own, and the stand-ins started on it. Point a
/// program at it with `DBUS_SYSTEM_BUS_ADDRESS` or `DBUS_SESSION_BUS_ADDRESS` = ``address``.
public final class PrivateBus: Sendable {
    /// The daemon's folder: its configuration, socket and the stand-ins' logs.
    public let folder: TemporaryFolder
    /// The bus's address (`unix:path=…`).
    public let address: String
    private let processes = Locked<[BackgroundProcess]>([])
    private let published = Locked<[StandIn: BackgroundProcess]>([:])

    /// A service the test publishes on the bus.
    public enum StandIn: String, Sendable, CaseIterable {
        /// `org.freedesktop.login1` with `Manager.Inhibit`: returns one end of a pipe and logs
        /// `inhibit N what=… who=… why=… mode=… pipe=INODE` when called and `released N` when the
        /// caller's end is closed (every copy of it: the kernel closes it when the process dies).
        case login1
        /// `org.freedesktop.Notifications` with `Notify` and `CloseNotification`, logging one JSON
        /// object per call.
        case notifications
        /// The same, but `Notify` never answers (a hung notification server).
        case hangingNotifications = "hanging-notifications"
        /// GNOME's `org.gnome.Mutter.IdleMonitor` (`GetIdletime`, milliseconds), its idle time
        /// counted from the last ``input()``, logging `GetIdletime N` for the Nth call; with its
        /// watches as Mutter keeps them: `AddIdleWatch` (an interval in ms; fires `WatchFired` to
        /// its caller once the idle time reaches it, again after each new input) and
        /// `AddUserActiveWatch` (fires once, at the next input), logging `AddIdleWatch INTERVAL`,
        /// `AddUserActiveWatch` and `WatchFired ID`.
        case mutterIdle = "mutter-idle"
        /// The same without the watches (their calls answer UnknownMethod).
        case mutterIdleUnwatched = "mutter-idle-unwatched"
        /// `org.freedesktop.ScreenSaver` (`GetSessionIdleTime`, milliseconds as KDE answers), the
        /// same way.
        case screenSaver = "screensaver"
        /// `org.freedesktop.login1` with a session `auto` of `Type` wayland whose `IdleHint` is
        /// true and whose `IdleSinceHintMonotonic` is the last ``input()`` (`Properties.Get`).
        case idleSession = "idle-session"
    }

    /// The `Type` the idle-session stand-in's session answers (`wayland` until set).
    public func setSessionType(_ type: String) {
        try? type.write(toFile: folder.path("session-type"), atomically: true, encoding: .utf8)
    }

    /// Input on the stand-in desktop: the idle time of the idle stand-ins starts again from now.
    public func input() {
        _ = FileManager.default.createFile(atPath: folder.path("input"), contents: Data())
    }

    /// Starts the daemon and waits until it listens.
    public init() throws {
        folder = try TemporaryFolder(prefix: "snoozefuse-bus")
        let socket = folder.path("bus.sock")
        address = "unix:path=\(socket)"
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: folder.path("bus.conf"), atomically: true, encoding: .utf8)
        let daemon = executableInPath("dbus-daemon")
        guard FileManager.default.isExecutableFile(atPath: daemon.path) else {
            throw ToolFailure(description: "'dbus-daemon' is not installed (Debian package `dbus`; Scripts/apt-packages.txt lists what the tests need)")
        }
        try start(daemon, ["--config-file=\(folder.path("bus.conf"))", "--nofork", "--nopidfile", "--nosyslog"], log: "daemon")
        try waitUntil("dbus-daemon listens on \(socket)") { FileManager.default.fileExists(atPath: socket) }
    }

    deinit {
        stop()
    }

    /// Publishes `standIn` on the bus and waits until it is ready; it logs to ``log(of:)``.
    public func publish(_ standIn: StandIn) throws {
        let python = URL(fileURLWithPath: "/usr/bin/python3")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw ToolFailure(description: "/usr/bin/python3 is not installed (Debian packages python3, python3-dbus, python3-gi)")
        }
        let script = folder.path("stand-in.py")
        try Self.standInScript.write(toFile: script, atomically: true, encoding: .utf8)
        let log = logPath(of: standIn)
        let process = try start(python, [script, standIn.rawValue, address, log], log: standIn.rawValue)
        published.withLock { $0[standIn] = process }
        try waitUntil("the \(standIn.rawValue) stand-in to be ready") { self.log(of: standIn).contains("ready") }
    }

    /// Takes `standIn` off the bus (SIGKILL, by PID), as a crashed service leaves it: its name
    /// goes, and whatever it kept for its callers with it.
    public func withdraw(_ standIn: StandIn) {
        guard let process = published.withLock({ $0.removeValue(forKey: standIn) }) else { return }
        process.signal(SIGKILL)
        process.wait()
    }

    /// The notification server stand-in says `ActionInvoked` for notification `id` and action
    /// `key` (`snooze`, `stop`, `default`), as a server does when a person clicks it.
    public func invoke(_ standIn: StandIn, id: UInt32, action key: String) throws {
        try "\(id) \(key)\n".write(toFile: logPath(of: standIn) + ".invoke", atomically: true, encoding: .utf8)
    }

    /// The lines `standIn` logged so far.
    public func log(of standIn: StandIn) -> [String] {
        let text = (try? String(contentsOfFile: logPath(of: standIn), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// What the daemon and the stand-ins wrote to their standard error (for a failed expectation).
    public var diagnosis: String {
        (["daemon"] + StandIn.allCases.map(\.rawValue)).map { name in
            "\(name): \((try? String(contentsOfFile: folder.path("\(name).err"), encoding: .utf8)) ?? "")"
        }.joined(separator: "; ")
    }

    /// Stops the stand-ins and the daemon (SIGKILL, by PID) and reaps them.
    public func stop() {
        let running = processes.withLock { processes in
            defer { processes = [] }
            return processes
        }
        for process in running.reversed() {
            process.signal(SIGKILL)
            process.wait()
        }
    }

    private func logPath(of standIn: StandIn) -> String { folder.path("\(standIn.rawValue).log") }

    @discardableResult
    private func start(_ executable: URL, _ arguments: [String], log: String) throws -> BackgroundProcess {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        environment.removeValue(forKey: "DBUS_SYSTEM_BUS_ADDRESS")
        let process = try BackgroundProcess(executable, arguments, environment: environment,
                                            standardOutput: folder.path("\(log).out"), standardError: folder.path("\(log).err"))
        processes.withLock { $0.append(process) }
        return process
    }

    private func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        for _ in 0 ..< 500 {
            if condition() { return }
            usleep(20_000)
        }
        throw ToolFailure(description: "gave up waiting for \(what): \(diagnosis)")
    }

    /// The stand-ins: `stand-in.py KIND ADDRESS LOG`.
    private static let standInScript = #"""
        import json, os, sys, time
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        kind, address, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(address)
        log = open(log_path, "a", buffering=1)
        counter = [0]

        class Login1(dbus.service.Object):
            @dbus.service.method("org.freedesktop.login1.Manager", in_signature="ssss", out_signature="h")
            def Inhibit(self, what, who, why, mode):
                counter[0] += 1
                number = counter[0]
                read_end, write_end = os.pipe()
                log.write("inhibit %d what=%s who=%s why=%s mode=%s pipe=%d\n" % (number, what, who, why, mode, os.fstat(write_end).st_ino))
                def released(fd, condition):
                    log.write("released %d\n" % number)
                    os.close(fd)
                    return False
                GLib.io_add_watch(read_end, GLib.PRIORITY_DEFAULT, GLib.IO_HUP | GLib.IO_ERR | GLib.IO_IN, released)
                handed = dbus.types.UnixFd(write_end)  # a copy of its own, closed once sent
                os.close(write_end)
                return handed

        class Notifications(dbus.service.Object):
            def __init__(self, connection, path, hanging):
                dbus.service.Object.__init__(self, connection, path)
                self.hanging = hanging

            @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u",
                                 async_callbacks=("reply", "error"))
            def Notify(self, app_name, replaces_id, icon, summary, body, actions, hints, expire_timeout, reply, error):
                # As a server does: a notification that replaces another keeps its id.
                if int(replaces_id) != 0:
                    number = int(replaces_id)
                else:
                    counter[0] += 1
                    number = counter[0]
                urgency = hints.get("urgency")
                log.write(json.dumps({"call": "Notify", "id": number, "app_name": str(app_name), "replaces_id": int(replaces_id),
                                      "icon": str(icon), "summary": str(summary), "body": str(body), "actions": [str(a) for a in actions],
                                      "urgency": None if urgency is None else int(urgency),
                                      "urgency_type": type(urgency).__name__, "expire_timeout": int(expire_timeout)}) + "\n")
                if not self.hanging:
                    reply(dbus.UInt32(number))

            @dbus.service.method("org.freedesktop.Notifications", in_signature="u", out_signature="")
            def CloseNotification(self, number):
                log.write(json.dumps({"call": "CloseNotification", "id": int(number)}) + "\n")

        input_path = os.path.join(os.path.dirname(log_path), "input")
        if not os.path.exists(input_path):
            open(input_path, "w").close()

        def idle_ms():
            return max(0, int((time.time() - os.stat(input_path).st_mtime) * 1000))

        class Idle(dbus.service.Object):
            @dbus.service.method("org.gnome.Mutter.IdleMonitor", in_signature="", out_signature="t")
            def GetIdletime(self):
                counter[0] += 1
                log.write("GetIdletime %d\n" % counter[0])
                return dbus.UInt64(idle_ms())

            @dbus.service.method("org.freedesktop.ScreenSaver", in_signature="", out_signature="u")
            def GetSessionIdleTime(self):
                counter[0] += 1
                log.write("GetSessionIdleTime %d t=%.3f\n" % (counter[0], time.time()))
                return dbus.UInt32(idle_ms())

        # Mutter's watches: each belongs to its caller and fires WatchFired to it alone.
        watches = {}
        watch_ids = [0]

        def input_time():
            return os.stat(input_path).st_mtime

        class WatchedIdle(Idle):
            @dbus.service.method("org.gnome.Mutter.IdleMonitor", in_signature="t", out_signature="u", sender_keyword="sender")
            def AddIdleWatch(self, interval, sender=None):
                watch_ids[0] += 1
                log.write("AddIdleWatch %d\n" % interval)
                watches[watch_ids[0]] = {"sender": sender, "interval": int(interval), "fired_for": None}
                return dbus.UInt32(watch_ids[0])

            @dbus.service.method("org.gnome.Mutter.IdleMonitor", in_signature="", out_signature="u", sender_keyword="sender")
            def AddUserActiveWatch(self, sender=None):
                watch_ids[0] += 1
                log.write("AddUserActiveWatch\n")
                watches[watch_ids[0]] = {"sender": sender, "interval": None, "since": input_time()}
                return dbus.UInt32(watch_ids[0])

            @dbus.service.method("org.gnome.Mutter.IdleMonitor", in_signature="u", out_signature="")
            def RemoveWatch(self, number):
                watches.pop(int(number), None)

        def fire(number, sender):
            log.write("WatchFired %d\n" % number)
            message = dbus.lowlevel.SignalMessage("/org/gnome/Mutter/IdleMonitor/Core", "org.gnome.Mutter.IdleMonitor", "WatchFired")
            message.set_destination(sender)
            message.append(dbus.UInt32(number))
            bus.send_message(message)

        def watch_tick():
            last = input_time()
            idle = idle_ms()
            for number, watch in list(watches.items()):
                if watch["interval"] is None:
                    if last > watch["since"]:
                        del watches[number]
                        fire(number, watch["sender"])
                elif idle >= watch["interval"] and watch["fired_for"] != last:
                    watch["fired_for"] = last
                    fire(number, watch["sender"])
            return True

        def caller_left(name, old_owner, new_owner):
            if name.startswith(":") and not new_owner:
                for number in [n for n, w in watches.items() if w["sender"] == name]:
                    del watches[number]

        class Session(dbus.service.Object):
            @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
            def Get(self, interface, name):
                counter[0] += 1
                log.write("Get %s %d t=%.3f\n" % (name, counter[0], time.time()))
                if name == "IdleHint":
                    return dbus.Boolean(True, variant_level=1)
                if name == "Type":
                    type_path = os.path.join(os.path.dirname(log_path), "session-type")
                    kind_of_session = open(type_path).read().strip() if os.path.exists(type_path) else "wayland"
                    return dbus.String(kind_of_session, variant_level=1)
                since = time.monotonic() - idle_ms() / 1000.0
                return dbus.UInt64(int(since * 1000000), variant_level=1)

        if kind == "login1":
            name = dbus.service.BusName("org.freedesktop.login1", bus)
            service = Login1(bus, "/org/freedesktop/login1")
        elif kind == "idle-session":
            name = dbus.service.BusName("org.freedesktop.login1", bus)
            service = Session(bus, "/org/freedesktop/login1/session/auto")
        elif kind == "mutter-idle":
            name = dbus.service.BusName("org.gnome.Mutter.IdleMonitor", bus)
            service = WatchedIdle(bus, "/org/gnome/Mutter/IdleMonitor/Core")
            bus.add_signal_receiver(caller_left, "NameOwnerChanged", "org.freedesktop.DBus", "org.freedesktop.DBus", "/org/freedesktop/DBus")
            GLib.timeout_add(20, watch_tick)
        elif kind == "mutter-idle-unwatched":
            name = dbus.service.BusName("org.gnome.Mutter.IdleMonitor", bus)
            service = Idle(bus, "/org/gnome/Mutter/IdleMonitor/Core")
        elif kind == "screensaver":
            name = dbus.service.BusName("org.freedesktop.ScreenSaver", bus)
            service = Idle(bus, "/org/freedesktop/ScreenSaver")
        else:
            name = dbus.service.BusName("org.freedesktop.Notifications", bus)
            service = Notifications(bus, "/org/freedesktop/Notifications", kind == "hanging-notifications")
            # A person answering a notification: `invoke(ID, KEY)` writes "ID KEY" to this file; the
            # server then says ActionInvoked, as one does when an action is clicked.
            invoke_path = log_path + ".invoke"

            def check_invoke():
                if os.path.exists(invoke_path):
                    words = open(invoke_path).read().split()
                    os.remove(invoke_path)
                    if len(words) == 2:
                        message = dbus.lowlevel.SignalMessage("/org/freedesktop/Notifications", "org.freedesktop.Notifications", "ActionInvoked")
                        message.append(dbus.UInt32(int(words[0])))
                        message.append(dbus.String(words[1]))
                        bus.send_message(message)
                        log.write(json.dumps({"call": "ActionInvoked", "id": int(words[0]), "key": words[1]}) + "\n")
                return True

            GLib.timeout_add(50, check_invoke)
        log.write("ready\n")
        GLib.MainLoop().run()
        """#
}

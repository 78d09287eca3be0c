import Glibc
import SnoozeFuseSystem

/// Something that tells how long the desktop session has had no key or pointer input.
/// Every read is bounded (a bus call's or a socket's time limit) and blocks its thread: call it
/// from a thread of its own (``DesktopHold``), never an event loop's or Swift's shared pool.
protocol IdleTimeReader: Sendable {
    /// Names the source for events, `doctor` and messages: `GNOME (org.gnome.Mutter.IdleMonitor)`.
    var name: String { get }
    /// The time since the last input.
    func idleTime() throws(IdleTimeError) -> Duration
    /// Whether this source can hold a nap here: its first read, plus what else it needs (logind's
    /// idle hint means something only in a graphical session). The time is thrown away.
    func probe() throws(IdleTimeError)
    /// Lets go of what reads hold open (a connection); a read after it opens it again.
    func finish()
    /// Notifications of idleness and input, where the source gives them (GNOME's watches): a
    /// nap is then held without polling. Nil where the source can only be read.
    func watches() -> (any IdleWatches)?
}

extension IdleTimeReader {
    func probe() throws(IdleTimeError) { _ = try idleTime() }
    func finish() {}
    func watches() -> (any IdleWatches)? { nil }
}

/// An idle time could not be read.
public struct IdleTimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which source (``IdleTimeReader/name``).
    public var source: String
    /// What went wrong, and what to do where there is something.
    public var problem: String

    public var description: String { "\(source): \(problem)" }
}

extension IdleTimeError {
    /// `error` from asking `source` over a bus, in its words: an absent bus or service is "not on"
    /// that bus; a bus failure otherwise says why (after the method's name, with `namingMethod`).
    init(_ error: any Error, source: String, namingMethod: Bool = false) {
        switch error {
        case let error as IdleTimeError:
            self = error
        case let error as BusError:
            let reason = namingMethod ? "\(error.method.member): \(error.reason)" : error.reason
            self.init(source: source, problem: error.isUnavailable ? "not on \(error.bus.name)" : reason)
        default:
            self.init(source: source, problem: "\(error)")
        }
    }
}

/// The idle time of the sources that answer over D-Bus, each call bounded by `limit`. One
/// connection is kept between reads (logind's read is two calls on it); a failed read closes it,
/// and the next read connects again.
///
/// Not thread-safe on its own: one thread uses it at a time. A nap probes it while it sets up,
/// then hands it to ``DesktopHold``'s thread, which alone uses it from then on (starting the
/// thread orders the two); `doctor` uses it on one thread.
final class BusIdleTime: IdleTimeReader, @unchecked Sendable {
    enum Kind: Sendable, Hashable {
        /// GNOME Shell: `org.gnome.Mutter.IdleMonitor.GetIdletime` (milliseconds), and its idle
        /// and user-active watches (``MutterIdleWatches``).
        case mutter
        /// KDE Plasma and others: `org.freedesktop.ScreenSaver.GetSessionIdleTime`, read as
        /// milliseconds as KDE answers it.
        case screenSaver
        /// systemd-logind: the session's `IdleHint` and `IdleSinceHintMonotonic`, which the desktop
        /// sets when it judges the session idle: coarse (often minutes), the last resort.
        case logind
    }

    let kind: Kind
    let limit: Duration
    private var connection: BusConnection?

    init(kind: Kind, limit: Duration) {
        self.kind = kind
        self.limit = limit
    }

    var name: String {
        switch kind {
        case .mutter: "GNOME (org.gnome.Mutter.IdleMonitor)"
        case .screenSaver: "org.freedesktop.ScreenSaver"
        case .logind: "systemd-logind (IdleHint)"
        }
    }

    func finish() {
        connection?.close()
        connection = nil
    }

    /// GNOME tells when the idle time reaches a length and when input comes (its watches), so
    /// nothing needs polling; the other sources are read.
    func watches() -> (any IdleWatches)? {
        kind == .mutter ? MutterIdleWatches(limit: limit) : nil
    }

    /// logind's hint means something only in a graphical session (the desktop sets it); on a text
    /// console or over SSH it stays "not idle" and would hold the nap until its failsafe.
    func probe() throws(IdleTimeError) {
        _ = try idleTime()
        guard kind == .logind else { return }
        let type: String
        do {
            guard case .string(let found) = try sessionProperty("Type", .string) else {
                throw IdleTimeError(source: name, problem: "no session Type in its reply")
            }
            type = found
        } catch let error as BusError {
            finish()
            throw IdleTimeError(source: name, problem: error.reason)
        } catch let error as IdleTimeError {
            throw error
        } catch {
            throw IdleTimeError(source: name, problem: "\(error)")
        }
        guard ["x11", "wayland", "mir"].contains(type) else {
            throw IdleTimeError(source: name, problem: "a \(type) session, not a graphical one: nothing sets its idle hint")
        }
    }

    func idleTime() throws(IdleTimeError) -> Duration {
        do {
            switch kind {
            case .mutter:
                return try Self.mutterIdleTime(on: open(for: MutterIdleWatches.getIdletime), limit: limit, source: name)
            case .screenSaver:
                let method = BusMethod(service: "org.freedesktop.ScreenSaver", path: "/org/freedesktop/ScreenSaver",
                                       interface: "org.freedesktop.ScreenSaver", member: "GetSessionIdleTime")
                guard case .uint32(let milliseconds) = try open(for: method).call(method, replying: [.uint32], timeout: limit).first else {
                    throw IdleTimeError(source: name, problem: "no idle time in its reply")
                }
                return .milliseconds(Int64(milliseconds))
            case .logind:
                return try logindIdleTime()
            }
        } catch {
            finish()
            throw IdleTimeError(error, source: name)
        }
    }

    /// GNOME's idle time, asked on `connection`.
    static func mutterIdleTime(on connection: BusConnection, limit: Duration, source: String) throws -> Duration {
        guard case .uint64(let milliseconds) = try connection.call(MutterIdleWatches.getIdletime, replying: [.uint64], timeout: limit).first else {
            throw IdleTimeError(source: source, problem: "no idle time in its reply")
        }
        return .milliseconds(Int64(clamping: milliseconds))
    }

    /// The connection kept between reads, opened when there is none.
    private func open(for method: BusMethod) throws(BusError) -> BusConnection {
        if let connection { return connection }
        let opened = try BusConnection(kind == .logind ? .system : .session, for: method)
        connection = opened
        return opened
    }

    /// A property of this process's logind session.
    private func sessionProperty(_ property: String, _ type: BusReplyType) throws -> BusReplyValue? {
        let method = BusMethod(service: "org.freedesktop.login1", path: "/org/freedesktop/login1/session/auto",
                               interface: "org.freedesktop.DBus.Properties", member: "Get")
        return try open(for: method).call(method, [.string("org.freedesktop.login1.Session"), .string(property)],
                                          replying: [.variant(type)], timeout: limit).first
    }

    /// logind says idle or not, and since when on CLOCK_MONOTONIC; not idle is no idle time.
    private func logindIdleTime() throws -> Duration {
        guard case .boolean(let idle) = try sessionProperty("IdleHint", .boolean) else {
            throw IdleTimeError(source: name, problem: "no IdleHint in its reply")
        }
        guard idle else { return .zero }
        guard case .uint64(let since) = try sessionProperty("IdleSinceHintMonotonic", .uint64) else {
            throw IdleTimeError(source: name, problem: "no IdleSinceHintMonotonic in its reply")
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        return .microseconds(Int64(clamping: nowMicroseconds &- min(since, nowMicroseconds)))
    }
}

/// Finds the first source of the desktop's idle time that can hold a nap here: GNOME's
/// IdleMonitor; the X server's MIT-SCREEN-SAVER, outside a Wayland session; org.freedesktop.ScreenSaver;
/// logind's IdleHint, in a graphical session. Each is tried once, bounded; what each said is kept
/// for `doctor` and the message when none answers.
///
/// The X server comes before org.freedesktop.ScreenSaver (the issue listed them the other way):
/// on an X session its idle time is exact, while the ScreenSaver interface's unit differs between
/// implementations (KDE answers milliseconds, the screensavers derived from gnome-screensaver
/// seconds). Under Wayland the X server (XWayland) sees only the input of X programs: it is not
/// asked there.
struct IdleTimeSources {
    let limit: Duration
    let environment: [String: String]

    init(environment: [String: String], limit: Duration = .seconds(1)) {
        self.environment = environment
        self.limit = limit
    }

    /// Whether the session is a Wayland one (its compositor, not an X server, sees the input).
    var isWayland: Bool {
        environment["WAYLAND_DISPLAY"].map { !$0.isEmpty } == true || environment["XDG_SESSION_TYPE"] == "wayland"
    }

    /// Every source in order: its reader, or why it cannot be asked here at all.
    func candidates() -> [Result<any IdleTimeReader, IdleTimeError>] {
        let x11Name = "X11 (MIT-SCREEN-SAVER)"
        let x11: Result<any IdleTimeReader, IdleTimeError>
        if isWayland {
            x11 = .failure(IdleTimeError(source: x11Name, problem: "a Wayland session: its X server (XWayland) sees only the input of X programs"))
        } else if let reader = X11IdleTime(environment: environment, limit: limit) {
            x11 = .success(reader)
        } else {
            let absent = environment["DISPLAY"].map { "DISPLAY=\($0) is not a local X display" } ?? "no X display (DISPLAY is not set)"
            x11 = .failure(IdleTimeError(source: x11Name, problem: absent))
        }
        return [.success(BusIdleTime(kind: .mutter, limit: limit)), x11,
                .success(BusIdleTime(kind: .screenSaver, limit: limit)), .success(BusIdleTime(kind: .logind, limit: limit))]
    }

    /// `candidate` when it can hold a nap here (its probe answers), or why not.
    private func probed(_ candidate: Result<any IdleTimeReader, IdleTimeError>) -> Result<any IdleTimeReader, IdleTimeError> {
        candidate.flatMap { reader in
            do throws(IdleTimeError) {
                try reader.probe()
                return .success(reader)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Each source and what it answered: an idle time, or why not.
    func survey() -> [(name: String, answer: Result<Duration, IdleTimeError>)] {
        candidates().map { candidate in
            switch probed(candidate) {
            case .success(let reader):
                do throws(IdleTimeError) { return (reader.name, .success(try reader.idleTime())) } catch { return (reader.name, .failure(error)) }
            case .failure(let error):
                return (error.source, .failure(error))
            }
        }
    }

    /// The first source that answers, and why each one before it did not (every source's reason
    /// when none answers).
    func first() -> (reader: (any IdleTimeReader)?, failures: [IdleTimeError]) {
        var failures: [IdleTimeError] = []
        for candidate in candidates() {
            switch probed(candidate) {
            case .success(let reader): return (reader, failures)
            case .failure(let error): failures.append(error)
            }
        }
        return (nil, failures)
    }
}

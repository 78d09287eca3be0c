import Glibc
import SnoozeFuseSystem

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
        // A Wayland compositor's idle notifier, after GNOME's (Mutter has none before 45, and its
        // own watches say the same): sway and the other wlroots compositors, KWin.
        let wayland: Result<any IdleTimeReader, IdleTimeError> = WaylandIdleTime(environment: environment, limit: limit)
            .map { .success($0) } ?? .failure(IdleTimeError(source: WaylandIdleTime.genericName, problem: "not a Wayland session (WAYLAND_DISPLAY is not set)"))
        return [.success(BusIdleTime(kind: .mutter, limit: limit)), wayland, x11,
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

    /// Each source and what it answered: an idle time (what it tells, for a compositor), or why not.
    func survey() -> [(name: String, answer: Result<String, IdleTimeError>)] {
        candidates().map { candidate in
            switch probed(candidate) {
            case .success(let reader):
                do throws(IdleTimeError) { return (reader.name, .success(try reader.answer())) } catch { return (reader.name, .failure(error)) }
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

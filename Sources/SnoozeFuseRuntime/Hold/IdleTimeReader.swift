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
    /// What the source says now, for `doctor`: its idle time (`idle 3s`), or what it tells.
    func answer() throws(IdleTimeError) -> String
}

extension IdleTimeReader {
    func probe() throws(IdleTimeError) { _ = try idleTime() }
    func finish() {}
    func watches() -> (any IdleWatches)? { nil }
    func answer() throws(IdleTimeError) -> String { "idle \(try idleTime().compactDescription)" }
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

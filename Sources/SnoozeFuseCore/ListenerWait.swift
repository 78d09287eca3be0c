/// What a command from another terminal does when nobody listens on the nap's control socket, as
/// a pure value. Nobody listens for a moment while a nap holds its alarm: while it starts (its live
/// state is saved before it listens) and while its guardian takes it over (the nap's socket died
/// with it; the guardian listens once it holds the alarm). So while a process holds the nap, the
/// command tries again, every `interval`, until `patience` has passed since the first try; once
/// nobody holds it, there is no nap. `NapControl.send` is its driver.
public struct ListenerWait<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public enum Decision: Sendable, Hashable {
        /// Try to connect again at this instant.
        case retry(at: Instant)
        /// No process holds a nap: there is none to answer.
        case noNap
        /// A process holds the nap but has not listened in time.
        case giveUp
    }

    /// After this, a nap that is held but does not listen is given up on.
    public let deadline: Instant
    /// Between tries.
    public let interval: Duration

    /// A wait that starts with the first try, at `start`.
    public init(from start: Instant, patience: Duration = .seconds(5), interval: Duration = .milliseconds(50)) {
        deadline = start.advanced(by: patience)
        self.interval = interval
    }

    /// Nobody listened to a try at `now`; `held` says whether a process holds the nap.
    public func nobodyListened(at now: Instant, held: Bool) -> Decision {
        guard held else { return .noNap }
        guard now < deadline else { return .giveUp }
        return .retry(at: min(now.advanced(by: interval), deadline))
    }
}

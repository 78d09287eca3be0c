/// What a command from another terminal does when nobody listens on the nap's control socket, as
/// a pure value. Nobody listens for a while when a guardian takes a nap over (the nap's socket died
/// with it; the guardian listens once it holds the alarm): the command waits for it, up to
/// `takeOverPatience`. A nap's own process listens from its first moments, so for it the command
/// waits only `patience` (it may be starting) before it says that nothing listens. Nobody holding
/// the nap means there is none. `NapControl.send` is its driver.
public struct ListenerWait<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Who holds the nap, as the live state and the locks say.
    public enum Holder: Sendable, Hashable {
        /// Nobody: no nap, or an interrupted one.
        case nobody
        /// Its process (the nap, or `resume`), which listens from its start.
        case process
        /// Its guardian, which listens once it has taken the nap over.
        case guardian
    }

    public enum Decision: Sendable, Hashable {
        /// Try to connect again at this instant.
        case retry(at: Instant)
        /// Nobody holds a nap: there is none to answer.
        case noNap
        /// A process holds the nap but has not listened in time.
        case giveUp
    }

    public let start: Instant
    /// How long a nap's own process may take to listen.
    public let patience: Duration
    /// How long a guardian may take to take the nap over and listen.
    public let takeOverPatience: Duration
    /// Between tries.
    public let interval: Duration

    /// A wait that starts with the first try, at `start`.
    public init(from start: Instant, patience: Duration = .seconds(1), takeOverPatience: Duration = .seconds(5),
                interval: Duration = .milliseconds(50)) {
        self.start = start
        self.patience = patience
        self.takeOverPatience = takeOverPatience
        self.interval = interval
    }

    /// The last instant a try may be made while `holder` holds the nap.
    public func deadline(for holder: Holder) -> Instant {
        start.advanced(by: holder == .guardian ? takeOverPatience : patience)
    }

    /// Nobody listened to a try at `now`, while `holder` holds the nap.
    public func nobodyListened(at now: Instant, holder: Holder) -> Decision {
        guard holder != .nobody else { return .noNap }
        let deadline = deadline(for: holder)
        guard now < deadline else { return .giveUp }
        return .retry(at: min(now.advanced(by: interval), deadline))
    }
}

/// The requests arriving on a nap's control socket, each connection with a deadline of its own, as
/// a pure value: what its bytes come to, and which connections have run out of time. No connection
/// can hold up another: one that sends nothing, or sends its line a byte at a time, is dropped when
/// its time is up, and past `capacity` open connections the oldest is dropped for the newest.
/// `ControlServer` is its driver (poll on the listener and every open connection).
public struct ControlIntake<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What a connection's bytes came to.
    public enum Outcome: Sendable, Hashable {
        /// Its request line (without the newline).
        case request(String)
        /// Its line passed `lineLimit` bytes without ending.
        case tooLong
        /// It closed without sending anything.
        case empty
        /// Nothing yet: keep reading.
        case waiting
    }

    /// How long a connection has from when it was accepted to end its request line.
    public let timeLimit: Duration
    /// The longest request line.
    public let lineLimit: Int
    /// How many connections may wait at once.
    public let capacity: Int

    @usableFromInline var waiting: [Int32: Pending] = [:]
    @usableFromInline var order: UInt64 = 0

    @usableFromInline struct Pending: Sendable, Hashable {
        @usableFromInline var deadline: Instant
        @usableFromInline var order: UInt64
        @usableFromInline var bytes: [UInt8]

        @inlinable init(deadline: Instant, order: UInt64, bytes: [UInt8]) {
            self.deadline = deadline
            self.order = order
            self.bytes = bytes
        }
    }

    public init(timeLimit: Duration = .seconds(1), lineLimit: Int = 65_536, capacity: Int = 32) {
        self.timeLimit = timeLimit
        self.lineLimit = lineLimit
        self.capacity = max(capacity, 1)
    }

    // Closures, not key paths, in this type's code: a key path through a generic type is made anew
    // at every use, its types looked up by mangled name, which was a third of a nap's CPU per
    // control answer (issue 23). And inlinable: the nap's instant type lives in a module Core does
    // not see, so only the nap's module can specialise this code; unspecialised, every call looked
    // up generic metadata and witness tables at run time.

    /// The connections waiting for their request, oldest first.
    @inlinable
    public var open: [Int32] { waiting.sorted { $0.value.order < $1.value.order }.map { $0.key } }

    /// When the next connection runs out of time.
    @inlinable
    public var nextDeadline: Instant? { waiting.values.map { $0.deadline }.min() }

    /// `id` was accepted at `now`. Returns the connections to drop to make room (the oldest).
    @inlinable
    public mutating func accepted(_ id: Int32, at now: Instant) -> [Int32] {
        var dropped: [Int32] = []
        while waiting.count >= capacity, let oldest = open.first {
            waiting[oldest] = nil
            dropped.append(oldest)
        }
        order += 1
        waiting[id] = Pending(deadline: now.advanced(by: timeLimit), order: order, bytes: [])
        return dropped
    }

    /// `bytes` arrived on `id`. A connection whose outcome is not `waiting` is no longer tracked.
    @inlinable
    public mutating func received(_ bytes: some Collection<UInt8>, on id: Int32) -> Outcome {
        guard var pending = waiting[id] else { return .waiting }
        if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            pending.bytes += bytes[bytes.startIndex ..< newline]
            waiting[id] = nil
            return pending.bytes.count > lineLimit ? .tooLong : .request(String(decoding: pending.bytes, as: UTF8.self))
        }
        pending.bytes += bytes
        guard pending.bytes.count <= lineLimit else {
            waiting[id] = nil
            return .tooLong
        }
        waiting[id] = pending
        return .waiting
    }

    /// `id` reached its end of file: what it sent without a newline is its request.
    @inlinable
    public mutating func ended(_ id: Int32) -> Outcome {
        guard let pending = waiting.removeValue(forKey: id) else { return .empty }
        return pending.bytes.isEmpty ? .empty : .request(String(decoding: pending.bytes, as: UTF8.self))
    }

    /// Forgets `id` (its connection failed or was closed by the driver).
    @inlinable
    public mutating func forget(_ id: Int32) {
        waiting[id] = nil
    }

    /// The connections whose time is up at `now`, no longer tracked.
    @inlinable
    public mutating func expire(at now: Instant) -> [Int32] {
        let late = waiting.filter { $0.value.deadline <= now }.sorted { $0.value.order < $1.value.order }.map { $0.key }
        for id in late { waiting[id] = nil }
        return late
    }
}

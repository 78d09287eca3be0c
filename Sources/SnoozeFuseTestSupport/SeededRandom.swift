/// A small xorshift generator for tests that draw many cases: the same cases on every run, from
/// the seed the test names.
public struct SeededRandom: Sendable {
    public var state: UInt64

    /// `seed` must not be 0 (xorshift would stay at 0).
    public init(seed: UInt64) { state = seed == 0 ? 0x5EED : seed }

    public mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    /// A number below `bound` (> 0).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// One of `choices` (not empty).
    public mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
}

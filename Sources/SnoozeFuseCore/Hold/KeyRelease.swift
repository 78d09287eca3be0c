/// The true release of a held key, as a pure state machine over the keyboard's key state
/// (`EVIOCGKEY`: which keys are down now, read from the keyboard device, never its stream of
/// events): `(state, keys down at an instant) → (released?, when to look next)`.
///
/// When a hold begins (the terminal's first byte), the held key is the one key down then that is
/// not a modifier (Shift, Ctrl, Alt, Super); it is looked for for ``lookFor`` (the byte and the key
/// state race), and when none shows (the key is on another machine: SSH), or several stay down (a
/// stuck key, another keyboard), this hold is left to the terminal's release gap. Once found, only
/// that key's state matters: its going up is the release.
public struct KeyRelease<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// How often the key state is read while a hold lasts.
    public static var poll: Duration { .milliseconds(20) }
    /// How long the held key is looked for after the hold begins.
    public static var lookFor: Duration { .milliseconds(500) }
    /// Shift, Ctrl, Alt and Super, left and right (linux/input-event-codes.h): never the held key.
    public static var modifiers: Set<UInt16> { [29, 97, 42, 54, 56, 100, 125, 126] }

    private enum State: Sendable, Hashable {
        case idle
        case looking(since: Instant)
        case tracking(key: UInt16)
    }

    private var state = State.idle

    public init() {}

    /// The key being held, once found.
    public var heldKey: UInt16? {
        if case .tracking(let key) = state { key } else { nil }
    }

    /// A hold began at `now`: look for its key; returns when to read the key state first.
    public mutating func holdBegan(at now: Instant) -> Instant {
        state = .looking(since: now)
        return now
    }

    /// The hold ended another way (the session moved on): stop looking.
    public mutating func holdOver() {
        state = .idle
    }

    /// Why a hold was left to the terminal's release gap.
    public enum Gap: Sendable, Hashable {
        /// No key but modifiers was down on the keyboards read (typed over SSH, or on a keyboard
        /// this user may not read).
        case noKeyDown
        /// More than one key was down (a stuck key, another keyboard): which is held is not known.
        case severalKeysDown
    }

    /// What a read of the key state means.
    public struct Step: Sendable, Hashable {
        /// The held key was let go.
        public var released: Bool
        /// When to read again; nil: not until the next hold.
        public var next: Instant?
        /// Set when this read gave the hold up to the terminal's release gap, and why.
        public var leftToTheGap: Gap?
    }

    /// The keys down at `now`: whether the held key was let go, and when to read again.
    public mutating func sample(keysDown: Set<UInt16>, at now: Instant) -> Step {
        switch state {
        case .idle:
            return Step(released: false, next: nil)
        case .looking(let since):
            let candidates = keysDown.subtracting(Self.modifiers)
            if candidates.count == 1, let key = candidates.first {
                state = .tracking(key: key)
                return Step(released: false, next: now.advanced(by: Self.poll))
            }
            guard since.duration(to: now) < Self.lookFor else {
                state = .idle
                return Step(released: false, next: nil, leftToTheGap: candidates.isEmpty ? .noKeyDown : .severalKeysDown)
            }
            return Step(released: false, next: now.advanced(by: Self.poll))
        case .tracking(let key):
            guard !keysDown.contains(key) else { return Step(released: false, next: now.advanced(by: Self.poll)) }
            state = .idle
            return Step(released: true, next: nil)
        }
    }
}

/// What a terminal reports: keys, and the moments they stop coming.
public enum KeyInput: Sendable, Hashable {
    /// Bytes typed (one key, an escape sequence, or an autorepeat burst).
    case bytes([UInt8])
    /// No byte has come for the release gap since the last one: a held key was let go (a terminal
    /// reports presses and their autorepeat, never releases).
    case quiet
    /// The terminal went away (hang-up, or reads fail): no key will come again.
    case closed
    /// The held key came up, as the keyboard device itself reports it (evdev): the hold ends now,
    /// not a release gap after its autorepeat stops.
    case released
}

/// How a ringing alarm is stopped for good (`--dismiss`). Snoozing is always one key; stopping
/// must take a waking mind (SPEC §3), except with `key`.
public enum DismissMode: String, Sendable, Hashable, CaseIterable, Codable {
    /// Type the short word shown on screen, then Enter (the default).
    case word
    /// Keep a key down for ``NapKeys/dismissHold`` (its autorepeat must not pause).
    case hold
    /// One Enter, space or `d` (for scripts and people who trust themselves).
    case key
}

/// What the key line of a display shows beyond the phase: the word to type, what has been typed
/// of it, a wrong try, a pending confirmation.
public struct KeyPrompt: Sendable, Hashable {
    public var dismissal: DismissMode
    /// The word that stops the ringing alarm (`word` mode, while ringing).
    public var word: String?
    /// What has been typed of it so far.
    public var typed: String
    /// The last Enter did not match the word.
    public var wrong: Bool
    /// `q` was pressed: `y` cancels the nap, any other key keeps it.
    public var confirmingCancel: Bool
    /// A key is being held to stop the alarm (`hold` mode).
    public var holdingToDismiss: Bool

    public init(dismissal: DismissMode, word: String? = nil, typed: String = "", wrong: Bool = false,
                confirmingCancel: Bool = false, holdingToDismiss: Bool = false) {
        self.dismissal = dismissal
        self.word = word
        self.typed = typed
        self.wrong = wrong
        self.confirmingCancel = confirmingCancel
        self.holdingToDismiss = holdingToDismiss
    }
}

/// What the keys of a nap's terminal mean, as a pure state machine: `(state, input, phase, now) →
/// (state, session events)`. No clock, I/O or randomness inside; the word to type comes in from
/// outside when the alarm starts ringing (``ringingBegan(word:)``).
///
/// - In hold mode, any key while the session is ready, holding or releasing (or still held from
///   one of those) is the hold: its first byte `holdBegan`, the quiet after its autorepeat
///   `holdEnded`.
/// - Before the alarm: `+` and `-` move it by a minute while napping or snoozed (the session never
///   lets it come closer than 10 s); `q` asks for confirmation and `y` then cancels.
/// - Ringing: `s` snoozes. Stopping for good (ringing or snoozed) depends on ``DismissMode``: the
///   typed word and Enter (a wrong word clears what was typed and keeps ringing; Backspace
///   corrects), a key held for 3 s, or one Enter, space or `d`. `q` cancels only in `key` mode and
///   only after `y`: otherwise it would be a way round the challenge.
/// - Escape sequences (arrows, function keys) mean nothing: a sleeper may bump them.
public struct NapKeys<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// How long a key must be held to stop the alarm in `hold` mode.
    public static var dismissHold: Duration { .seconds(3) }
    /// How much `+` and `-` move the alarm.
    public static var adjustStep: Duration { .seconds(60) }

    public let holdMode: Bool
    public private(set) var prompt: KeyPrompt
    /// A hold-mode hold is in progress.
    public private(set) var holding = false
    /// When the key now held to stop the alarm went down (`hold` mode).
    private var dismissHoldStart: Instant?
    /// After a key-up from the keyboard device, the autorepeat bytes still on their way belong to
    /// the hold that ended: bytes before this instant start no new hold.
    private var echoUntil: Instant?

    /// How long after a key-up from the keyboard device its bytes may still arrive.
    public static var releaseEcho: Duration { .milliseconds(150) }

    public init(holdMode: Bool, dismissal: DismissMode) {
        self.holdMode = holdMode
        prompt = KeyPrompt(dismissal: dismissal)
    }

    /// A new challenge: the alarm starts ringing (also after a snooze), with `word` to type.
    public mutating func ringingBegan(word: String) {
        prompt.word = prompt.dismissal == .word ? word : nil
        prompt.typed = ""
        prompt.wrong = false
        prompt.confirmingCancel = false
        prompt.holdingToDismiss = false
        dismissHoldStart = nil
    }

    /// The alarm stopped ringing (snoozed, ended): what was typed is put away. The word stays
    /// until the next ring: a snoozed alarm is stopped for good with it too.
    public mutating func ringingEnded() {
        prompt.typed = ""
        prompt.wrong = false
        prompt.holdingToDismiss = false
        prompt.confirmingCancel = false
        dismissHoldStart = nil
    }

    /// The session events `input` stands for in `phase` at `now`.
    public mutating func events(for input: KeyInput, in phase: Phase, at now: Instant) -> [SessionEvent] {
        switch input {
        case .closed:
            holding = false
            dismissHoldStart = nil
            prompt.holdingToDismiss = false
            return [.detach]
        case .released:
            guard holding else { return [] }
            holding = false
            echoUntil = now.advanced(by: Self.releaseEcho)
            return [.holdEnded]
        case .quiet:
            dismissHoldStart = nil
            prompt.holdingToDismiss = false
            guard holding else { return [] }
            holding = false
            return [.holdEnded]
        case .bytes(let bytes):
            if holdMode, holding || [.ready, .holding, .releasing].contains(phase) {
                guard !holding else { return [] }
                if let echoUntil, now < echoUntil { return [] }
                echoUntil = nil
                holding = true
                return [.holdBegan]
            }
            // An escape sequence (an arrow, a function key) or Escape itself: nothing.
            if bytes.first == 0x1B { return [] }
            if phase == .ringing || phase == .snoozed, prompt.dismissal == .hold {
                return holdToDismiss(bytes, in: phase, at: now)
            }
            var events: [SessionEvent] = []
            for byte in bytes {
                events += self.events(for: byte, in: phase)
                if events.contains(where: \.endsRinging) { break }
            }
            return events
        }
    }

    private mutating func events(for byte: UInt8, in phase: Phase) -> [SessionEvent] {
        if prompt.confirmingCancel {
            prompt.confirmingCancel = false
            return byte == UInt8(ascii: "y") || byte == UInt8(ascii: "Y") ? [.cancel] : []
        }
        switch phase {
        case .ringing, .snoozed:
            if phase == .snoozed, let step = Self.adjustment(byte) { return [.adjust(step)] }
            return challenge(byte, in: phase)
        case .napping:
            if let step = Self.adjustment(byte) { return [.adjust(step)] }
            if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") { prompt.confirmingCancel = true }
            return []
        case .ready, .holding, .releasing:
            if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") { prompt.confirmingCancel = true }
            return []
        case .finished, .cancelled:
            return []
        }
    }

    /// `+` and `-` (and their unshifted keys `=` and `_`): a minute more or less.
    private static func adjustment(_ byte: UInt8) -> Duration? {
        switch byte {
        case UInt8(ascii: "+"), UInt8(ascii: "="): adjustStep
        case UInt8(ascii: "-"), UInt8(ascii: "_"): .zero - adjustStep
        default: nil
        }
    }

    /// Ringing or snoozed: `s` snoozes a ringing alarm; the challenge stops it for good, ringing or
    /// snoozed. `q` cancels only in `key` mode: otherwise it would be a way round the challenge.
    private mutating func challenge(_ byte: UInt8, in phase: Phase) -> [SessionEvent] {
        switch byte {
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            return phase == .ringing ? [.snooze(nil)] : []
        case UInt8(ascii: "q"), UInt8(ascii: "Q"):
            if prompt.dismissal == .key { prompt.confirmingCancel = true }
            return []
        default:
            break
        }
        switch prompt.dismissal {
        case .key:
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "d"), UInt8(ascii: "D"):
                return [.dismiss]
            default:
                return []
            }
        case .word:
            guard let word = prompt.word else { return [] }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                if prompt.typed == word { return [.dismiss] }
                // Enter on nothing is a half-asleep press: it is not even a wrong try.
                prompt.wrong = !prompt.typed.isEmpty
                prompt.typed = ""
                return []
            case 0x7F, 0x08:
                if !prompt.typed.isEmpty { prompt.typed.removeLast() }
                return []
            case 0x15:  // Ctrl-U: start again
                prompt.typed = ""
                return []
            case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"):
                // Bounded: a cat on the keyboard cannot grow it for ever.
                guard prompt.typed.count < word.count + 8 else { return [] }
                prompt.typed.append(Character(Unicode.Scalar(byte | 0x20)))
                prompt.wrong = false
                return []
            default:
                return []
            }
        case .hold:
            return []
        }
    }

    /// `hold` mode: a burst of autorepeat that lasts ``dismissHold`` stops the alarm; the quiet
    /// after a burst starts the count again. `s` still snoozes at once.
    private mutating func holdToDismiss(_ bytes: [UInt8], in phase: Phase, at now: Instant) -> [SessionEvent] {
        if dismissHoldStart == nil {
            if let first = bytes.first, first == UInt8(ascii: "s") || first == UInt8(ascii: "S") {
                return phase == .ringing ? [.snooze(nil)] : []
            }
            if phase == .snoozed, let first = bytes.first, let step = Self.adjustment(first) { return [.adjust(step)] }
            dismissHoldStart = now
            prompt.holdingToDismiss = true
            return []
        }
        guard let start = dismissHoldStart, start.duration(to: now) >= Self.dismissHold else { return [] }
        return [.dismiss]
    }
}

extension SessionEvent {
    /// Whether the event stops the ringing (the rest of the bytes mean nothing after it).
    fileprivate var endsRinging: Bool {
        switch self {
        case .dismiss, .snooze, .cancel: true
        default: false
        }
    }
}

/// Short words to type to stop an alarm: common, easy to spell half-awake, and free of the letters
/// that mean something else while it rings (`s` snoozes, `q` asks to cancel).
public enum DismissWords {
    public static let all: [String] = [
        "apple", "bread", "cloud", "dance", "eagle", "flame", "grape", "honey", "lemon", "maple",
        "night", "ocean", "piano", "river", "tiger", "under", "violin", "water", "yellow", "zebra",
        "candle", "garden", "lion", "melon", "orange", "pencil", "rabbit", "table", "window", "meadow",
        "guitar", "jungle", "kitten", "ladder", "mirror", "noodle", "pepper", "rocket", "turtle", "velvet",
        "wonder", "button", "copper", "dinner", "engine", "feather", "hammer", "pillow", "thunder", "winter",
    ]

    /// One of ``all``, chosen by `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> String {
        all.randomElement(using: &generator) ?? "wake"
    }
}

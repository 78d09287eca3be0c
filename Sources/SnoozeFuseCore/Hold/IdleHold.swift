/// Where a nap's hold comes from (`--hold`): a key held in the nap's terminal, the person's use of
/// the whole desktop, or nothing (the release timer starts at once).
public enum HoldSource: String, Sendable, Hashable, CaseIterable, Codable {
    /// A key held down in the nap's terminal (the default on a terminal).
    case key
    /// Any key or pointer input anywhere in the desktop session: the nap counts as held while the
    /// person uses the machine, and lets go after `--idle-after` without input.
    case desktop
    /// No hold (`--no-hold`): the release timer starts at once.
    case none

    /// Whether the session waits for a hold before its release timer.
    public var waitsForHold: Bool { self != .none }
}

/// What a desktop's watch said (GNOME's idle and user-active watches).
public enum IdleNotice: Sendable, Hashable {
    /// No input has come for the length watched (`--idle-after`).
    case idle
    /// Input came.
    case active
}

/// A desktop hold as a pure state machine: `(state, idle time read at an instant, phase) →
/// (state, session events, when to read again)`. No clock, bus or X server inside: the driver reads
/// the desktop's idle time (the time since the last key or pointer input anywhere in the session)
/// and hands it in.
///
/// - The nap starts held (whoever typed the command is using the machine): ``begin(at:)`` says
///   `holdBegan`.
/// - Held: `idleAfter` without input ends the hold (`holdEnded`). Until then nothing can end it
///   sooner, so the next read is due exactly when the idle time can first reach `idleAfter`: no
///   polling while the person works.
/// - Released: any input since the release (the idle time is shorter than the time since the last
///   input seen) is a new hold (`holdBegan`), which starts the release over, as a held key does.
///   Here input can come at any moment, so the idle time is read every ``releasePoll``.
/// - Napping, ringing, snoozed, ended: input changes nothing (a cat on the keyboard must not move
///   the alarm) and nothing is read any more (`next` is nil).
public struct IdleHold<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// How often the idle time is read while released (at most twice a second).
    public static var releasePoll: Duration { .milliseconds(500) }
    /// Idle times are read in milliseconds by every source, some coarser: input seen less than
    /// this after the last one is taken as the same.
    public static var tolerance: Duration { .milliseconds(100) }

    /// No input for this long ends the hold.
    public let idleAfter: Duration
    /// Holding (true) or released and waiting (false).
    public private(set) var holding = false
    /// When the last input before the release was (the release started `idleAfter` after it).
    private var lastInputAtRelease: Instant?

    public init(idleAfter: Duration) {
        self.idleAfter = idleAfter
    }

    /// What a read of the idle time means, and when to read it next.
    public struct Step: Sendable, Hashable {
        public var events: [SessionEvent]
        /// When to read again; nil: never again (the hold is over for this nap).
        public var next: Instant?

        public init(events: [SessionEvent], next: Instant?) {
            self.events = events
            self.next = next
        }
    }

    /// Whether the idle time is worth reading while the session is in `phase`: only before the
    /// nap starts (ready, holding, releasing). The driver asks before each read, so that nothing is
    /// read once the nap has started.
    public static func reads(in phase: Phase) -> Bool {
        [.ready, .holding, .releasing].contains(phase)
    }

    /// The nap starts held, at `now`.
    public mutating func begin(at now: Instant) -> Step {
        holding = true
        lastInputAtRelease = nil
        return Step(events: [.holdBegan], next: now)
    }

    /// The desktop says no input came for `idle`, read at `now`, while the session is in `phase`.
    public mutating func observe(idle: Duration, at now: Instant, phase: Phase) -> Step {
        guard Self.reads(in: phase) else { return Step(events: [], next: nil) }
        let idle = max(idle, .zero)
        let lastInput = now.advanced(by: .zero - idle)
        if holding {
            guard idle >= idleAfter else { return Step(events: [], next: now.advanced(by: idleAfter - idle)) }
            holding = false
            lastInputAtRelease = lastInput
            return Step(events: [.holdEnded], next: now.advanced(by: Self.releasePoll))
        }
        if let seen = lastInputAtRelease, seen.advanced(by: Self.tolerance) < lastInput {
            holding = true
            lastInputAtRelease = nil
            return Step(events: [.holdBegan], next: now.advanced(by: max(idleAfter - idle, .zero)))
        }
        return Step(events: [], next: now.advanced(by: Self.releasePoll))
    }

    // MARK: - Watched (a desktop that tells, rather than one that is read)

    /// A watch fired at `now` (see ``IdleNotice``): one fires when no input has come for
    /// `idleAfter`, once per quiet spell; one, set after each release, at the next input.
    ///
    /// `next` is `now` when the idle time must be read at once (after a release: input may have
    /// come before the input watch was set; hand it to ``observeWatched(idle:at:phase:)``), nil
    /// when the watches tell what comes next.
    public mutating func notice(_ notice: IdleNotice, at now: Instant, phase: Phase) -> Step {
        guard Self.reads(in: phase) else { return Step(events: [], next: nil) }
        switch (notice, holding) {
        case (.idle, true):
            // Trusted as it comes. (One that fired for a quiet spell a read had already ended,
            // handled after input began a new hold, ends that hold too soon; the read after the
            // release finds the input and holds again. Doubting it instead could keep a nap held
            // when a notice comes late.)
            holding = false
            lastInputAtRelease = now.advanced(by: .zero - idleAfter)
            return Step(events: [.holdEnded], next: now)
        case (.active, false):
            holding = true
            lastInputAtRelease = nil
            return Step(events: [.holdBegan], next: nil)
        case (.idle, false), (.active, true):
            // An idle watch that fired for the quiet spell a read had already ended the hold at;
            // input while held, which changes nothing.
            return Step(events: [], next: nil)
        }
    }

    /// The idle time, read at `now` where the watches cannot tell: at the start (``begin(at:)``)
    /// and once after each release.
    ///
    /// Held, it is read as ``observe(idle:at:phase:)`` reads it, and a release asks for a read at
    /// once. Released, an idle time shorter than `idleAfter` is input since the release: the idle
    /// time only grows without input, and it had reached `idleAfter` when the hold ended. (The
    /// instant the read implies is not compared with the release's: a reply delayed on a busy
    /// machine would look like input.)
    public mutating func observeWatched(idle: Duration, at now: Instant, phase: Phase) -> Step {
        guard Self.reads(in: phase) else { return Step(events: [], next: nil) }
        let idle = max(idle, .zero)
        let lastInput = now.advanced(by: .zero - idle)
        if holding {
            guard idle >= idleAfter else { return Step(events: [], next: nil) }
            holding = false
            lastInputAtRelease = lastInput
            return Step(events: [.holdEnded], next: now)
        }
        guard idle < idleAfter else { return Step(events: [], next: nil) }
        holding = true
        lastInputAtRelease = nil
        return Step(events: [.holdBegan], next: nil)
    }
}

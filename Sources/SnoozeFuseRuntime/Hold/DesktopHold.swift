import SnoozeFuseCore
import SnoozeFuseSystem

/// `--hold desktop`: holds the nap while the person uses the machine, on a thread of its own.
///
/// Where the source has watches (GNOME), it waits for them: one tells when no input has come for
/// `--idle-after`, one at the next input after a release; nothing is polled. Otherwise it reads
/// the desktop's idle time from one ``IdleTimeReader`` when ``IdleHold`` says (at the start, when
/// the idle time could first reach `--idle-after`, twice a second while released). Either way it
/// hands the hold and release to the nap and reads nothing once the nap has started. Every call is
/// bounded by its source; watches that fail give way to reads; a failed read is tried again twice
/// a second, and when reads have failed for `giveUpAfter` while the nap is held, the hold ends
/// there (the release timer starts: when in doubt, ring) and the nap says why.
final class DesktopHold: Sendable {
    let reader: any IdleTimeReader
    let idleAfter: Duration
    /// How long reads may keep failing before the hold is given up.
    let giveUpAfter: Duration
    private let stopped = Locked(false)
    /// Rung by ``stop()``: the thread sleeps on it until its next read, never in slices.
    private let bell = EventBell()

    init(reader: any IdleTimeReader, idleAfter: Duration, giveUpAfter: Duration = .seconds(5)) {
        self.reader = reader
        self.idleAfter = idleAfter
        self.giveUpAfter = giveUpAfter
    }

    /// Starts holding: `phase` tells where the nap stands, `send` takes the hold and release,
    /// `note` what went wrong (a warning; a `hold` of nothing when the hold is given up). When no
    /// thread can be started the nap is held and released at once (its release timer starts: a
    /// nap nothing holds must still ring) and false is returned.
    @discardableResult
    func start(phase: @escaping @Sendable () -> Phase, send: @escaping @Sendable (NapCommand) -> Void,
               note: @escaping @Sendable (SessionNote) -> Void) -> Bool {
        let reader = reader
        let started = SystemThread.start(named: "snoozefuse-idle") { [self] in
            // The source's connection (an X server's, a bus's) goes with the thread.
            defer { reader.finish() }
            var hold = IdleHold<BootInstant>(idleAfter: idleAfter)
            var step = hold.begin(at: BootInstant.now)
            Self.deliver(step.events, send)
            if let bell, let watches = reader.watches() {
                // The watches have a connection of their own; the reader's opens again if they fail.
                reader.finish()
                defer { watches.close() }
                switch self.hold(&hold, &step, by: watches, bell: bell, phase: phase, send: send) {
                case .over:
                    return
                case .failed(let error):
                    note(.warning("\(watches.name)'s watches failed (\(error.problem)): its idle time is read instead"))
                    step = IdleHold.Step(events: [], next: BootInstant.now)
                }
            }
            poll(&hold, step, phase: phase, send: send, note: note)
        }
        if !started {
            note(.warning("the desktop hold cannot start (the system refused a thread): the release starts now"))
            send(.hold)
            send(.release)
        }
        return started
    }

    private enum WatchEnd {
        /// Stopped, or the nap no longer reads the desktop.
        case over
        case failed(IdleTimeError)
    }

    /// Holds the nap by the desktop's watches (``IdleHold/notice(_:at:phase:)``): nothing is read
    /// on a schedule, only where a watch cannot tell (at the start, and once after each release).
    private func hold(_ hold: inout IdleHold<BootInstant>, _ step: inout IdleHold<BootInstant>.Step, by watches: any IdleWatches,
                      bell: EventBell, phase: @Sendable () -> Phase, send: @Sendable (NapCommand) -> Void) -> WatchEnd {
        do throws(IdleTimeError) {
            try watches.watchIdle(after: idleAfter)
            var watchingInput = false
            while true {
                guard IdleHold<BootInstant>.reads(in: phase()) else { return .over }
                // Released: the next input is watched for before the idle time is read, so no
                // input falls between the two.
                if !hold.holding && !watchingInput {
                    try watches.watchActive()
                    watchingInput = true
                }
                if let next = step.next, next <= BootInstant.now {
                    step = hold.observeWatched(idle: try watches.idleTime(), at: BootInstant.now, phase: phase())
                } else {
                    guard let notice = try watches.next(orRung: bell) else { return .over }
                    if notice == .active { watchingInput = false }
                    step = hold.notice(notice, at: BootInstant.now, phase: phase())
                }
                Self.deliver(step.events, send)
            }
        } catch {
            // Once the nap has started nothing is read: a failure then is no one's concern.
            return IdleHold<BootInstant>.reads(in: phase()) ? .failed(error) : .over
        }
    }

    /// Holds the nap by reading the idle time when ``IdleHold`` says.
    private func poll(_ hold: inout IdleHold<BootInstant>, _ step: IdleHold<BootInstant>.Step, phase: @Sendable () -> Phase,
                      send: @Sendable (NapCommand) -> Void, note: @Sendable (SessionNote) -> Void) {
        var step = step
        var failingSince: BootInstant?
        while let next = step.next {
            guard sleep(until: next) else { return }
            // Once the nap has started nothing is read: input changes nothing any more.
            guard IdleHold<BootInstant>.reads(in: phase()) else { return }
            let idle: Duration
            do throws(IdleTimeError) {
                idle = try reader.idleTime()
                failingSince = nil
            } catch {
                let now = BootInstant.now
                let since = failingSince ?? now
                failingSince = since
                guard since.duration(to: now) >= giveUpAfter else {
                    step = IdleHold.Step(events: [], next: BootInstant.now.advanced(by: IdleHold<BootInstant>.releasePoll))
                    continue
                }
                if hold.holding, [.ready, .holding].contains(phase()) {
                    // Nothing says when the person last used the machine: the nap is held by
                    // nothing from here (the history's time to fall asleep ends at this release).
                    note(.hold(what: .none, message: "the desktop's idle time cannot be read any more (\(error.problem)): the release starts now"))
                    send(.release)
                } else {
                    note(.warning("the desktop's idle time cannot be read any more (\(error.problem)): input no longer starts the release over"))
                }
                return
            }
            step = hold.observe(idle: idle, at: BootInstant.now, phase: phase())
            Self.deliver(step.events, send)
        }
    }

    /// Stops reading at once.
    func stop() {
        stopped.withLock { $0 = true }
        bell?.ring()
    }

    /// Sleeps until `instant` on the boot-time clock, or until ``stop()``: false when stopped.
    private func sleep(until instant: BootInstant) -> Bool {
        if let bell {
            while !stopped.withLock({ $0 }), BootInstant.now < instant { _ = bell.wait(until: instant) }
            return !stopped.withLock { $0 }
        }
        return SystemThread.sleep(until: instant, unless: { self.stopped.withLock { $0 } })
    }

    private static func deliver(_ events: [SessionEvent], _ send: @Sendable (NapCommand) -> Void) {
        for event in events {
            switch event {
            case .holdBegan: send(.hold)
            case .holdEnded: send(.release)
            default: break
            }
        }
    }
}

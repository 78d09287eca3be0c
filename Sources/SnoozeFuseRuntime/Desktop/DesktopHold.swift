import SnoozeFuseCore
import SnoozeFuseSystem

/// `--hold desktop`: holds the nap while the person uses the machine, on a thread of its own.
///
/// It reads the desktop's idle time from one ``IdleTimeReader`` when ``IdleHold`` says (at the
/// start, when the idle time could first reach `--idle-after`, twice a second while released,
/// never once the nap has started) and hands the hold and release to the nap. Every read is
/// bounded by its source; a failed read is tried again twice a second, and when reads have failed
/// for `giveUpAfter` while the nap is held, the hold ends there (the release timer starts: when in
/// doubt, ring) and the nap says why.
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
    /// `warn` what went wrong. When no thread can be started the nap is held and released at once
    /// (its release timer starts: a nap nothing holds must still ring) and false is returned.
    @discardableResult
    func start(phase: @escaping @Sendable () -> Phase, send: @escaping @Sendable (NapCommand) -> Void,
               warn: @escaping @Sendable (String) -> Void) -> Bool {
        let reader = reader, idleAfter = idleAfter
        let started = SystemThread.start(named: "snoozefuse-idle") { [self] in
            // The source's connection (an X server's) goes with the thread.
            defer { reader.finish() }
            var hold = IdleHold<BootInstant>(idleAfter: idleAfter)
            var step = hold.begin(at: BootInstant.now)
            Self.deliver(step.events, send)
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
                        warn("the desktop's idle time cannot be read any more (\(error.problem)): the release starts now")
                        send(.release)
                    } else {
                        warn("the desktop's idle time cannot be read any more (\(error.problem)): input no longer starts the release over")
                    }
                    return
                }
                step = hold.observe(idle: idle, at: BootInstant.now, phase: phase())
                Self.deliver(step.events, send)
            }
        }
        if !started {
            warn("the desktop hold cannot start (the system refused a thread): the release starts now")
            send(.hold)
            send(.release)
        }
        return started
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

public import SnoozeFuseAudio
public import SnoozeFuseCore

/// Runs a ``SinkWatch`` for one sound-server output against a clock (`now`: the nap's loop clock;
/// a manual clock in tests), as ``SessionDriver`` runs a session: it feeds the watch what the output
/// sees, stamped with the clock's time, says what the watch reports (the plan's `report`), keeps
/// what the alarm changed in the plan's ledger (put back whoever plays the alarm last), and hands
/// the rest (streams, levels, reading again) back to the output, which performs it.
///
/// Called on the output's own audio thread (``SinkWatching``): the output alone owns the
/// connection to the server, and what it is asked to do happens there, at once, in order. The
/// watch's deadline is the output's to keep: it asks ``timeToDeadline`` before each wait.
public final class SinkWatchDriver<Instant: InstantProtocol>: SinkWatching where Instant.Duration == Duration {
    private var watch: SinkWatch<Instant>
    private let now: () -> Instant
    private let plan: SinkPlan

    /// The driver for an output of `plan`, seeded with what the alarm already changed (its
    /// ledger), its time read from `now`.
    public init(plan: SinkPlan, now: @escaping () -> Instant) {
        self.plan = plan
        self.now = now
        watch = SinkWatch(settings: SinkWatch.Settings(route: plan.route, floorPercent: plan.floorPercent, level: plan.level,
                                                      earlierFixes: plan.ledger.all))
    }

    public func handle(_ event: SinkEvent) -> [SinkEffect] {
        var server: [SinkEffect] = []
        for effect in watch.handle(event, at: now()) {
            switch effect {
            case .report(let report):
                plan.report(report)
            case .fixes(let all):
                plan.ledger.replace(with: all)
                plan.ledgerChanged(all)
            default:
                server.append(effect)
            }
        }
        return server
    }

    public var timeToDeadline: Duration? {
        watch.nextDeadline.map { now().duration(to: $0) }
    }
}

public import SnoozeFuseCore

/// An alarm output that also pulses emitters with the alarm pattern of SPEC §2 while it sounds:
/// one pulse at once, then every second a pair 0.5 s apart. The sound starts first and never waits
/// for an emitter (each pulse is handed to its sink without blocking). The pattern sleeps on the
/// session's clock, at instants counted from the start, so it never drifts.
public actor PulsingAlarmOutput<C: Clock>: AlarmOutput where C.Duration == Duration {
    let base: any AlarmOutput
    let sinks: [any PulseSink]
    let clock: C
    let executor: (any TaskExecutor)?
    private var pattern: Task<Void, Never>?

    public init(base: any AlarmOutput, sinks: [any PulseSink], clock: C, executor: (any TaskExecutor)?) {
        self.base = base
        self.sinks = sinks
        self.clock = clock
        self.executor = executor
    }

    public func arm(reason: AlarmReason, after delay: Duration) async {
        await base.arm(reason: reason, after: delay)
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        let report = await base.start(reason: reason)
        pattern?.cancel()
        let sinks = sinks, clock = clock
        pattern = Task(executorPreference: executor) {
            let start = clock.now
            var cycleStart = Duration.zero
            while !Task.isCancelled {
                // Ten seconds of the pattern at a time (offsets keep counting from the start).
                for pulse in PulsePattern.alarm(until: cycleStart + .seconds(10)) where pulse.offset >= cycleStart {
                    guard (try? await clock.sleep(until: start.advanced(by: pulse.offset), tolerance: nil)) != nil else { return }
                    for sink in sinks { sink.emit(intensity: pulse.intensity, duration: pulse.duration) }
                }
                cycleStart += .seconds(10)
            }
        }
        return report
    }

    public func stop() async {
        pattern?.cancel()
        pattern = nil
        for sink in sinks { sink.cancel() }
        await base.stop()
    }
}

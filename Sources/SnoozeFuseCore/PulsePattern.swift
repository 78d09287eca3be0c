/// The pulse patterns of SPEC §2, as offsets from the start of a cycle.
public enum PulsePattern {
    public struct Pulse: Sendable, Hashable {
        public var offset: Duration
        public var intensity: Double
        public var duration: Duration
    }

    /// While holding: a beat every 60/BPM s, then a lighter one (0.7) at 30 % of the interval.
    /// BPM is clamped to 40…120.
    public static func heartbeat(bpm: Int) -> (interval: Duration, pulses: [Pulse]) {
        let bpm = min(max(bpm, 40), 120)
        let interval = Duration.seconds(60) / bpm
        return (interval, [
            Pulse(offset: .zero, intensity: 1, duration: .milliseconds(120)),
            Pulse(offset: interval * 0.3, intensity: 0.7, duration: .milliseconds(90)),
        ])
    }

    /// While ringing: one pulse at once, then every second a pair of pulses 0.5 s apart. Returns
    /// the pulses whose offsets from the start of ringing are below `until`.
    public static func alarm(until: Duration) -> [Pulse] {
        var pulses = [Pulse(offset: .zero, intensity: 1, duration: .milliseconds(250))]
        var second = Duration.seconds(1)
        while second < until {
            pulses.append(Pulse(offset: second, intensity: 1, duration: .milliseconds(200)))
            if second + .milliseconds(500) < until {
                pulses.append(Pulse(offset: second + .milliseconds(500), intensity: 1, duration: .milliseconds(200)))
            }
            second += .seconds(1)
        }
        return pulses
    }
}

public import SnoozeFuseCore

/// Something that sounds the alarm. The driver calls `start` at the deadline and measures the
/// lateness once it returns, so `start` returns as soon as the first signal has been written.
public protocol AlarmOutput: Sendable {
    /// Starts sounding and returns once the first signal is out.
    func start(reason: AlarmReason) async -> AlarmStartReport
    /// Stops sounding; returns once it is silent.
    func stop() async
}

/// What the alarm started on.
public struct AlarmStartReport: Sendable, Equatable {
    /// The output that sounds it, e.g. `terminal bell`.
    public var output: String
    /// Outputs that were tried first and failed, each with the reason, in order.
    public var fallbacks: [String]

    public init(output: String, fallbacks: [String] = []) {
        self.output = output
        self.fallbacks = fallbacks
    }
}

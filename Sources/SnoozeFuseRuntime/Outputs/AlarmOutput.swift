public import SnoozeFuseCore

/// Something that sounds the alarm.
///
/// The driver arms the output shortly before the alarm is due (`arm`), so an output can open its
/// device, prepare its first buffer and start by itself at the due instant on a precise timer of
/// its own; then, at the deadline, the driver calls `start`, which starts sounding if arming did
/// not (or could not) and returns once the first signal is out.
public protocol AlarmOutput: Sendable {
    /// Prepares to sound `reason`'s alarm `delay` from now, and may start by itself then.
    /// Optional: outputs with nothing to prepare ignore it.
    func arm(reason: AlarmReason, after delay: Duration) async
    /// Starts sounding (if arming has not already) and returns once the first signal is out.
    func start(reason: AlarmReason) async -> AlarmStartReport
    /// Stops sounding, or disarms; returns once it is silent.
    func stop() async
}

extension AlarmOutput {
    public func arm(reason: AlarmReason, after delay: Duration) async {}
}

/// What the alarm started on.
public struct AlarmStartReport: Sendable, Equatable {
    /// The output that sounds it, e.g. `terminal bell` or `ALSA default`.
    public var output: String
    /// Outputs that were tried first and failed, each with the reason, in order.
    public var fallbacks: [String]
    /// How late the first signal was, measured by the output itself when it started on its own
    /// timer; `nil` lets the driver measure it when `start` returns.
    public var lateness: Duration?
    /// The scheduling of the thread that writes the alarm (``ThreadPriority``'s description), for
    /// outputs with an audio thread of their own.
    public var audioThread: String?

    public init(output: String, fallbacks: [String] = [], lateness: Duration? = nil, audioThread: String? = nil) {
        self.output = output
        self.fallbacks = fallbacks
        self.lateness = lateness
        self.audioThread = audioThread
    }
}

public import SnoozeFuseCore
import SnoozeFuseAudio
public import SnoozeFuseSystem

/// Wraps an alarm output and sets the system's playback volume (ALSA mixer: `Master`, else `PCM`,
/// else `Speaker`) while it sounds, restoring the old volume when it stops.
///
/// The mixer never holds up the alarm or its end: it is opened and set on a thread of its own
/// (a ``BoundedCall``) after the sound has started, and nothing waits for that. A mixer behind a
/// sound server that does not answer (a stopped PulseAudio) can hang in alsa-lib for ever; then,
/// after ``answerLimit``, a note says the alarm sounds at the volume it has, and if the mixer
/// answers after the alarm has stopped, the old volume goes straight back. Restoring waits at most
/// ``restoreLimit``. When the mixer cannot be opened (no sound card, no server) a note says so and
/// the alarm sounds anyway. Each note is said once. With `percent == nil` it only forwards.
public actor SystemVolumeDuringAlarm: AlarmOutput {
    public static let answerLimit = Duration.seconds(1)
    public static let restoreLimit = Duration.milliseconds(500)

    private let percent: Int?
    /// The mixer it attached to, once it has: that of the device the alarm plays on
    /// (``MixerOfDevice``), the default card's for the terminal bell.
    private var mixer = "the mixer 'default'"
    private let base: any AlarmOutput
    private let notes: OnceNotes
    /// The setting of the volume, running or done (its value: the mixer to restore, if it was set).
    private var setting: BoundedCall<MixerHandle?>?
    private let loop: EventLoop

    /// `loop`: where its tasks run and what its waits are timed on (pass the nap's).
    public init(percent: Int?, base: any AlarmOutput, loop: EventLoop, note: @escaping @Sendable (String) -> Void) {
        self.percent = percent
        self.loop = loop
        self.base = base
        notes = OnceNotes(note)
    }

    public func arm(reason: AlarmReason, after delay: Duration) async {
        await base.arm(reason: reason, after: delay)
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        // Sound first: the mixer must never delay the alarm.
        let report = await base.start(reason: reason)
        // On the sound server's own output the sinks' floor does this (and puts the person's
        // values back): the mixer would restore what it read after that fix, over them.
        if let percent, setting == nil, report.output != AlarmChain<BootInstant>.soundServer {
            let device = report.output.hasPrefix("ALSA ") ? String(report.output.dropFirst(5)) : "default"
            // Named for the notes now; the configuration is read on the mixer's thread (it can hang).
            mixer = device == "default" ? "the mixer 'default'" : "the mixer of \(device)"
            let notes = notes, clock = loop.clock, described = mixer
            let started = BoundedCall.start(named: "snoozefuse-mixer") { () -> MixerHandle? in
                guard let name = MixerOfDevice.name(for: device) else {
                    notes.say("--system-volume skipped: \(device) has no mixer (it writes to no speaker)")
                    return nil
                }
                do throws(ALSAError) {
                    let mixer = try SystemMixerVolume(card: name)
                    try mixer.set(percent: percent)
                    return MixerHandle(mixer)
                } catch {
                    notes.say("--system-volume skipped: the ALSA mixer is not available (\(error.code)\(error.detail.map { ", \($0)" } ?? ""))")
                    return nil
                }
            }
            setting = started
            Task(executorPreference: loop) {
                if await started.value(waitingAtMost: Self.answerLimit, on: clock) == nil {
                    notes.say("--system-volume waits: \(described) has not answered within \(Self.answerLimit.compactDescription) (its sound server may be stopped or hung); the alarm sounds at the volume it has")
                }
            }
        }
        return report
    }

    public func stop() async {
        await base.stop()
        guard let setting else { return }
        self.setting = nil
        // Restores as soon as the mixer was set: now, or when a mixer that hung answers at last.
        let restoring = BoundedCall.start(named: "snoozefuse-mixer") { setting.wait()?.restore() }
        if await restoring.value(waitingAtMost: Self.restoreLimit, on: loop.clock) == nil {
            notes.say("--system-volume: \(mixer) did not answer within \(Self.restoreLimit.compactDescription) when the alarm stopped; the volume is restored if it answers later, and is otherwise left at \(percent ?? 0) %")
        }
    }
}

/// The mixer, handed from the thread that opened it to the one that restores it: only one of them
/// touches it at a time (the hand-over goes through the setting's `BoundedCall`).
private final class MixerHandle: @unchecked Sendable {
    private let mixer: SystemMixerVolume
    init(_ mixer: SystemMixerVolume) { self.mixer = mixer }
    func restore() { mixer.restore() }
}

/// Passes each distinct note on once.
private final class OnceNotes: Sendable {
    private let said = Locked(Set<String>())
    private let note: @Sendable (String) -> Void
    init(_ note: @escaping @Sendable (String) -> Void) { self.note = note }

    func say(_ text: String) {
        if said.withLock({ $0.insert(text).inserted }) { note(text) }
    }
}

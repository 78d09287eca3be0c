public import SnoozeFuseCore
import SnoozeFuseAudio

/// Wraps an alarm output and sets the system's playback volume (ALSA mixer: `Master`, else `PCM`,
/// else `Speaker`) while it sounds, restoring the old volume when it stops.
///
/// When the mixer cannot be opened (no sound card, no server) it says so once through `note` and the
/// alarm sounds anyway. With `percent == nil` it only forwards.
public actor SystemVolumeDuringAlarm: AlarmOutput {
    private let percent: Int?
    private let base: any AlarmOutput
    private let note: @Sendable (String) -> Void
    private var mixer: SystemMixerVolume?
    private var noted = false

    public init(percent: Int?, base: any AlarmOutput, note: @escaping @Sendable (String) -> Void) {
        self.percent = percent
        self.base = base
        self.note = note
    }

    public func arm(reason: AlarmReason, after delay: Duration) async {
        await base.arm(reason: reason, after: delay)
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        // Sound first: the mixer must never delay the alarm.
        let report = await base.start(reason: reason)
        applyVolume()
        return report
    }

    public func stop() async {
        await base.stop()
        mixer?.restore()
        mixer = nil
    }

    private func applyVolume() {
        guard let percent, mixer == nil else { return }
        do throws(ALSAError) {
            let opened = try SystemMixerVolume()
            try opened.set(percent: percent)
            mixer = opened
        } catch {
            guard !noted else { return }
            noted = true
            note("--system-volume skipped: the ALSA mixer is not available (\(error.code)\(error.detail.map { ", \($0)" } ?? ""))")
        }
    }
}

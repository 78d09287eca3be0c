public import SnoozeFuseAudio
import SnoozeFuseCore
public import SnoozeFuseSystem

/// Something that plays while the sleeper drifts off and naps, and is silent, its device closed,
/// before the alarm is armed.
///
/// The driver calls `play(for:)` when the release starts, with the time left until shortly before
/// the alarm would be armed (`SessionDriver.sleepSoundGap`); the sound fades out by itself by then.
/// It calls `stop()` when the session leaves `releasing`/`napping` (a new hold, a cancel) and once
/// more before arming the alarm, so the alarm never competes with it for the device.
public protocol SleepSoundOutput: Sendable {
    /// Starts playing (or starts over) so that the sound has faded out and its device is closed
    /// `duration` from now.
    func play(for duration: Duration) async
    /// Stops at once and returns once the device is closed (or after a short time limit, when the
    /// device does not answer).
    func stop() async
}

/// A sleep sound on an ALSA device: a sound (in practice a `noise` plugin's stream) faded in over
/// `settings.gain.fadeIn`, played at `settings.gain.volume`, and faded out over up to
/// `longestFadeOut` (a third of the play time when that is shorter) so it ends in silence.
///
/// It never makes the nap late: opening the device runs on a thread of its own, as the alarm's does
/// (`startPlayback`), `stop()` waits at most `closeLimit` for the audio thread, and
/// when the sound fails the sleeper naps in silence rather than to the alarm's fallback tone. Each
/// problem is reported once through `onNotice`.
public final class AudioSleepSound: SleepSoundOutput {
    /// The PCM it plays on.
    public let device: String
    /// The sound and its gain; `duration`, `gain.fadeOut` and `onSourceFailure` are set per play.
    public let settings: AlarmPlaybackSettings
    public let longestFadeOut: Duration
    /// How long `stop()` waits for the audio thread to close the device.
    public let closeLimit: Duration
    private let loop: EventLoop
    private let onNotice: @Sendable (String) -> Void
    private let state = Locked(State())

    private struct State {
        /// Counts plays and stops, so an open that finishes after a newer request is dropped.
        var generation = 0
        var playback: AlarmPlayback?
    }

    /// `loop`: where its tasks run and what the bounded close is timed on (pass the nap's).
    public init(device: String, settings: AlarmPlaybackSettings, longestFadeOut: Duration = .seconds(20),
                closeLimit: Duration = .seconds(1), loop: EventLoop,
                onNotice: @escaping @Sendable (String) -> Void) {
        self.device = device
        self.loop = loop
        self.settings = settings
        self.longestFadeOut = longestFadeOut
        self.closeLimit = closeLimit
        self.onNotice = onNotice
    }

    public func play(for duration: Duration) async {
        await stop()
        // Less than a second of sleep sound would only be a blip before the alarm.
        guard duration >= .seconds(1) else { return }
        let generation = state.withLock { $0.generation }
        var settings = self.settings
        settings.duration = duration
        settings.gain.fadeIn = min(settings.gain.fadeIn, duration / 3)
        settings.gain.fadeOut = min(longestFadeOut, duration / 3)
        settings.onSourceFailure = .silence
        // Real time is for an alarm's deadline; a sleep sound has none to keep.
        settings.realtimePriority = nil
        let (events, feed) = AsyncStream.makeStream(of: PCMPlaybackThread.Event.self)
        let opening = startPlayback(device: device, settings: settings, due: nil, position: .zero, events: feed)
        Task(executorPreference: loop) { [onNotice] in
            for await case .ended(.failed(let error)) in events {
                onNotice("the sleep sound stopped: \(error); napping in silence")
            }
        }
        Task(executorPreference: loop) { [self] in
            switch await opening.value() {
            case .success(let playback):
                let current = state.withLock { state -> Bool in
                    guard state.generation == generation else { return false }
                    state.playback = playback
                    return true
                }
                // Stopped (or restarted) while the device was opening: close it at once.
                if !current { playback.requestStop() }
            case .failure(let error):
                onNotice("no sleep sound: \(error); napping in silence")
            }
        }
    }

    public func stop() async {
        let playback = state.withLock { state -> AlarmPlayback? in
            state.generation += 1
            defer { state.playback = nil }
            return state.playback
        }
        guard let playback else { return }
        // A device that blocks its close (a stalled sound server) is left to close on its own
        // rather than hold up the alarm.
        if await playback.stop(waitingAtMost: closeLimit, on: loop.clock) == nil {
            onNotice("the sleep sound's device \(device) did not close within \(closeLimit.compactDescription); the alarm goes on without waiting for it")
        }
    }
}

import Foundation
import SnoozeFuseAudio
import Synchronization

/// Waits for `task`'s value, but at most `limit`: returns `nil` when the time ran out first. The
/// task is not cancelled; it goes on, and its value can still be awaited later.
///
/// For calls into alsa-lib that can hang on a device or sound server that does not answer (an
/// open, or the `drop` and `close` of a stalled PCM): the caller moves on and leaves them behind.
func value<T: Sendable>(of task: Task<T, Never>, waitingAtMost limit: Duration) async -> T? {
    let race = FirstValue<T?>()
    return await withCheckedContinuation { continuation in
        race.install(continuation)
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            race.resolve(with: nil)
        }
        Task {
            race.resolve(with: await task.value)
            timer.cancel()
        }
    }
}

/// Resumes one continuation with whichever value arrives first; later values are dropped.
private final class FirstValue<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func install(_ waiter: CheckedContinuation<T, Never>) {
        continuation.withLock { $0 = waiter }
    }

    func resolve(with value: T) {
        let waiter = continuation.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }
        waiter?.resume(returning: value)
    }
}

/// Runs `body` on a new thread named `name` (never on Swift's shared pool, which a call that blocks
/// would hold up) and gives its value as a task's, to be awaited, or abandoned with ``value(of:waitingAtMost:)``.
func onItsOwnThread<T: Sendable>(named name: String, _ body: @escaping @Sendable () -> T) -> Task<T, Never> {
    Task {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.start()
        }
    }
}

/// Opens `device` and starts playback on it (an alarm, or a sleep sound) from a thread of its own: `snd_pcm_open` can hang
/// for ever, and it must hold up neither the nap's executor nor the chain.
func startPlaybackOnItsOwnThread(
    device: String, settings: AlarmPlaybackSettings, due: ContinuousClock.Instant?, position: Duration,
    events: AsyncStream<PCMPlaybackThread.Event>.Continuation
) -> Task<Result<AlarmPlayback, AlarmPlayerError>, Never> {
    onItsOwnThread(named: "snoozefuse-open") {
        do throws(AlarmPlayerError) {
            let playback = try AlarmPlayer.start(device: device, settings: settings, due: due, from: position) { event in
                events.yield(event)
                if case .ended = event { events.finish() }
            }
            return .success(playback)
        } catch {
            events.finish()
            return .failure(error)
        }
    }
}

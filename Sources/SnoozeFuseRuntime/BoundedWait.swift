import Foundation
import SnoozeFuseAudio
import Synchronization

/// Where an alarm's own tasks run and what they sleep on (the watchdog, reconnects, the waits for
/// opens and closes, the audio thread's events). Never Swift's global executor or its timers: the
/// first job there starts libdispatch's worker pool, whose monitor then wakes the process every
/// second for as long as it lives, and every timer firing wakes a worker; while an alarm rings that
/// was a tenth of its CPU. Pass the nap's executor and clock.
public struct AlarmScheduling: Sendable {
    /// What sleeps and time limits are timed on (one thread per clock: share it).
    public let clock: BootTimeClock
    /// The executor the alarm's tasks prefer (`nil`: Swift's global one, for tests).
    public let executor: (any TaskExecutor)?

    public init(clock: BootTimeClock = BootTimeClock(), executor: (any TaskExecutor)? = nil) {
        self.clock = clock
        self.executor = executor
    }

    /// A new task on `executor`.
    @discardableResult
    func task<T: Sendable>(_ operation: sending @escaping @isolated(any) () async -> T) -> Task<T, Never> {
        Task(executorPreference: executor, operation: operation)
    }
}

/// Waits for `task`'s value, but at most `limit`: returns `nil` when the time ran out first. The
/// task is not cancelled; it goes on, and its value can still be awaited later.
///
/// For calls into alsa-lib that can hang on a device or sound server that does not answer (an
/// open, or the `drop` and `close` of a stalled PCM): the caller moves on and leaves them behind.
func value<T: Sendable>(of task: Task<T, Never>, waitingAtMost limit: Duration, scheduling: AlarmScheduling) async -> T? {
    let race = FirstValue<T?>()
    return await withCheckedContinuation { continuation in
        race.install(continuation)
        let timer = scheduling.task {
            guard (try? await scheduling.clock.sleep(for: limit)) != nil else { return }
            race.resolve(with: nil)
        }
        scheduling.task {
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
/// would hold up) and gives its value as a task's, to be awaited, or abandoned with ``value(of:waitingAtMost:scheduling:)``.
func onItsOwnThread<T: Sendable>(named name: String, scheduling: AlarmScheduling,
                                  _ body: @escaping @Sendable () -> T) -> Task<T, Never> {
    scheduling.task {
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
    events: AsyncStream<PCMPlaybackThread.Event>.Continuation, scheduling: AlarmScheduling
) -> Task<Result<AlarmPlayback, AlarmPlayerError>, Never> {
    onItsOwnThread(named: "snoozefuse-open", scheduling: scheduling) {
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

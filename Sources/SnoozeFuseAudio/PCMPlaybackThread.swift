import CALSA
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Produces the frames the audio thread writes. It lives on the audio thread: `render` is only ever
/// called there, one call at a time, so it needs no locking. It should not allocate, lock or do I/O.
public protocol PCMRenderSource {
    /// What it renders: `Float` in [-1, 1] (the default; converted when the device took S16), or
    /// `Int16` for a device that took S16 (`PCMOutput.write(_:)` requires that format).
    associatedtype Sample: PCMSample = Float

    /// Fills the start of `buffer` with interleaved samples (`format.channels` per frame) and returns
    /// how many frames it wrote: at most `buffer.count / format.channels` (one period). Returning 0
    /// ends the stream: the queued frames play out (drain) and the thread finishes.
    mutating func render(into buffer: UnsafeMutableBufferPointer<Sample>, format: PCMStreamFormat) -> Int
}

/// A `PCMRenderSource` made from a closure (which runs on the audio thread).
public struct PCMRenderClosure: PCMRenderSource {
    private let body: (UnsafeMutableBufferPointer<Float>, PCMStreamFormat) -> Int

    public init(_ body: @escaping (UnsafeMutableBufferPointer<Float>, PCMStreamFormat) -> Int) {
        self.body = body
    }

    public func render(into buffer: UnsafeMutableBufferPointer<Float>, format: PCMStreamFormat) -> Int {
        body(buffer, format)
    }
}

@available(*, unavailable)
extension PCMRenderClosure: Sendable {}

/// Plays a `PCMRenderSource` into a `PCMOutput` from a dedicated OS thread (a pthread, never a thread
/// of Swift's cooperative pool: blocking writes there would starve every other task).
///
/// The thread renders one period at a time and writes it blocking. `requestStop()` / `stop()` are
/// noticed before the next write, so within about one period (250 ms with the default
/// configuration); the queued frames are then discarded at once (`drop`). When the source returns 0
/// frames the queued frames play out (`drain`). Either way the thread closes the PCM before it reports
/// its outcome, so a `file:` PCM's file is complete when `outcome()` returns.
///
/// Errors never get printed: they end the thread and arrive as `Outcome.failed` (from `outcome()` /
/// `stop()`) and as the `ended` event.
public final class PCMPlaybackThread: Sendable {
    /// How the thread ended.
    public enum Outcome: Sendable, Hashable {
        /// The source ended (returned 0 frames) and every frame played out.
        case finished
        /// Stopped on request; queued frames were dropped.
        case stopped
        /// An ALSA call failed (with `error.isDeviceLost` when the device must be reopened).
        case failed(ALSAError)
    }

    /// What the audio thread reports while it runs. Delivered on the audio thread: handlers must be
    /// quick and must not block (hand the value over to a task, a stream or a lock-protected slot).
    public enum Event: Sendable, Hashable {
        /// The first write returned: its frames are queued in the device. `at` is on the same clock as
        /// the session's deadlines, for measuring alarm lateness.
        case firstWrite(at: ContinuousClock.Instant, frames: Int)
        /// An underrun or suspend was recovered (`snd_pcm_recover`); `total` counts them so far.
        case recovered(total: Int)
        /// The thread is done and the PCM is closed.
        case ended(Outcome)
    }

    /// The PCM name.
    public let device: String
    /// What the device agreed to.
    public let format: PCMStreamFormat

    private let stopRequested = Atomic<Bool>(false)
    /// When the last write returned, in nanoseconds after `epoch`; -1 before the first one.
    private let lastWriteNanoseconds = Atomic<Int64>(-1)
    private let epoch = ContinuousClock.now
    private let state: Mutex<State>
    private let onEvent: @Sendable (Event) -> Void

    private enum Phase {
        case idle(Payload)
        case running
        case ended(Outcome)
    }

    private struct State {
        var phase: Phase
        var waiters: [CheckedContinuation<Outcome, Never>] = []
    }

    /// The non-Sendable output and source on their way to the audio thread.
    ///
    /// `@unchecked Sendable` is safe because ownership moves, it is never shared: both values arrive
    /// as `sending` (the caller keeps no reference it may use), the payload sits in the `Mutex` until
    /// `start()` takes it out exactly once, and from then on only the audio thread touches them.
    private final class Payload: @unchecked Sendable {
        let output: PCMOutput
        let source: any PCMRenderSource

        init(output: PCMOutput, source: any PCMRenderSource) {
            self.output = output
            self.source = source
        }
    }

    /// Takes ownership of `output` and `source`. Nothing happens until `start()`.
    /// - Parameter onEvent: called on the audio thread (see `Event`).
    public init(output: sending PCMOutput, source: sending some PCMRenderSource,
                onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
        device = output.device
        format = output.format
        self.onEvent = onEvent
        state = Mutex(State(phase: .idle(Payload(output: output, source: source))))
    }

    /// Starts the audio thread. Calling it again, or after `stop()`, does nothing.
    /// Throws (operation `.startThread`) only when the OS refuses to create a thread.
    public func start() throws(ALSAError) {
        let payload: Payload? = state.withLock { state in
            guard case .idle(let payload) = state.phase else { return nil }
            state.phase = .running
            return payload
        }
        guard let payload else { return }

        let context = Unmanaged.passRetained(ThreadContext(owner: self, payload: payload)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let context = Unmanaged<ThreadContext>.fromOpaque(raw).takeRetainedValue()
            context.owner.run(context.payload)
            return nil
        }, context)
        if status != 0 {
            Unmanaged<ThreadContext>.fromOpaque(context).release()
            let error = ALSAError(device: device, operation: .startThread, code: ALSAErrno(rawValue: status))
            finish(.failed(error), payload: payload)
            throw error
        }
        pthread_detach(thread)
    }

    /// Asks the thread to stop (drop) and returns at once; safe from any thread or task.
    /// Before `start()`, it releases the PCM and the outcome becomes `.stopped`.
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        let payload: Payload? = state.withLock { state in
            guard case .idle(let payload) = state.phase else { return nil }
            state.phase = .running // finish(_:) below moves it to `.ended`
            return payload
        }
        if let payload {
            finish(.stopped, payload: payload)
        }
    }

    /// When the device last accepted frames (the last write returned), or `nil` before the first
    /// write. A blocking write returns at least once a period while the device plays, so a value that
    /// stops moving while the thread runs means the device (or the sound server behind it) stalled.
    public var lastWrite: ContinuousClock.Instant? {
        let nanoseconds = lastWriteNanoseconds.load(ordering: .relaxed)
        return nanoseconds < 0 ? nil : epoch.advanced(by: .nanoseconds(nanoseconds))
    }

    /// Stops (see `requestStop()`) and waits until the thread has dropped and closed the PCM.
    ///
    /// A device that stalls inside alsa-lib (a blocked write, or a `drop` or `close` that waits for a
    /// sound server that does not answer) keeps this waiting until it answers; callers that must not
    /// wait that long bound the wait and leave the thread behind (`requestStop()` is enough to end
    /// it when the device comes back).
    public func stop() async -> Outcome {
        requestStop()
        return await outcome()
    }

    /// Waits for the thread to end and returns how it ended (at once if it already has). Waiting is
    /// not cancellable; call `stop()` to end it early.
    public func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let done: Outcome? = state.withLock { state in
                if case .ended(let outcome) = state.phase { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let done {
                continuation.resume(returning: done)
            }
        }
    }

    // MARK: - The audio thread

    /// Carries the owner and its payload through `pthread_create`'s untyped argument.
    ///
    /// `@unchecked Sendable` is safe because it only bundles two `Sendable`-safe references for the
    /// single hand-over to the new thread; nothing reads it on the creating thread afterwards.
    private final class ThreadContext: @unchecked Sendable {
        let owner: PCMPlaybackThread
        let payload: Payload

        init(owner: PCMPlaybackThread, payload: Payload) {
            self.owner = owner
            self.payload = payload
        }
    }

    private func run(_ payload: Payload) {
        setThreadName()
        var source = payload.source
        finish(play(&source, to: payload.output), payload: payload)
    }

    /// The render–write loop, for the source's own sample type.
    private func play<Source: PCMRenderSource>(_ source: inout Source, to output: PCMOutput) -> Outcome {
        let channels = max(format.channels, 1)
        let buffer = UnsafeMutableBufferPointer<Source.Sample>.allocate(capacity: max(format.periodFrames, 1) * channels)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: .zero)

        var outcome = Outcome.stopped
        var reportedRecoveries = 0
        var firstWriteDone = false
        do throws(ALSAError) {
            while true {
                if stopRequested.load(ordering: .acquiring) {
                    try? output.drop()
                    outcome = .stopped
                    break
                }
                let frames = min(source.render(into: buffer, format: format), buffer.count / channels)
                if frames <= 0 {
                    try output.drain()
                    outcome = .finished
                    break
                }
                try Source.Sample.write(UnsafeBufferPointer(rebasing: buffer[0 ..< frames * channels]), to: output)
                let (seconds, attoseconds) = epoch.duration(to: .now).components
                lastWriteNanoseconds.store(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, ordering: .relaxed)
                if !firstWriteDone {
                    firstWriteDone = true
                    onEvent(.firstWrite(at: .now, frames: frames))
                }
                if output.recoveries != reportedRecoveries {
                    reportedRecoveries = output.recoveries
                    onEvent(.recovered(total: reportedRecoveries))
                }
            }
        } catch {
            outcome = .failed(error)
        }
        return outcome
    }

    /// Closes the PCM, reports `ended`, then records the outcome and wakes the waiters (in that order,
    /// so whoever sees the outcome has also seen every event).
    private func finish(_ outcome: Outcome, payload: Payload) {
        payload.output.close()
        onEvent(.ended(outcome))
        let waiters = state.withLock { state in
            state.phase = .ended(outcome)
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters {
            waiter.resume(returning: outcome)
        }
    }

    private func setThreadName() {
        _ = snoozefuse_name_current_thread("snoozefuse-pcm")
    }
}

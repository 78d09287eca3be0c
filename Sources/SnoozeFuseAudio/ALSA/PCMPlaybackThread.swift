import CALSA
public import SnoozeFuseSystem
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
/// A device without a clock (ALSA's `file` and `null` PCMs, or one behind another plugin that takes
/// the first write at once) is paced on CLOCK_BOOTTIME from the first write: never more than
/// ``pacingLead`` ahead of real time, so a 3 s alarm records 3 s of audio (not hours) and costs
/// almost no CPU.
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
        case firstWrite(at: BootInstant, frames: Int)
        /// What the thread runs at until its first write, when it asked for real-time scheduling:
        /// reported once, before anything is written. After the first write it runs at the
        /// ordinary policy.
        case priority(ThreadPriority)
        /// An underrun or suspend was recovered (`snd_pcm_recover`); `total` counts them so far.
        case recovered(total: Int)
        /// What plays changed on this device (the sound failed or stayed silent): why, and what
        /// plays instead. Reported by the render chain, once.
        case soundSwitched(String)
        /// The thread is done and the PCM is closed.
        case ended(Outcome)
    }

    /// The PCM name.
    public let device: String
    /// What the device agreed to.
    public let format: PCMStreamFormat
    /// How far ahead of real time a device without a clock is written.
    public static let pacingLead = Duration.milliseconds(50)

    private let stopRequested = Atomic<Bool>(false)
    /// When the last write returned, in nanoseconds after `epoch`; -1 before the first one.
    private let lastWriteNanoseconds = Atomic<Int64>(-1)
    private let epoch = BootInstant.now
    private let state: Locked<Phase>
    private let onEvent: @Sendable (Event) -> Void
    private let realtimePriority: Int32?

    private enum Phase {
        case idle(Payload)
        /// `start()` took the payload and is creating the thread.
        case starting
        /// The audio thread is a bounded call: its value is the outcome.
        case running(BoundedCall<Outcome>)
        case ended(Outcome)
    }

    /// The non-Sendable output and source on their way to the audio thread.
    ///
    /// `@unchecked Sendable` is safe because ownership moves, it is never shared: both values arrive
    /// as `sending` (the caller keeps no reference it may use), the payload sits in the `Locked` until
    /// `start()` takes it out exactly once, and from then on only the audio thread touches them.
    private final class Payload: @unchecked Sendable {
        let output: any PCMWritable
        let source: any PCMRenderSource

        init(output: any PCMWritable, source: any PCMRenderSource) {
            self.output = output
            self.source = source
        }
    }

    /// Takes ownership of `output` and `source`. Nothing happens until `start()`.
    /// - Parameters:
    ///   - realtimePriority: when given, the thread asks for SCHED_FIFO at this priority until its
    ///     first write (and reports what it got as `.priority`); it plays either way.
    ///   - onEvent: called on the audio thread (see `Event`).
    public init(output: sending any PCMWritable, source: sending some PCMRenderSource, realtimePriority: Int32? = nil,
                onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
        device = output.device
        format = output.format
        self.realtimePriority = realtimePriority
        self.onEvent = onEvent
        state = Locked(.idle(Payload(output: output, source: source)))
    }

    /// Starts the audio thread. Calling it again, or after `stop()`, does nothing.
    /// Throws (operation `.startThread`) only when the OS refuses to create a thread.
    public func start() throws(ALSAError) {
        let payload: Payload? = state.withLock { phase in
            guard case .idle(let payload) = phase else { return nil }
            phase = .starting
            return payload
        }
        guard let payload else { return }
        let call = BoundedCall.start(named: "snoozefuse-pcm") { [self] in
            var source = payload.source
            let outcome = play(&source, to: payload.output)
            finish(outcome, payload: payload)
            return outcome
        }
        guard call.threadStarted else {
            let error = ALSAError(device: device, operation: .startThread, code: ALSAErrno(rawValue: EAGAIN))
            finish(.failed(error), payload: payload)
            state.withLock { $0 = .ended(.failed(error)) }
            throw error
        }
        state.withLock { $0 = .running(call) }
    }

    /// Asks the thread to stop (drop) and returns at once; safe from any thread or task.
    /// Before `start()`, it releases the PCM and the outcome becomes `.stopped`.
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        let payload: Payload? = state.withLock { phase in
            guard case .idle(let payload) = phase else { return nil }
            phase = .ended(.stopped)
            return payload
        }
        if let payload {
            finish(.stopped, payload: payload)
        }
    }

    /// When the device last accepted frames (the last write returned), or `nil` before the first
    /// write. A blocking write returns at least once a period while the device plays, so a value that
    /// stops moving while the thread runs means the device (or the sound server behind it) stalled.
    public var lastWrite: BootInstant? {
        let nanoseconds = lastWriteNanoseconds.load(ordering: .relaxed)
        return nanoseconds < 0 ? nil : epoch.advanced(by: .nanoseconds(nanoseconds))
    }

    /// Stops (see `requestStop()`) and waits until the thread has dropped and closed the PCM.
    ///
    /// A device that stalls inside alsa-lib (a blocked write, or a `drop` or `close` that waits for a
    /// sound server that does not answer) keeps this waiting until it answers; callers that must not
    /// wait that long use ``stop(waitingAtMost:on:)`` and leave the thread behind (`requestStop()`
    /// is enough to end it when the device comes back).
    public func stop() async -> Outcome {
        requestStop()
        return await outcome()
    }

    /// Stops and waits at most `limit` on `clock` for the device to close; `nil` when it did not.
    public func stop(waitingAtMost limit: Duration, on clock: BootClock) async -> Outcome? {
        requestStop()
        guard let call = await runningCall() else { return await outcome() }
        return await call.value(waitingAtMost: limit, on: clock)
    }

    /// Waits for the thread to end and returns how it ended (at once if it already has). Waiting is
    /// not cancellable; call `stop()` to end it early. A thread that was never started has nothing
    /// to wait for: it is stopped.
    public func outcome() async -> Outcome {
        if let call = await runningCall() { return await call.value() }
        switch state.withLock({ $0 }) {
        case .ended(let outcome): return outcome
        default:
            requestStop()
            return .stopped
        }
    }

    /// The audio thread's call once `start()` has made it (it may be making it right now).
    private func runningCall() async -> BoundedCall<Outcome>? {
        while true {
            switch state.withLock({ $0 }) {
            case .running(let call): return call
            case .starting: await Task.yield()
            case .idle, .ended: return nil
            }
        }
    }

    // MARK: - The audio thread

    /// The render–write loop, for the source's own sample type.
    private func play<Source: PCMRenderSource>(_ source: inout Source, to output: any PCMWritable) -> Outcome {
        var realtime = false
        if let realtimePriority {
            let priority = SystemThread.makeCurrentRealtime(priority: realtimePriority)
            realtime = priority.isRealtime
            onEvent(.priority(priority))
        }
        let channels = max(format.channels, 1)
        let buffer = UnsafeMutableBufferPointer<Source.Sample>.allocate(capacity: max(format.periodFrames, 1) * channels)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: .zero)

        var outcome = Outcome.stopped
        var reportedRecoveries = 0
        var firstWriteDone = false
        /// When frame 0 went out, on a device that must be paced.
        var pacedFrom: BootInstant?
        var written: Int64 = 0
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
                if let pacedFrom {
                    // These frames end `written + frames` into the stream: write them when real time
                    // is at most `pacingLead` short of that.
                    let due = pacedFrom.advanced(by: format.duration(ofFrames: written + Int64(frames)) - Self.pacingLead)
                    if !SystemThread.sleep(until: due, unless: { stopRequested.load(ordering: .acquiring) }) { continue }
                }
                try Source.Sample.write(UnsafeBufferPointer(rebasing: buffer[0 ..< frames * channels]), to: output)
                written += Int64(frames)
                let (seconds, attoseconds) = epoch.duration(to: BootInstant.now).components
                lastWriteNanoseconds.store(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, ordering: .relaxed)
                if !firstWriteDone {
                    firstWriteDone = true
                    let at = BootInstant.now
                    // Real time was for the deadline. From here the device's buffer carries the
                    // stream, and a real-time writer would preempt the sound server's client
                    // thread (libpulse's mainloop) while it holds the stream's lock: measured, 2-6
                    // times the CPU per second of audio.
                    if realtime { SystemThread.makeCurrentOrdinary() }
                    if output.consumesInstantly || output.queueIsEmpty { pacedFrom = at }
                    onEvent(.firstWrite(at: at, frames: frames))
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

    /// Closes the PCM and reports `ended` (before the outcome becomes the thread's value, so whoever
    /// sees the outcome has also seen every event).
    private func finish(_ outcome: Outcome, payload: Payload) {
        payload.output.close()
        onEvent(.ended(outcome))
    }
}

import SnoozeFusePluginABI
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `ID[:key=value,...]`, as `--source` and `--emitter` take it.
public struct PluginSpec: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    /// The configuration string handed to the plugin (`""` when none).
    public var config: String

    public init(id: String, config: String = "") {
        self.id = id
        self.config = config
    }

    /// Parses `ID` or `ID:config`; nil when the id part is empty.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty else { return nil }
        id = String(first)
        config = parts.count > 1 ? String(parts[1]) : ""
    }

    public var description: String { config.isEmpty ? id : "\(id):\(config)" }
}

/// Room for a plugin's message (rule 4 of the header): 512 bytes, NUL-terminated.
let messageCapacity = 512

func withMessageBuffer<T>(_ body: (UnsafeMutablePointer<CChar>, UInt32) -> T) -> (T, String) {
    let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: messageCapacity)
    defer { buffer.deallocate() }
    buffer.initialize(repeating: 0, count: messageCapacity)
    let result = body(buffer, UInt32(messageCapacity))
    buffer[messageCapacity - 1] = 0
    return (result, String(cString: buffer))
}

/// A plugin's sound source instance, in Swift.
///
/// Not `Sendable`: one thread at a time. `activate` and `deactivate` on the control thread, then
/// `render` on the audio thread only (never concurrently). `render` never allocates or locks:
/// it calls the plugin, then sanitizes what it wrote (NaN or infinity → silence and the source is
/// disabled for good; everything else clamped to [-1, 1]).
public final class SoundSource {
    public let plugin: LoadedPlugin
    private let instance: UnsafeMutablePointer<snoozefuse_sound_source>
    public private(set) var isActive = false
    public private(set) var channels = 0
    public private(set) var maxFrames = 0
    /// Why rendering stopped for good, if it did (the output is silence from then on).
    public private(set) var disabledReason: PluginError?

    /// Creates an instance. - Throws: `PluginError` naming the plugin file.
    public init(plugin: LoadedPlugin) throws(PluginError) {
        func fail(_ reason: PluginError.Reason) -> PluginError { PluginError(path: plugin.info.path, reason: reason) }
        guard plugin.info.kinds.contains(.soundSource), let create = plugin.descriptor.pointee.create_sound_source else {
            throw fail(.wrongKind(id: plugin.info.id, wanted: "sound source"))
        }
        var out: UnsafeMutablePointer<snoozefuse_sound_source>?
        let (status, message) = withMessageBuffer { create(plugin.host.pointer, &out, $0, $1) }
        guard status == SNOOZEFUSE_STATUS_OK else { throw fail(.callFailed(call: "create_sound_source", status: status, message: message)) }
        guard let out else { throw fail(.missingField("the sound source create_sound_source returned")) }
        let expected = MemoryLayout<snoozefuse_sound_source>.size
        guard Int(out.pointee.struct_size) >= expected else {
            throw fail(.structTooSmall(name: "snoozefuse_sound_source", size: out.pointee.struct_size, expected: expected))
        }
        for (field, present) in [("activate", out.pointee.activate != nil), ("render", out.pointee.render != nil),
                                 ("deactivate", out.pointee.deactivate != nil), ("destroy", out.pointee.destroy != nil)] where !present {
            // Without destroy the instance cannot be freed: leak it rather than guess.
            if out.pointee.destroy != nil { out.pointee.destroy(out) }
            throw fail(.missingField("snoozefuse_sound_source.\(field)"))
        }
        self.plugin = plugin
        instance = out
    }

    deinit {
        if isActive { instance.pointee.deactivate(instance) }
        instance.pointee.destroy(instance)
    }

    /// Prepares to render. - Throws: `callFailed` with the plugin's message.
    public func activate(sampleRate: Int, channels: Int, maxFrames: Int, config: String) throws(PluginError) {
        if isActive { deactivate() }
        let (status, message) = withMessageBuffer { buffer, capacity in
            instance.pointee.activate(instance, UInt32(sampleRate), UInt32(channels), UInt32(maxFrames), config, buffer, capacity)
        }
        guard status == SNOOZEFUSE_STATUS_OK else {
            throw PluginError(path: plugin.info.path, reason: .callFailed(call: "activate", status: status, message: message))
        }
        isActive = true
        self.channels = channels
        self.maxFrames = maxFrames
        disabledReason = nil
    }

    public func deactivate() {
        guard isActive else { return }
        instance.pointee.deactivate(instance)
        isActive = false
    }

    /// Renders `buffer.count / channels` frames (at most `maxFrames` per plugin call). Returns nil
    /// when the frames are the plugin's; otherwise the buffer holds silence and the error says why
    /// (the source is disabled from then on). `hooks`, when given, run right before and right after
    /// each call into the plugin (the validator watches what the plugin's render does between them).
    public func render(into buffer: UnsafeMutableBufferPointer<Float>, hooks: RenderCallHooks? = nil) -> PluginError? {
        guard disabledReason == nil, isActive, channels > 0, let base = buffer.baseAddress else {
            buffer.update(repeating: 0)
            return disabledReason ?? PluginError(path: plugin.info.path, reason: .callFailed(call: "render", status: 4, message: "the source is not active"))
        }
        let frames = buffer.count / channels
        var done = 0
        while done < frames {
            let count = min(frames - done, maxFrames)
            hooks?.enter()
            let status = instance.pointee.render(instance, base + done * channels, UInt32(count))
            hooks?.leave()
            if status != SNOOZEFUSE_STATUS_OK {
                return disable(buffer, .callFailed(call: "render", status: status, message: ""))
            }
            done += count
        }
        for index in 0 ..< frames * channels {
            let value = base[index]
            if !value.isFinite { return disable(buffer, .renderNotFinite) }
            base[index] = min(max(value, -1), 1)
        }
        return nil
    }

    private func disable(_ buffer: UnsafeMutableBufferPointer<Float>, _ reason: PluginError.Reason) -> PluginError {
        buffer.update(repeating: 0)
        let error = PluginError(path: plugin.info.path, reason: reason)
        disabledReason = error
        return error
    }
}

/// Two C functions run around each call of a plugin's `render` (see ``SoundSource/render(into:hooks:)``):
/// C functions, so that nothing of Swift's (no reference counting, no allocation) runs between them
/// and the plugin.
public struct RenderCallHooks: Sendable {
    public let enter: @convention(c) () -> Void
    public let leave: @convention(c) () -> Void

    public init(enter: @convention(c) () -> Void, leave: @convention(c) () -> Void) {
        self.enter = enter
        self.leave = leave
    }
}

/// A plugin's pulse emitter instance, driven from a thread of its own so that no caller ever waits
/// for the plugin: `emit` hands the pulse over and returns; a pulse that arrives while the plugin is
/// still busy with the last one is dropped (and counted).
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition`'s lock; the C instance is
/// only touched on the worker thread (emit, cancel, and finally destroy after the last call).
public final class PulseEmitter: @unchecked Sendable {
    public enum Outcome: Sendable, Hashable {
        /// Handed to the worker.
        case accepted
        /// The plugin was still busy; this pulse was dropped.
        case droppedBusy
        /// The emitter was closed.
        case closed
    }

    public let plugin: LoadedPlugin
    private let instance: UnsafeMutablePointer<snoozefuse_pulse_emitter>
    private let condition = EmitterCondition()
    private var pending: (intensity: Float, milliseconds: UInt32, tag: UInt64)?
    /// Told the tag of each pulse the plugin finished (on the pulse thread).
    private let onPulseDone: (@Sendable (UInt64) -> Void)?
    private var pendingCancel = false
    private var busy = false
    private var closing = false
    private var destroyed = false
    private var completed = 0
    private var dropped = 0
    private var errors: [PluginError] = []

    /// Creates an instance configured by `config` and starts its pulse thread; `onPulseDone` is
    /// told the tag of each pulse once the plugin's `emit` has returned.
    public init(plugin: LoadedPlugin, config: String, onPulseDone: (@Sendable (UInt64) -> Void)? = nil) throws(PluginError) {
        func fail(_ reason: PluginError.Reason) -> PluginError { PluginError(path: plugin.info.path, reason: reason) }
        guard plugin.info.kinds.contains(.pulseEmitter), let create = plugin.descriptor.pointee.create_pulse_emitter else {
            throw fail(.wrongKind(id: plugin.info.id, wanted: "pulse emitter"))
        }
        var out: UnsafeMutablePointer<snoozefuse_pulse_emitter>?
        let (status, message) = withMessageBuffer { create(plugin.host.pointer, config, &out, $0, $1) }
        guard status == SNOOZEFUSE_STATUS_OK else { throw fail(.callFailed(call: "create_pulse_emitter", status: status, message: message)) }
        guard let out else { throw fail(.missingField("the emitter create_pulse_emitter returned")) }
        let expected = MemoryLayout<snoozefuse_pulse_emitter>.size
        guard Int(out.pointee.struct_size) >= expected else {
            throw fail(.structTooSmall(name: "snoozefuse_pulse_emitter", size: out.pointee.struct_size, expected: expected))
        }
        for (field, present) in [("emit", out.pointee.emit != nil), ("cancel", out.pointee.cancel != nil),
                                 ("destroy", out.pointee.destroy != nil)] where !present {
            if out.pointee.destroy != nil { out.pointee.destroy(out) }
            throw fail(.missingField("snoozefuse_pulse_emitter.\(field)"))
        }
        self.plugin = plugin
        self.onPulseDone = onPulseDone
        instance = out
        SystemThread.start(named: "snoozefuse-pulse") { [self] in work() }
    }

    /// Hands a pulse to the plugin's thread; never waits for the plugin. `tag` comes back through
    /// `onPulseDone` when the plugin has finished it.
    @discardableResult
    public func emit(intensity: Double, duration: Duration, tag: UInt64 = 0) -> Outcome {
        let milliseconds = UInt32(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        condition.lock()
        defer { condition.unlock() }
        guard !closing else { return .closed }
        guard !busy, pending == nil else {
            dropped += 1
            return .droppedBusy
        }
        pending = (Float(min(max(intensity, 0), 1)), milliseconds, tag)
        condition.broadcast()
        return .accepted
    }

    /// Asks the plugin to stop a pulse in progress (after its current call returns).
    public func cancel() {
        condition.lock()
        pending = nil
        pendingCancel = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the thread after its current call; the instance is destroyed on that thread.
    public func close() {
        condition.lock()
        closing = true
        pending = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Closes the emitter and waits at most `limit` for its thread to have destroyed the instance
    /// (a plugin's destroy may put a device back as it found it). Returns whether it did.
    @discardableResult
    public func close(waitingAtMost limit: Duration) -> Bool {
        close()
        return BoundedCall.start(named: "snoozefuse-close") { () -> Bool in
            self.condition.lock()
            defer { self.condition.unlock() }
            while !self.destroyed { self.condition.wait() }
            return true
        }.wait(atMost: limit) != nil
    }

    /// Whether the plugin is inside a call now.
    public var isBusy: Bool { condition.withLock { busy || pending != nil } }
    /// Pulses the plugin finished.
    public var completedPulses: Int { condition.withLock { completed } }
    /// Pulses dropped because the plugin was busy.
    public var droppedPulses: Int { condition.withLock { dropped } }
    /// Errors the plugin returned, oldest first.
    public var reportedErrors: [PluginError] { condition.withLock { errors } }

    /// Waits at most `limit` (on the boot-time clock) for the plugin to finish what it was handed
    /// (a check's limit; the alarm path never calls this). Returns whether it finished.
    public func waitUntilIdle(within limit: Duration) -> Bool {
        BoundedCall.start(named: "snoozefuse-idle") { self.waitUntilIdle() }.wait(atMost: limit) != nil
    }

    /// Waits until the plugin has finished everything handed to it, however long that takes.
    public func waitUntilIdle() {
        condition.lock()
        defer { condition.unlock() }
        while busy || pending != nil || pendingCancel { condition.wait() }
    }

    private func work() {
        condition.lock()
        while true {
            while pending == nil && !pendingCancel && !closing { condition.wait() }
            if closing && pending == nil { break }
            let pulse = pending
            let cancelling = pendingCancel
            pending = nil
            pendingCancel = false
            busy = true
            condition.unlock()
            var failure: PluginError?
            if cancelling { instance.pointee.cancel(instance) }
            if let pulse {
                let (status, message) = withMessageBuffer { buffer, capacity in
                    instance.pointee.emit(instance, pulse.intensity, pulse.milliseconds, buffer, capacity)
                }
                if status != SNOOZEFUSE_STATUS_OK {
                    failure = PluginError(path: plugin.info.path, reason: .callFailed(call: "emit", status: status, message: message))
                }
            }
            if let pulse { onPulseDone?(pulse.tag) }
            condition.lock()
            busy = false
            if pulse != nil { completed += 1 }
            if let failure {
                if errors.count < 32 { errors.append(failure) }
                plugin.host.logger.warning("plugin \(failure)")
            }
            condition.broadcast()
        }
        condition.unlock()
        instance.pointee.cancel(instance)
        instance.pointee.destroy(instance)
        condition.lock()
        destroyed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A POSIX mutex and condition variable, which is what Foundation's `NSCondition` is on Linux: the
/// emitter's fields are guarded by the mutex, and its threads sleep on the condition until another
/// changes them (the pulse thread for work, waiters for the plugin to be idle or destroyed).
///
/// `@unchecked Sendable`: the mutex and the condition are made to be used from any thread; they
/// are touched only through pthread calls, and live as long as this object.
private final class EmitterCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Sleeps until the condition is broadcast (or wakes spuriously: wait in a loop); the lock
    /// must be held, and is held again on return.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every thread waiting on the condition.
    func broadcast() { pthread_cond_broadcast(condition) }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

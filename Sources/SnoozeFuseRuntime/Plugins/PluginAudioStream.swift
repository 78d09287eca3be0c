import Glibc
public import SnoozeFuseAudio
public import SnoozeFusePluginHost
import SnoozeFuseCore
import SnoozeFuseSystem
import Synchronization

// Adapters from plugin instances (each in a child process of the plugin host program) to what the
// alarm plays: a sound source's frames become an `AlarmSoundSource`.

/// The frames a sound source's child process writes, read on the audio thread without blocking.
///
/// Float32 frames at `sampleRate`, `channels` interleaved. When the pipe is momentarily empty the
/// gap is filled with the built-in tone (never silence), and the frames filled are counted; when
/// the child has ended (crashed, killed, or refused to render), `read` comes up short and reports
/// `failure`, so the alarm renderer switches to its built-in tone for good.
///
/// Whether the child still keeps up is a ``SourceLiveness`` fed by every read: a gap that lasts
/// its budget means render has stopped (it sleeps, loops or blocks), and the stream ends, so the
/// built-in tone takes over for good. The audio thread only records and rings an eventfd (no
/// allocation, no lock); a monitor thread, asleep on that eventfd otherwise, kills a hung child
/// (reported as hung by the child's reaper) and reports the frames filled while a gap lasts
/// (through `report`, at most once a second).
///
/// `@unchecked Sendable`: the reading state is touched only by the reader that holds `inUse`
/// (one audio thread at a time; a second reader gets the built-in tone instead of waiting).
public final class PluginAudioStream: @unchecked Sendable {
    public let child: PluginChildProcess
    public let sampleRate: Int
    public let channels: Int
    /// What it is in reports (`sound-source`, `sleep-sound`).
    public let role: String
    private let inUse = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)
    private let monitor: StreamMonitor
    private var liveness: SourceLiveness<BootInstant>
    private var carry: [UInt8] = [0, 0, 0, 0]
    private var carryCount = 0
    /// What fills frames the child has not written in time: the built-in tone for an alarm,
    /// silence for a sleep sound.
    public let underrunFill: SourceFailureFallback

    /// A stream of `child`'s frames; `role` names it in reports (`sound-source`), `report` gets
    /// them (the frames filled while the child was behind).
    public init(child: PluginChildProcess, sampleRate: Int, channels: Int, underrunFill: SourceFailureFallback = .builtInTone,
                role: String = "sound-source", report: (@Sendable (String) -> Void)? = nil) {
        self.child = child
        self.sampleRate = sampleRate
        self.channels = channels
        self.role = role
        self.underrunFill = underrunFill
        let liveness = SourceLiveness<BootInstant>(started: .now)
        self.liveness = liveness
        monitor = StreamMonitor(child: child, sampleRate: sampleRate, role: role,
                                filler: underrunFill == .silence ? "silence" : "the built-in tone", report: report)
    }

    deinit {
        monitor.stop()
    }

    /// Stops the monitor (the nap is over); reading still works.
    public func close() {
        monitor.stop()
    }

    /// Whether the child's stream has ended (from then on only the fallback plays).
    public var hasEnded: Bool { ended.load(ordering: .relaxed) }
    /// Frames filled with the fallback (`underrunFill`) because the child had not written them yet.
    public var underruns: Int { monitor.filled.load(ordering: .relaxed) }
    /// Whether the child was found hung (it was then killed).
    public var wasHung: Bool { monitor.hungAfter.load(ordering: .relaxed) > 0 }

    /// A source for one playback (see `AlarmSound.custom`).
    public func makeSource() -> any AlarmSoundSource {
        PluginStreamSource(stream: self)
    }

    public var customSound: CustomAlarmSound {
        CustomAlarmSound(name: "plugin \(child.info.id)") { _ in self.makeSource() }
    }

    fileprivate enum ReadResult { case frames(Int), ended }

    /// Reads up to `buffer.count` floats; returns whole frames read, or `.ended`.
    fileprivate func read(into buffer: UnsafeMutableBufferPointer<Float>, fallback: inout AlarmToneSource) -> ReadResult {
        guard !ended.load(ordering: .relaxed) else { return .ended }
        guard inUse.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return .frames(fill(buffer, from: 0, with: &fallback))
        }
        defer { inUse.store(false, ordering: .releasing) }
        let raw = UnsafeMutableRawBufferPointer(buffer)
        let wanted = raw.count - raw.count % (4 * channels)
        var filled = 0
        for index in 0 ..< carryCount { raw[index] = carry[index] }
        filled = carryCount
        carryCount = 0
        var sawEnd = false
        while filled < wanted {
            let count = Glibc.read(child.descriptor, raw.baseAddress! + filled, wanted - filled)
            if count > 0 {
                filled += count
            } else if count == 0 {
                sawEnd = true
                break
            } else if errno == EINTR {
                continue
            } else {
                if errno != EAGAIN && errno != EWOULDBLOCK { sawEnd = true }
                break
            }
        }
        let frameBytes = 4 * channels
        let whole = filled - filled % frameBytes
        if sawEnd {
            ended.store(true, ordering: .relaxed)
            sanitize(buffer, count: whole / 4)
            return .frames(whole / frameBytes)
        }
        // Keep a partial float (never more than a frame's worth of bytes is left over).
        carryCount = min(filled - whole, 4)
        for index in 0 ..< carryCount { carry[index] = raw[whole + index] }
        if !sanitize(buffer, count: whole / 4) {
            ended.store(true, ordering: .relaxed)
            return .frames(0)
        }
        let frames = whole / frameBytes
        let total = buffer.count / channels
        switch liveness.read(complete: frames >= total, at: .now) {
        case .onTime:
            return .frames(frames)
        case .starting:
            return .frames(fill(buffer, from: frames, with: &fallback))
        case .behind(let began):
            monitor.filled.add(total - frames, ordering: .relaxed)
            if began { monitor.ring() }
            return .frames(fill(buffer, from: frames, with: &fallback))
        case .hung(let waited):
            // The monitor kills it (and its reaper reports it); from now on only the fallback plays.
            ended.store(true, ordering: .relaxed)
            monitor.hungAfter.store(max(1, Int(waited.components.seconds * 1000 + waited.components.attoseconds / 1_000_000_000_000_000)), ordering: .relaxed)
            monitor.ring()
            return .ended
        }
    }

    /// Clamps to [-1, 1]; false (and the stream is treated as failed) on NaN or infinity.
    @discardableResult
    private func sanitize(_ buffer: UnsafeMutableBufferPointer<Float>, count: Int) -> Bool {
        for index in 0 ..< count {
            let value = buffer[index]
            guard value.isFinite else { return false }
            buffer[index] = min(max(value, -1), 1)
        }
        return true
    }

    /// Fills frames `from…` with the built-in tone (mono, copied to every channel) or silence
    /// (`underrunFill`); returns all frames.
    private func fill(_ buffer: UnsafeMutableBufferPointer<Float>, from frame: Int, with tone: inout AlarmToneSource) -> Int {
        let total = buffer.count / channels
        if underrunFill == .silence {
            UnsafeMutableBufferPointer(rebasing: buffer[(frame * channels) ..< (total * channels)]).update(repeating: 0)
            return total
        }
        var index = frame
        var one: Float = 0
        while index < total {
            withUnsafeMutablePointer(to: &one) { pointer in
                _ = tone.read(into: UnsafeMutableBufferPointer(start: pointer, count: 1))
            }
            for channel in 0 ..< channels { buffer[index * channels + channel] = one }
            index += 1
        }
        return total
    }
}

/// The non-audio half of a ``PluginAudioStream``: a thread asleep on an eventfd that the audio
/// thread rings when a gap begins or the child is hung. It kills a hung child, and while a gap
/// lasts it reports the frames filled once a second.
final class StreamMonitor: Sendable {
    let child: PluginChildProcess
    let sampleRate: Int
    let role: String
    let filler: String
    let report: (@Sendable (String) -> Void)?
    /// Frames filled in all (written by the audio thread).
    let filled = Atomic<Int>(0)
    /// How long the gap had lasted when the child was found hung, in ms (0 while it is not).
    let hungAfter = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let bell: EventBell?

    init(child: PluginChildProcess, sampleRate: Int, role: String, filler: String,
         report: (@Sendable (String) -> Void)?) {
        self.child = child
        self.sampleRate = sampleRate
        self.role = role
        self.filler = filler
        self.report = report
        bell = EventBell()
        if let bell { SystemThread.start(named: "snoozefuse-watch") { [self] in run(bell) } }
    }

    /// Wakes the monitor (one write to an eventfd: fine on the audio thread).
    func ring() {
        bell?.ring()
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        ring()
    }

    private func seconds(_ frames: Int) -> String { String(format: "%.2f s", Double(frames) / Double(sampleRate)) }

    private func run(_ bell: EventBell) {
        var reported = 0
        while !stopping.load(ordering: .acquiring) {
            _ = bell.wait(until: nil)
            // A gap began: say what was filled every second while it lasts.
            while !stopping.load(ordering: .acquiring) {
                let hung = hungAfter.load(ordering: .relaxed)
                if hung > 0 {
                    child.killAsHung("it produced no audio for \(Duration.milliseconds(hung).millisecondsDescription) while it was needed (\(filled.load(ordering: .relaxed)) frames, \(seconds(filled.load(ordering: .relaxed))), were filled with \(filler))")
                    return
                }
                if bell.wait(until: .now.advanced(by: .seconds(1))) { continue }
                let total = filled.load(ordering: .relaxed)
                guard total > reported else { break }
                report?("\(role) plugin \(child.info.id) fell behind: \(filler) filled \(total - reported) frames (\(seconds(total - reported))) it had not rendered in time; \(total) frames (\(seconds(total))) in all")
                reported = total
            }
        }
    }
}

/// One playback's view of a `PluginAudioStream`.
final class PluginStreamSource: AlarmSoundSource {
    let stream: PluginAudioStream
    var sampleRate: Int { stream.sampleRate }
    var channels: Int { stream.channels }
    private(set) var failure: SoundFileError?
    /// A plugin is not a file: no advice about exporting it again.
    var failureText: String? { failure.map { _ in "\(stream.role) plugin \(stream.child.info.id) stopped producing audio:" } }
    private var tone: AlarmToneSource

    init(stream: PluginAudioStream) {
        self.stream = stream
        tone = AlarmToneSource(sampleRate: stream.sampleRate)
    }

    func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        switch stream.read(into: buffer, fallback: &tone) {
        case .frames(let count):
            if count < buffer.count / channels { markFailed() }
            return count
        case .ended:
            markFailed()
            return 0
        }
    }

    private func markFailed() {
        guard failure == nil else { return }
        // Only the first time, and not on the audio thread's hot path: this allocates once.
        failure = SoundFileError(operation: .read, path: "plugin \(stream.child.info.id)", code: .noError,
                                 message: "the plugin's process stopped producing audio")
    }

    func seek(to position: Duration) {}
}


import Glibc
public import SnoozeFuseAudio
public import SnoozeFusePluginHost
import Synchronization

// Adapters from plugin instances (each in a child process of the plugin host program) to what the
// alarm plays: a sound source's frames become an `AlarmSoundSource`.

/// The frames a sound source's child process writes, read on the audio thread without blocking.
///
/// Float32 frames at `sampleRate`, `channels` interleaved. When the pipe is momentarily empty the
/// gap is filled with the built-in tone (never silence); when the child has ended (crashed,
/// killed, or refused to render), `read` comes up short and reports `failure`, so the alarm
/// renderer switches to its built-in tone for good.
///
/// `@unchecked Sendable`: the reading state is touched only by the reader that holds `inUse`
/// (one audio thread at a time; a second reader gets the built-in tone instead of waiting).
public final class PluginAudioStream: @unchecked Sendable {
    public let child: PluginChildProcess
    public let sampleRate: Int
    public let channels: Int
    private let inUse = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)
    private let underrunFrames = Atomic<Int>(0)
    private var carry: [UInt8] = [0, 0, 0, 0]
    private var carryCount = 0
    /// What fills frames the child has not written in time: the built-in tone for an alarm,
    /// silence for a sleep sound.
    public let underrunFill: SourceFailureFallback

    public init(child: PluginChildProcess, sampleRate: Int, channels: Int, underrunFill: SourceFailureFallback = .builtInTone) {
        self.child = child
        self.sampleRate = sampleRate
        self.channels = channels
        self.underrunFill = underrunFill
    }

    /// Whether the child's stream has ended (from then on only the fallback plays).
    public var hasEnded: Bool { ended.load(ordering: .relaxed) }
    /// Frames filled with the fallback (`underrunFill`) because the child had not written them yet.
    public var underruns: Int { underrunFrames.load(ordering: .relaxed) }

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
        if frames < total {
            underrunFrames.add(total - frames, ordering: .relaxed)
            return .frames(fill(buffer, from: frames, with: &fallback))
        }
        return .frames(frames)
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

/// One playback's view of a `PluginAudioStream`.
final class PluginStreamSource: AlarmSoundSource {
    let stream: PluginAudioStream
    var sampleRate: Int { stream.sampleRate }
    var channels: Int { stream.channels }
    private(set) var failure: SoundFileError?
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


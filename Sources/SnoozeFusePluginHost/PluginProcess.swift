public import SnoozeFuseAudio
import Synchronization
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A plugin instance running in a child process of its own: the crash-isolation boundary.
///
/// The child is this program re-executed with a hidden subcommand (`plugins serve …`), started in
/// its own process group (so Ctrl-C on the terminal reaches only the parent). The parent keeps one
/// end of a pipe: a sound source's child writes float frames into it; an emitter's child reads pulse
/// commands from it. When the parent exits, the pipe breaks and the child ends. A thread of the
/// parent waits for the child (`waitpid`, no polling) and reports how it ended.
public final class PluginChildProcess: Sendable {
    public enum Role: Sendable { case readsFromChild, writesToChild }

    public let pid: Int32
    public let info: PluginInfo
    /// The parent's end of the pipe (non-blocking).
    let descriptor: Int32
    private final class Ending: Sendable {
        let text = Mutex<String?>(nil)
    }

    private let ending = Ending()

    /// How the child ended (`killed by signal 11 (Segmentation fault)`), or nil while it runs.
    public var exitDescription: String? { ending.text.withLock { $0 } }

    /// Starts `executable arguments…`; `onExit` is called once, on the waiting thread, when it ends.
    public init(executable: String, arguments: [String], info: PluginInfo, role: Role,
                pipeCapacity: Int32 = 1 << 20,
                onExit: @escaping @Sendable (PluginInfo, String) -> Void) throws(PluginError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw PluginError(path: info.path, reason: .processEnded("cannot create a pipe: \(String(cString: strerror(errno)))"))
        }
        let (parentEnd, childEnd, childFD) = role == .readsFromChild ? (ends[0], ends[1], Int32(1)) : (ends[1], ends[0], Int32(0))
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        // F_SETPIPE_SZ (Linux, 1031; not exported by Glibc's module): room for seconds of audio.
        _ = fcntl(parentEnd, 1031, pipeCapacity)
        _ = fcntl(parentEnd, F_SETFL, fcntl(parentEnd, F_GETFL) | O_NONBLOCK)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, childEnd, childFD)
        if role == .readsFromChild {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var spawned: pid_t = 0
        let status = posix_spawn(&spawned, executable, &actions, &attributes, argv, environ)
        close(childEnd)
        guard status == 0 else {
            close(parentEnd)
            throw PluginError(path: info.path, reason: .processEnded("cannot start \(executable): \(String(cString: strerror(status)))"))
        }
        let pid = spawned
        self.pid = pid
        self.info = info
        descriptor = parentEnd
        let thread = Thread { [ending] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let text = Self.describe(status)
            ending.text.withLock { $0 = text }
            onExit(info, text)
        }
        thread.name = "snoozefuse-plugin-wait"
        thread.start()
    }

    deinit {
        close(descriptor)
    }

    /// Kills the child (tests and shutdown).
    public func kill(signal: Int32 = 9 /* SIGKILL */) {
        _ = Glibc.kill(pid, signal)
    }

    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
        let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
        return "killed by signal \(signal) (\(name))"
    }
}

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

/// The parent's side of an emitter's child process: pulses are written to its pipe without
/// blocking; when the pipe is full (the child is busy) the pulse is dropped.
public final class PluginProcessEmitter: Sendable {
    public let child: PluginChildProcess
    private let broken = Atomic<Bool>(false)

    public init(child: PluginChildProcess) {
        self.child = child
    }

    /// Hands a pulse over; never waits. Returns false when it was dropped or the child has ended.
    @discardableResult
    public func emit(intensity: Double, duration: Duration) -> Bool {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return send("e \(String(format: "%.3f", min(max(intensity, 0), 1))) \(max(milliseconds, 0))\n")
    }

    @discardableResult
    public func cancel() -> Bool { send("c\n") }

    private func send(_ line: String) -> Bool {
        guard !broken.load(ordering: .relaxed) else { return false }
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(child.descriptor, $0.baseAddress, $0.count) }
        if written == bytes.count { return true }
        if written < 0 && errno == EPIPE { broken.store(true, ordering: .relaxed) }
        return false
    }
}

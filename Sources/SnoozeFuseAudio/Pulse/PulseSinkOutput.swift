import CPulse
public import SnoozeFuseCore
public import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#endif

/// What the alarm asks of the sound server: where to play, how loud at least, and what to tell.
public struct SinkPlan: Sendable {
    public var route: AlarmRoute
    /// The volume no sink the alarm plays on stays below, in percent; nil leaves volume and mute
    /// alone (`--no-fix-volume`).
    public var floorPercent: Int?
    /// What the alarm changed (shared by every output of one alarm, and kept in the live state, so
    /// the person's own values are put back whoever plays the alarm last).
    public var ledger: SinkFixLedger
    /// Called on the audio thread for each thing worth telling: be quick, do not block.
    public var report: @Sendable (SinkReport) -> Void
    /// Called on the audio thread with everything to put back, each time that changes (for the
    /// live state): be quick, do not block.
    public var ledgerChanged: @Sendable ([SinkLevelFix]) -> Void
    /// How loud the alarm is meant to reach the sinks: what a monitor carries far below it is no
    /// proof (``AlarmLoudness/proofFloor(volume:fade:sinkVolumePercent:)``). Nil: no floor (a
    /// test tone of `doctor --listen`).
    public var level: AlarmLevel?

    public init(route: AlarmRoute = .wake, floorPercent: Int? = SinkLevelFix.defaultFloorPercent, ledger: SinkFixLedger = SinkFixLedger(),
                ledgerChanged: @escaping @Sendable ([SinkLevelFix]) -> Void = { _ in },
                report: @escaping @Sendable (SinkReport) -> Void = { _ in }) {
        self.route = route
        self.floorPercent = floorPercent
        self.ledger = ledger
        self.ledgerChanged = ledgerChanged
        self.report = report
    }
}

/// The level the alarm is played at, for the floor of the proof: `--volume` (linear) and the
/// fade-in, from `startingAt` into the alarm (where a reopened stream takes it up again).
public struct AlarmLevel: Sendable, Hashable {
    public var volume: Double
    public var fadeIn: Duration
    public var startingAt: Duration

    public init(volume: Double, fadeIn: Duration, startingAt: Duration = .zero) {
        self.volume = volume
        self.fadeIn = fadeIn
        self.startingAt = startingAt
    }

    /// The fade-in's factor `seconds` into this stream.
    func fade(atSeconds seconds: Double) -> Double {
        AlarmGain(volume: 1, fadeIn: fadeIn).gain(atSeconds: startingAt.secondsDouble + seconds)
    }
}

/// What the alarm changed on each sink, to put back: shared across threads (a lock), seeded from
/// the live state when a guardian or `resume` takes an alarm over.
public final class SinkFixLedger: Sendable {
    private let fixes: Locked<[String: SinkLevelFix]>

    public init(_ fixes: [SinkLevelFix] = []) {
        self.fixes = Locked(Dictionary(fixes.map { ($0.sink, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Everything to put back, by sink name.
    public var all: [SinkLevelFix] { fixes.withLock { $0.values.sorted { $0.sink < $1.sink } } }

    public func fix(for sink: String) -> SinkLevelFix? { fixes.withLock { $0[sink] } }

    public func record(_ fix: SinkLevelFix) {
        fixes.withLock { if fix.changedSomething { $0[fix.sink] = fix } else { $0.removeValue(forKey: fix.sink) } }
    }

    public func remove(_ sink: String) { _ = fixes.withLock { $0.removeValue(forKey: sink) } }
}

/// What the sound server's output tells while it plays (each becomes an event of the nap).
public enum SinkReport: Sendable, Hashable {
    /// The sinks it plays on and why.
    case routed(sinks: [String], reasons: [String], missing: [String])
    /// A sink was muted or too quiet and was fixed (`message` says what was found and done).
    case fixed(sink: String, message: String)
    /// The alarm's own stream on a sink was muted or below its normal volume (restored so by the
    /// server, or changed in a mixer while it rings) and was fixed.
    case streamFixed(sink: String, message: String)
    /// The person's own mute and volume are back (`message`), or could not be put back.
    case restored(sink: String, message: String)
    /// Its monitor carries the alarm: `level` RMS, `after` the alarm was due.
    case heard(sink: String, level: Double, after: Duration)
    /// It had carried the alarm and has not for 2 s.
    case unheard(sink: String)
    /// No sink proved the alarm for 2 s: the next step.
    case escalated(HeardWatch<BootInstant>.Step, message: String)
    /// Proof is back after the card or the fallback sounded beside the sinks.
    case recovered
    /// A sink it played on went away; `message` says where the alarm plays now.
    case sinkLost(sink: String, message: String)
    /// Said once: the alarm plays but cannot be verified (`message` says why).
    case unverified(String)
}

/// The alarm on the sound server through libpulse (PulseAudio, or PipeWire through pipewire-pulse):
/// one stream per sink the route picks, each with `media.role=alarm` and the application's name, id
/// and icon; the sinks' mute and volume fixed while it plays and put back when it closes; and each
/// sink's monitor read at the stream's rate, where the alarm must find what it wrote
/// (``AlarmEchoDetector``) or escalate (``HeardWatch``).
///
/// The audio thread owns it (`PCMWritable`): a write waits for room in every stream by running the
/// connection's main loop, and that loop also brings the sinks' changes (a mute made while it
/// rings is undone at once) and the monitors' samples.
public final class PulseSinkOutput: PCMWritable {
    public let device: String
    public let format: PCMStreamFormat
    public private(set) var recoveries = 0
    public var consumesInstantly: Bool { false }
    public var queueIsEmpty: Bool { false }

    private let connection: PulseConnection
    private let plan: SinkPlan
    private var sinks: [String: PulseSink] = [:]
    /// Each sink as the alarm first found it: the person's own mute and volume.
    private var originals: [String: SinkDescription] = [:]
    private var playing: [String: OpaquePointer] = [:]
    private var monitors: [String: OpaquePointer] = [:]
    /// What was written and what each monitor carries, compared.
    private var detector: AlarmEchoDetector
    /// Frames of silence written in a row, up to the last write.
    private var silentRun = 0
    private var watch: HeardWatch<BootInstant>? {
        didSet { watchDeadline = watch?.nextDeadline }
    }
    /// The watch's next deadline, kept from its last change (looked at on every write).
    private var watchDeadline: BootInstant?
    private var closed = false
    /// The first write has been sent. Until then the monitors are corked (nothing is recorded
    /// before the alarm), and nothing but the first frames is done on that write's path.
    private var started = false
    /// Monitors connected corked before the first write, to uncork once they are ready.
    private var corkedUntilStart: Set<String> = []
    /// The bytes of the float conversion of an S16 write.
    private var scratch: [Float] = []

    /// The highest rate the streams (and so the monitors) are played and read at: what a higher
    /// file has above is converted by the renderer, and the proof's search stays within
    /// two transforms of 2¹⁷ points.
    static let highestRate = 48_000

    /// The name of this output in the chain.
    public static let deviceName = "sound server"

    /// Connects, routes, fixes the chosen sinks' mute and volume, and opens a stream on each.
    public init(plan: SinkPlan, configuration: PCMConfiguration, limit: Duration = .seconds(1)) throws(ALSAError) {
        self.plan = plan
        let rate = min(max(configuration.sampleRate, 8_000), Self.highestRate)
        let channels = min(max(configuration.channels, 1), 8)
        // A quarter-second period in a one-second buffer: an alarm needs no low latency, and the
        // server asks for more (waking this thread) about once a period. With a tenth-second
        // period in 0.3 s it woke about 60 times a second and cost twice aplay's CPU; measured
        // here, this costs what aplay on the same sink does. A stop is still seen within a
        // period, and a flush silences the buffer at once.
        let period = rate / 4
        format = PCMStreamFormat(sampleFormat: .float32LE, sampleRate: rate, channels: channels,
                                 bufferFrames: period * 4, periodFrames: period)
        // A monitor runs behind what is written by at most the stream's buffer, a fragment of the
        // monitor and the server's own latency.
        detector = AlarmEchoDetector(sampleRate: rate, maximumDelay: Self.monitorDelay)
        do throws(PulseError) {
            connection = try PulseConnection(limit: limit)
            let (_, defaultSink) = try connection.serverInfo()
            let all = try connection.sinks()
            for sink in all { sinks[sink.name] = sink }
            let decision = SinkRouting.route(all.map(\.description), defaultSink: defaultSink, route: plan.route)
            device = "\(Self.deviceName) (\(decision.sinks.joined(separator: ", ")))"
            guard !decision.sinks.isEmpty else {
                throw PulseError(operation: "choose a sink", reason: "the server \(connection.server) has no sink")
            }
            plan.report(.routed(sinks: decision.sinks, reasons: decision.reasons, missing: decision.missing))
            try connection.subscribeToSinks()
            for name in decision.sinks { try add(name) }
        } catch {
            throw ALSAError(device: Self.deviceName, operation: .soundServer,
                            code: ALSAErrno(rawValue: error.connectionLost ? EIO : ECONNREFUSED), detail: error.description)
        }
    }

    deinit { close() }

    // MARK: - Streams

    /// Opens a stream on `name`, fixes the stream's own mute and volume, then the sink's, and
    /// starts a recording of its monitor.
    private func add(_ name: String) throws(PulseError) {
        guard playing[name] == nil, let sink = sinks[name] else { return }
        if originals[name] == nil { originals[name] = sink.description }
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(format.sampleRate), channels: UInt8(format.channels))
        let properties = PulseConnection.alarmStreamProperties()
        defer { pa_proplist_free(properties) }
        guard let stream = pa_stream_new_with_proplist(connection.context, "Alarm", &spec, nil, properties) else {
            throw connection.failure("make a stream for sink '\(name)'")
        }
        let bytesPerFrame = UInt32(format.bytesPerFrame)
        // Playback starts with the first period the server has (not once the whole buffer is
        // there).
        let periodBytes = UInt32(format.periodFrames) * bytesPerFrame
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(format.bufferFrames) * bytesPerFrame,
                                        prebuf: periodBytes, minreq: periodBytes, fragsize: UInt32.max)
        guard pa_stream_connect_playback(stream, name, &attributes, PA_STREAM_ADJUST_LATENCY, nil, nil) >= 0 else {
            pa_stream_unref(stream)
            throw connection.failure("play on sink '\(name)'")
        }
        do throws(PulseError) {
            try connection.wait(for: "play on sink '\(name)'") { pa_stream_get_state(stream) != PA_STREAM_CREATING }
        } catch {
            pa_stream_unref(stream)
            throw error
        }
        guard pa_stream_get_state(stream) == PA_STREAM_READY else {
            pa_stream_unref(stream)
            throw connection.failure("play on sink '\(name)'")
        }
        playing[name] = stream
        // The stream first (what the server restored for it: a mixer's mute of an alarm once),
        // then the sink.
        fixStreamLevel(on: name, first: true)
        fixLevels(of: sink)
        watch?.listen(to: name)
        listen(to: sink)
    }

    /// Starts reading `sink`'s monitor (mono float at the stream's rate); says once when it cannot.
    private func listen(to sink: PulseSink) {
        guard monitors[sink.name] == nil, let monitor = sink.description.monitor else {
            if sink.description.monitor == nil { plan.report(.unverified("sink '\(sink.name)' has no monitor: the alarm plays there but is not verified")) }
            return
        }
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(format.sampleRate), channels: 1)
        guard let stream = pa_stream_new(connection.context, "Alarm proof", &spec, nil) else { return }
        // A fragment is one block the proof tests (a quarter second): one wake-up per block.
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
                                        fragsize: UInt32(detector.blockFrames * 4))
        let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_DONT_MOVE.rawValue
            | (started ? 0 : PA_STREAM_START_CORKED.rawValue))
        guard pa_stream_connect_record(stream, monitor, &attributes, flags) >= 0 else {
            pa_stream_unref(stream)
            plan.report(.unverified("the monitor of sink '\(sink.name)' cannot be read: the alarm plays there but is not verified"))
            return
        }
        monitors[sink.name] = stream
        if !started { corkedUntilStart.insert(sink.name) }
    }

    private func drop(_ name: String) {
        if let stream = playing.removeValue(forKey: name) {
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        if let stream = monitors.removeValue(forKey: name) {
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        corkedUntilStart.remove(name)
        detector.forget(name)
        watch?.forget(name)
    }

    // MARK: - Levels

    /// Unmutes `sink` and raises it to the floor, keeping the person's own values in the ledger.
    private func fixLevels(of sink: PulseSink) {
        guard let floor = plan.floorPercent else { return }
        let (fix, unmute, raiseTo) = SinkLevelFix.plan(for: sink.description, original: originals[sink.name] ?? sink.description,
                                                       floor: floor, earlier: plan.ledger.fix(for: sink.name))
        guard unmute || raiseTo != nil else { return }
        plan.ledger.record(fix)
        plan.ledgerChanged(plan.ledger.all)
        do throws(PulseError) {
            if unmute { try connection.setMute(false, sink: sink.name) }
            if let raiseTo { try connection.setVolume(raiseTo, channels: sink.channels, sink: sink.name) }
            if let message = SinkLevelFix.describe(sink.description, unmute: unmute, raiseTo: raiseTo) {
                plan.report(.fixed(sink: sink.name, message: message))
            }
        } catch {
            plan.report(.fixed(sink: sink.name, message: "sink '\(sink.name)' is muted or too quiet and could not be fixed: \(error)"))
        }
    }

    /// Unmutes the alarm's own stream on sink `name` and sets it to its normal volume (100 %),
    /// when the server has it muted or lower: what module-stream-restore or WirePlumber restored
    /// for an alarm stream (`first`), or what a mixer changed while it rings. Left alone with
    /// `--no-fix-volume`, as the sinks are. Nothing is put back: the alarm's stream is the alarm's.
    private func fixStreamLevel(on name: String, first: Bool = false) {
        guard plan.floorPercent != nil, let stream = playing[name] else { return }
        let index = pa_stream_get_index(stream)
        guard index != UInt32.max else { return }
        do throws(PulseError) {
            guard let level = try connection.streamLevel(index), level.muted || level.volumePercent < 100 else { return }
            if level.muted { try connection.setStreamMute(false, index: index) }
            if level.volumePercent < 100 { try connection.setStreamVolume(100, channels: level.channels, index: index) }
            let found = [level.muted ? "muted" : nil, level.volumePercent < 100 ? "at \(level.volumePercent) %" : nil].compactMap { $0 }
            let done = [level.muted ? "unmuted it" : nil, level.volumePercent < 100 ? "set it to 100 %" : nil].compactMap { $0 }
            let why = first ? " (the server restored what a mixer once set for alarm streams)" : " while it rang"
            plan.report(.streamFixed(sink: name, message: "the alarm's own stream on sink '\(name)' was \(found.joined(separator: " and "))\(why): \(done.joined(separator: " and "))"))
        } catch {
            plan.report(.streamFixed(sink: name, message: "the alarm's own stream on sink '\(name)' could not be read or fixed: \(error)"))
        }
    }

    /// Reads the sinks again after the server said they changed: fixes those it plays on (the
    /// alarm's streams first), and moves on from those that are gone.
    private func followChanges() throws(PulseError) {
        let streams = connection.takeStreamChanges()
        if !streams.isEmpty {
            for (name, stream) in playing where streams.contains(pa_stream_get_index(stream)) { fixStreamLevel(on: name) }
        }
        let (changed, removed, _) = connection.takeChanges()
        guard !changed.isEmpty || !removed.isEmpty else { return }
        let all = try connection.sinks()
        sinks = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for sink in all where changed.contains(sink.index) && playing[sink.name] != nil {
            fixLevels(of: sink)
        }
        for name in Array(playing.keys) where sinks[name] == nil {
            lose(name, because: "it was removed")
        }
    }

    /// `name` is gone (or its stream failed): the alarm goes on on the other sinks, or moves to
    /// the ones the route picks now.
    private func lose(_ name: String, because why: String) {
        drop(name)
        plan.ledger.remove(name)
        if playing.isEmpty {
            let (_, defaultSink) = (try? connection.serverInfo()) ?? ("", nil)
            let decision = SinkRouting.route(sinks.values.map(\.description).sorted { $0.name < $1.name }, defaultSink: defaultSink, route: .wake)
            for next in decision.sinks { try? add(next) }
        }
        let now = playing.keys.sorted()
        plan.report(.sinkLost(sink: name, message: "sink '\(name)' \(why); the alarm plays on \(now.isEmpty ? "no sink" : now.map { "'\($0)'" }.joined(separator: ", "))"))
    }

    // MARK: - PCMWritable

    public func write(_ samples: UnsafeBufferPointer<Float>) throws(ALSAError) {
        do throws(PulseError) {
            try send(UnsafeRawBufferPointer(samples))
            noteWritten(samples)
        } catch {
            throw ALSAError(device: device, operation: .soundServer, code: ALSAErrno(rawValue: EIO), detail: error.description)
        }
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(ALSAError) {
        // The stream takes floats: this output never negotiates S16.
        if scratch.count < samples.count { scratch = [Float](repeating: 0, count: samples.count) }
        for index in samples.indices { scratch[index] = Float(samples[index]) / 32_768 }
        try scratch.withUnsafeBufferPointer { buffer throws(ALSAError) in
            try write(UnsafeBufferPointer(rebasing: buffer[0 ..< samples.count]))
        }
    }

    /// Writes `bytes` to every stream, running the main loop while any is full.
    private func send(_ bytes: UnsafeRawBufferPointer) throws(PulseError) {
        guard let base = bytes.baseAddress else { return }
        if watch == nil {
            watch = HeardWatch(due: BootInstant.now, listening: Set(monitors.keys))
        }
        var sent = Dictionary(playing.keys.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
        var lastProgress = BootInstant.now
        while true {
            guard connection.isAlive else { throw connection.lost("play") }
            var progressed = false
            for (name, stream) in playing {
                let state = pa_stream_get_state(stream)
                guard state == PA_STREAM_READY else {
                    lose(name, because: "stopped taking the alarm's stream")
                    sent.removeValue(forKey: name)
                    progressed = true
                    break
                }
                let done = sent[name] ?? bytes.count
                guard done < bytes.count else { continue }
                let room = pa_stream_writable_size(stream)
                guard room != Int.max, room > 0 else { continue }
                let count = min(room, bytes.count - done) / format.bytesPerFrame * format.bytesPerFrame
                guard count > 0 else { continue }
                guard pa_stream_write(stream, base + done, count, nil, 0, PA_SEEK_RELATIVE) >= 0 else {
                    throw connection.failure("play on sink '\(name)'")
                }
                sent[name] = done + count
                progressed = true
            }
            if playing.isEmpty { throw PulseError(operation: "play", reason: "no sink is left to play on", connectionLost: true) }
            // libpulse sends what was written from its main loop: send it now, without waiting.
            if progressed { connection.iterate(upTo: .zero) }
            // A stream added during this write (an escalation, a re-route) starts with the next one.
            if sent.allSatisfy({ $0.value >= bytes.count || playing[$0.key] == nil }) { break }
            if progressed { lastProgress = BootInstant.now }
            if lastProgress.duration(to: BootInstant.now) > .seconds(10) {
                throw PulseError(operation: "play", reason: "no sink took frames for 10 s", connectionLost: true)
            }
            connection.iterate(upTo: waitLimit())
            try followChanges()
            readMonitors()
            watchTime()
        }
        guard started else {
            // The first frames are on their way: the write returns now (its return is the
            // alarm's lateness). What waited since the streams opened (the sinks' changes) is
            // handled on the next write, and the monitors start recording then.
            started = true
            return
        }
        try followChanges()
        readMonitors()
        watchTime()
    }

    /// How long the write loop may wait for the server: until the next thing that is due on time
    /// alone (the watch's next deadline), and at most ``longestWait``.
    /// Everything else (room in a stream, recorded data, a change of a sink, a lost connection)
    /// wakes the loop by itself.
    private func waitLimit() -> Duration {
        let now = BootInstant.now
        var wait = Self.longestWait
        if let watchDeadline { wait = min(wait, now.duration(to: watchDeadline)) }
        return max(wait, .zero)
    }

    /// The longest the write loop waits without a reason: the 10 s stall check needs no finer tick.
    static let longestWait = Duration.milliseconds(500)

    /// Notes what was written, for the monitors to be compared with (a copy, mixed to mono; from
    /// the first write on, so that a frame's index is its place in the stream). A long silence of
    /// the alarm's own (below −60 dBFS for a second or more: a file's silent start, a long pause)
    /// is told to the watch as it is written: no monitor can prove it.
    private func noteWritten(_ samples: UnsafeBufferPointer<Float>) {
        detector.wrote(samples, channels: format.channels)
        guard !monitors.isEmpty else { return }
        var peak: Float = 0
        for sample in samples { peak = max(peak, abs(sample)) }
        let frames = samples.count / format.channels
        guard peak < Self.nothingToProve else {
            silentRun = 0
            return
        }
        silentRun += frames
        let long = format.sampleRate
        guard silentRun >= long, var watch else { return }
        // The first second of the run counts once it is known to be long.
        let counted = silentRun - frames >= long ? frames : silentRun
        watch.paused(for: .seconds(Double(counted) / Double(format.sampleRate)), at: BootInstant.now)
        self.watch = watch
    }

    /// Below this peak (−60 dBFS) what is written cannot be proved.
    static let nothingToProve: Float = 0.001
    /// How far behind what is written a monitor may run: the stream's buffer (a second), a
    /// fragment of the monitor and the server's own latency.
    static let monitorDelay = Duration.milliseconds(1_500)

    /// Takes what the monitors recorded and judges each full quarter second: a block that carries
    /// what was written is proof (``AlarmEchoDetector``).
    private func readMonitors() {
        let now = BootInstant.now
        // Connected corked before the alarm: recording starts once each is ready (a cork on a
        // stream still being made would fail).
        for name in corkedUntilStart {
            guard let stream = monitors[name], pa_stream_get_state(stream) == PA_STREAM_READY else { continue }
            if let operation = pa_stream_cork(stream, 0, nil, nil) { pa_operation_unref(operation) }
            corkedUntilStart.remove(name)
        }
        for (name, stream) in monitors {
            guard pa_stream_get_state(stream) == PA_STREAM_READY else { continue }
            var verdicts: [AlarmEchoDetector.Verdict] = []
            while pa_stream_readable_size(stream) > 0 {
                var data: UnsafeRawPointer?
                var length = 0
                guard pa_stream_peek(stream, &data, &length) >= 0, length > 0 else { break }
                if let data {
                    let floats = data.bindMemory(to: Float.self, capacity: length / 4)
                    verdicts += detector.recorded(UnsafeBufferPointer(start: floats, count: length / 4), from: name)
                } else {
                    // A hole in the recording: the frames it skipped.
                    detector.recordedGap(frames: length / 4, from: name)
                }
                pa_stream_drop(stream)
            }
            let matched = verdicts.filter { $0.kind == .matched && loudEnough($0, on: name) }
            guard !matched.isEmpty, var watch else { continue }
            let effects = watch.proof(sink: name, level: matched.map(\.monitorLevel).max() ?? 0, at: now)
            self.watch = watch
            perform(effects)
        }
    }

    /// Whether a block that carries the alarm carries it loud enough to count: at least the
    /// proof's floor for the alarm's level, the fade-in where that block was written, and the
    /// sink's own volume. Said once per sink when it is not.
    private func loudEnough(_ verdict: AlarmEchoDetector.Verdict, on sink: String) -> Bool {
        guard let level = plan.level, let frame = verdict.writtenFrame, let volume = sinks[sink]?.description.volumePercent else { return true }
        let fade = level.fade(atSeconds: Double(frame) / Double(format.sampleRate))
        let floor = AlarmLoudness.proofFloor(volume: level.volume, fade: fade, sinkVolumePercent: volume)
        guard verdict.monitorLevel < floor else { return true }
        if tooQuiet.insert(sink).inserted {
            plan.report(.unverified("sink '\(sink)' carries the alarm at \(Self.decibels(verdict.monitorLevel)) dBFS, below the \(Self.decibels(floor)) dBFS an alarm must reach there (its own stream turned down, or a sound far quieter than an alarm): not heard"))
        }
        return false
    }

    /// Sinks said to carry the alarm too quietly.
    private var tooQuiet: Set<String> = []

    private static func decibels(_ level: Double) -> String {
        level > 0 ? AlarmLoudness.tenths(20 * log10(level)) : "-inf"
    }

    private func watchTime() {
        guard var watch, let next = watchDeadline, next <= BootInstant.now else { return }
        let effects = watch.timeElapsed(at: BootInstant.now)
        self.watch = watch
        perform(effects)
    }

    private func perform(_ effects: [HeardWatch<BootInstant>.Effect]) {
        let silent = "no sink's monitor carried the alarm for \(watch?.silence(at: BootInstant.now).components.seconds ?? 0) s"
        for effect in effects {
            switch effect {
            case .heard(let sink, let level, let after):
                plan.report(.heard(sink: sink, level: level, after: after))
            case .unheard(let sink):
                plan.report(.unheard(sink: sink))
                fixStreamLevel(on: sink)
                if let description = sinks[sink] { fixLevels(of: description) }
            case .escalate(.fixLevels):
                plan.report(.escalated(.fixLevels, message: "\(silent): fixing the alarm's streams and every sink's mute and volume again"))
                for name in playing.keys.sorted() { fixStreamLevel(on: name) }
                if let all = try? connection.sinks() {
                    for sink in all where playing[sink.name] != nil { fixLevels(of: sink) }
                }
            case .escalate(.addSinks):
                let others = sinks.values.filter { playing[$0.name] == nil && !$0.description.isUnplugged }.map(\.name).sorted()
                plan.report(.escalated(.addSinks, message: others.isEmpty
                    ? "\(silent), and the server has no other sink"
                    : "\(silent): it plays on \(others.map { "'\($0)'" }.joined(separator: ", ")) too"))
                for name in others { try? add(name) }
            case .escalate(.card):
                plan.report(.escalated(.card, message: "\(silent): the sound card itself (ALSA \(AlarmChain<BootInstant>.hardware), past the sound server) plays it too"))
            case .escalate(.fallback):
                plan.report(.escalated(.fallback, message: "\(silent): the fallback sounds beside the sound server"))
            case .recovered:
                plan.report(.recovered)
            }
        }
    }

    public func drop() throws(ALSAError) {
        for stream in playing.values {
            if let operation = pa_stream_flush(stream, nil, nil) { pa_operation_unref(operation) }
        }
        connection.iterate(upTo: .zero)
    }

    public func drain() throws(ALSAError) {
        let pending = playing.values.compactMap { pa_stream_drain($0, nil, nil) }
        defer { pending.forEach { pa_operation_unref($0) } }
        let deadline = BootInstant.now.advanced(by: .seconds(2))
        while connection.isAlive, BootInstant.now < deadline, pending.contains(where: { pa_operation_get_state($0) == PA_OPERATION_RUNNING }) {
            connection.iterate(upTo: .milliseconds(50))
        }
    }

    /// Closes every stream and puts back the mute and volume the alarm changed (when the server
    /// still answers; otherwise they stay in the ledger for whoever plays next or the guardian).
    public func close() {
        guard !closed else { return }
        closed = true
        for name in Array(playing.keys) { drop(name) }
        guard connection.isAlive else { return }
        for fix in plan.ledger.all {
            do throws(PulseError) {
                let done = try connection.putBack(fix, channels: sinks[fix.sink]?.channels ?? 2)
                plan.ledger.remove(fix.sink)
                plan.report(.restored(sink: fix.sink, message: "sink '\(fix.sink)': \(done), as it was before the alarm"))
            } catch {
                plan.report(.restored(sink: fix.sink, message: "sink '\(fix.sink)' could not be put back as it was (\(error)); it stays as the alarm left it"))
            }
        }
        plan.ledgerChanged(plan.ledger.all)
    }
}

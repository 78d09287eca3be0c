import CPulse
public import SnoozeFuseCore
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#endif

/// What the alarm asks of the sound server: where to play, how loud at least, who decides, and
/// what to tell.
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
    /// Makes what decides for each output as it opens (a ``SinkWatch`` under a clock: the
    /// runtime's driver), given this plan.
    public var watcher: @Sendable (SinkPlan) -> any SinkWatching

    public init(route: AlarmRoute = .wake, floorPercent: Int? = SinkLevelFix.defaultFloorPercent, ledger: SinkFixLedger = SinkFixLedger(),
                watcher: @escaping @Sendable (SinkPlan) -> any SinkWatching,
                ledgerChanged: @escaping @Sendable ([SinkLevelFix]) -> Void = { _ in },
                report: @escaping @Sendable (SinkReport) -> Void = { _ in }) {
        self.route = route
        self.floorPercent = floorPercent
        self.ledger = ledger
        self.watcher = watcher
        self.ledgerChanged = ledgerChanged
        self.report = report
    }
}

/// What decides for a sound-server output: it takes what the output sees (``SinkEvent``) and
/// answers with what the output is to do on the server (``SinkEffect``: streams, levels, reading
/// again); it says and records the rest itself. Called on the output's own thread, which alone
/// owns the connection to the server (libpulse's main loop is not thread-safe).
public protocol SinkWatching: AnyObject {
    func handle(_ event: SinkEvent) -> [SinkEffect]
    /// How long until it must be told ``SinkEvent/timeElapsed``; nil: not on time alone.
    var timeToDeadline: Duration? { get }
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

    /// Replaces everything to put back with `all`.
    public func replace(with all: [SinkLevelFix]) {
        fixes.withLock { $0 = Dictionary(all.filter(\.changedSomething).map { ($0.sink, $0) }, uniquingKeysWith: { first, _ in first }) }
    }

    public func remove(_ sink: String) { _ = fixes.withLock { $0.removeValue(forKey: sink) } }
}

/// The alarm on the sound server through libpulse (PulseAudio, or PipeWire through pipewire-pulse):
/// a plain writer of the alarm's streams, which shows what it sees to what decides
/// (``SinkWatching``) and does what that asks: a stream per sink it is told to play on (with
/// `media.role=alarm`), each sink's monitor read at the stream's rate and compared with what was
/// written (``AlarmEchoDetector``), mute and volume set, sinks and streams read again. When it
/// closes it puts back the person's own mute and volume (``SinkFixLedger``).
///
/// The audio thread owns it (`PCMWritable`): a write waits for room in every stream by running the
/// connection's main loop, and that loop also brings the sinks' changes (a mute made while it
/// rings), the streams' (a mixer's), and the monitors' samples.
public final class PulseSinkOutput: PCMWritable {
    public let device: String
    public let format: PCMStreamFormat
    public private(set) var recoveries = 0
    public var consumesInstantly: Bool { false }
    public var queueIsEmpty: Bool { false }

    private let connection: PulseConnection
    private let plan: SinkPlan
    private let watcher: any SinkWatching
    /// The server's sinks as last listed, by name (their channels, to set a volume).
    private var sinks: [String: PulseSink] = [:]
    private var playing: [String: PulseStream] = [:]
    private var monitors: [String: PulseStream] = [:]
    /// What was written and what each monitor carries, compared.
    private var detector: AlarmEchoDetector
    /// Frames of silence written in a row, up to the last write.
    private var silentRun = 0
    private var closed = false
    /// The first write has been sent. Until then the monitors are corked (nothing is recorded
    /// before the alarm), and nothing but the first frames is done on that write's path.
    private var started = false
    /// Monitors connected corked before the first write, to uncork once they are ready.
    private var corkedUntilStart: Set<String> = []
    /// When the streams and their monitors were opened.
    private let openedAt = BootInstant.now
    /// Opened this close to the first write, the monitors have not begun to record when the alarm
    /// starts (a nap taken over after its deadline opens its output as it rings, not 2 s before).
    static let openedLate = Duration.seconds(1)
    /// The bytes of the float conversion of an S16 write.
    private var scratch: [Float] = []

    /// The highest rate the streams (and so the monitors) are played and read at: what a higher
    /// file has above is converted by the renderer, and the proof's search stays within
    /// two transforms of 2¹⁷ points.
    static let highestRate = 48_000

    /// The name of this output in the chain.
    public static let deviceName = "sound server"

    /// Connects, lists the sinks, and plays where what decides says (it routes, and fixes the
    /// streams' and sinks' mute and volume as they open).
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
        watcher = plan.watcher(plan)
        do throws(PulseError) {
            connection = try PulseConnection(limit: limit)
            let (_, defaultSink) = try connection.serverInfo()
            let all = try connection.sinks()
            for sink in all { sinks[sink.name] = sink }
            try connection.subscribeToSinks()
            // Where to play is decided now; a stream that cannot be opened fails the output.
            device = Self.deviceName
            try deliver(.opened(sinks: all.map(\.description), defaultSink: defaultSink), strictly: true)
            guard !playing.isEmpty else {
                throw PulseError(operation: "choose a sink", reason: "the server \(connection.server) has no sink")
            }
        } catch {
            throw ALSAError(device: Self.deviceName, operation: .soundServer,
                            code: ALSAErrno(rawValue: error.connectionLost ? EIO : ECONNREFUSED), detail: error.description)
        }
    }

    /// The output's name with the sinks it plays on.
    public var description: String { "\(Self.deviceName) (\(playing.keys.sorted().joined(separator: ", ")))" }

    deinit { close() }

    // MARK: - What decides

    /// Shows `event` to what decides and does what it asks, showing it in turn what that brings
    /// (a stream opened, a level read), until nothing more is asked. `strictly`: a stream that
    /// cannot be opened is an error (the output is opening); otherwise the alarm goes on where it
    /// plays.
    private func deliver(_ event: SinkEvent, strictly: Bool = false) throws(PulseError) {
        var queue = [event]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            for effect in watcher.handle(next) {
                queue += try perform(effect, strictly: strictly)
            }
        }
    }

    /// ``deliver(_:strictly:)`` once the output is open: nothing it asks can fail the output.
    private func tell(_ event: SinkEvent) {
        try? deliver(event)
    }

    private func perform(_ effect: SinkEffect, strictly: Bool) throws(PulseError) -> [SinkEvent] {
        switch effect {
        case .play(let name):
            do throws(PulseError) {
                return try play(on: name)
            } catch where !strictly {
                return []
            }
        case .stop(let name):
            stop(name)
        case .setSinkLevel(let name, let unmute, let volume):
            do throws(PulseError) {
                if unmute { try connection.setMute(false, sink: name) }
                if let volume { try connection.setVolume(volume, channels: sinks[name]?.channels ?? 2, sink: name) }
            } catch {
                plan.report(.fixed(sink: name, message: "sink '\(name)' is muted or too quiet and could not be fixed: \(error)"))
            }
        case .setStreamLevel(let name, let unmute, let volume):
            guard let index = playing[name]?.index else { return [] }
            do throws(PulseError) {
                if unmute { try connection.setStreamMute(false, index: index) }
                if let volume { try connection.setStreamVolume(volume, channels: format.channels, index: index) }
            } catch {
                plan.report(.streamFixed(sink: name, message: "the alarm's own stream on sink '\(name)' could not be fixed: \(error)"))
            }
        case .checkStream(let name):
            guard let level = streamLevel(on: name) else { return [] }
            return [.streamChanged(sink: name, level: level)]
        case .rereadSinks:
            guard let listed = listSinks() else { return [] }
            return [.sinksChanged(sinks: listed.sinks, changed: Set(playing.keys), defaultSink: listed.defaultSink)]
        case .report, .fixes:
            // What decides says and records these itself.
            break
        }
        return []
    }

    // MARK: - Streams

    /// Opens a stream on `name` and a recording of its monitor; what the server gave the stream
    /// (its mute and volume) is shown to what decides.
    private func play(on name: String) throws(PulseError) -> [SinkEvent] {
        guard playing[name] == nil, let sink = sinks[name] else { return [] }
        let bytesPerFrame = format.bytesPerFrame
        playing[name] = try PulseStream.playback(on: connection, sink: name, rate: format.sampleRate, channels: format.channels,
                                                 bufferBytes: format.bufferFrames * bytesPerFrame,
                                                 periodBytes: format.periodFrames * bytesPerFrame)
        return [.playing(sink: name, stream: streamLevel(on: name), monitor: listen(to: sink))]
    }

    /// Starts reading `sink`'s monitor (mono float at the stream's rate).
    private func listen(to sink: PulseSink) -> MonitorReading {
        guard monitors[sink.name] == nil else { return .reading }
        guard let source = sink.description.monitor else { return .none }
        // A fragment is one block the proof tests (a quarter second): one wake-up per block.
        guard let stream = PulseStream.monitor(on: connection, sink: sink.name, source: source, rate: format.sampleRate,
                                               fragmentBytes: detector.blockFrames * 4, corked: !started) else { return .unreadable }
        monitors[sink.name] = stream
        if !started { corkedUntilStart.insert(sink.name) }
        return .reading
    }

    private func stop(_ name: String) {
        playing.removeValue(forKey: name)
        monitors.removeValue(forKey: name)
        corkedUntilStart.remove(name)
        detector.forget(name)
    }

    /// The level the server has for the alarm's stream on `name` (nil when it cannot be read).
    private func streamLevel(on name: String) -> StreamLevel? {
        guard let index = playing[name]?.index, let level = try? connection.streamLevel(index) else { return nil }
        return StreamLevel(muted: level.muted, volumePercent: level.volumePercent)
    }

    private func listSinks() -> (sinks: [SinkDescription], defaultSink: String?)? {
        guard let all = try? connection.sinks() else { return nil }
        sinks = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return (all.map(\.description), (try? connection.serverInfo())?.defaultSink)
    }

    /// What the server said changed since the last look: the alarm's streams (a mixer), and the
    /// sinks (a mute, a volume, one gone).
    private func followChanges() {
        let streams = connection.takeStreamChanges()
        for (name, stream) in playing where stream.index.map(streams.contains) == true {
            if let level = streamLevel(on: name) { tell(.streamChanged(sink: name, level: level)) }
        }
        let (changed, removed, _) = connection.takeChanges()
        guard !changed.isEmpty || !removed.isEmpty else { return }
        let byIndex = Dictionary(sinks.values.map { ($0.index, $0.name) }, uniquingKeysWith: { first, _ in first })
        guard let listed = listSinks() else { return }
        let names = Set(changed.compactMap { index in sinks.values.first { $0.index == index }?.name ?? byIndex[index] })
        tell(.sinksChanged(sinks: listed.sinks, changed: names, defaultSink: listed.defaultSink))
    }

    // MARK: - PCMWritable

    public func write(_ samples: UnsafeBufferPointer<Float>) throws(ALSAError) {
        do throws(PulseError) {
            try send(UnsafeRawBufferPointer(samples))
            noteWritten(samples)
        } catch {
            throw ALSAError(device: description, operation: .soundServer, code: ALSAErrno(rawValue: EIO), detail: error.description)
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
        if !started {
            tell(.started)
            // Measured on PulseAudio: monitors connected as the alarm starts bring their first
            // samples 1.1-1.4 s after the first write (a quarter second for ones connected 2 s
            // ahead), and the proof could not come before; on a busy machine that crossed the 2 s
            // after which the nap escalates. That time, up to a monitor's longest delay, is not
            // silence: said at once, before any escalation is due.
            if openedAt.duration(to: BootInstant.now) < Self.openedLate { tell(.paused(Self.monitorDelay)) }
        }
        var sent = Dictionary(playing.keys.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
        var lastProgress = BootInstant.now
        while true {
            guard connection.isAlive else { throw connection.lost("play") }
            var progressed = false
            for (name, stream) in playing {
                guard stream.isReady else {
                    tell(.streamFailed(sink: name))
                    sent.removeValue(forKey: name)
                    progressed = true
                    break
                }
                let done = sent[name] ?? bytes.count
                guard done < bytes.count else { continue }
                let count = min(stream.writableBytes, bytes.count - done) / format.bytesPerFrame * format.bytesPerFrame
                guard count > 0 else { continue }
                try stream.write(base + done, count: count)
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
            lookAround()
        }
        guard started else {
            // The first frames are on their way: the write returns now (its return is the
            // alarm's lateness). What waited since the streams opened (the sinks' changes) is
            // handled on the next write, and the monitors start recording then.
            started = true
            return
        }
        lookAround()
    }

    /// What happened meanwhile: changes on the server, the monitors' recordings, time.
    private func lookAround() {
        followChanges()
        readMonitors()
        if let due = watcher.timeToDeadline, due <= .zero { tell(.timeElapsed) }
    }

    /// How long the write loop may wait for the server: until what decides wants time, and at
    /// most ``longestWait``. Everything else (room in a stream, recorded data, a change of a sink,
    /// a lost connection) wakes the loop by itself.
    private func waitLimit() -> Duration {
        max(min(Self.longestWait, watcher.timeToDeadline ?? Self.longestWait), .zero)
    }

    /// The longest the write loop waits without a reason: the 10 s stall check needs no finer tick.
    static let longestWait = Duration.milliseconds(500)

    /// Notes what was written, for the monitors to be compared with (a copy, mixed to mono; from
    /// the first write on, so that a frame's index is its place in the stream). A long silence of
    /// the alarm's own (below −60 dBFS for a second or more: a file's silent start, a long pause)
    /// is told as it is written: no monitor can prove it.
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
        guard silentRun >= long else { return }
        // The first second of the run counts once it is known to be long.
        let counted = silentRun - frames >= long ? frames : silentRun
        tell(.paused(.seconds(Double(counted) / Double(format.sampleRate))))
    }

    /// Below this peak (−60 dBFS) what is written cannot be proved.
    static let nothingToProve: Float = 0.001
    /// How far behind what is written a monitor may run: the stream's buffer (a second), a
    /// fragment of the monitor and the server's own latency.
    static let monitorDelay = Duration.milliseconds(1_500)

    /// Takes what the monitors recorded and judges each full quarter second: a block that carries
    /// what was written (``AlarmEchoDetector``) is shown, with its level and where it was written.
    private func readMonitors() {
        // Connected corked before the alarm: recording starts once each is ready (a cork on a
        // stream still being made would fail).
        for name in corkedUntilStart {
            guard let stream = monitors[name], stream.isReady else { continue }
            stream.cork(false)
            corkedUntilStart.remove(name)
        }
        for (name, stream) in monitors where stream.isReady {
            var verdicts: [AlarmEchoDetector.Verdict] = []
            stream.read({ verdicts += detector.recorded($0, from: name) }, hole: { detector.recordedGap(frames: $0, from: name) })
            for verdict in verdicts where verdict.kind == .matched {
                tell(.carried(sink: name, level: verdict.monitorLevel,
                              writtenSeconds: verdict.writtenFrame.map { Double($0) / Double(format.sampleRate) }))
            }
        }
    }

    public func drop() throws(ALSAError) {
        for stream in playing.values { stream.flush() }
        connection.iterate(upTo: .zero)
    }

    public func drain() throws(ALSAError) {
        PulseStream.drain(Array(playing.values), on: connection, limit: .seconds(2))
    }

    /// Closes every stream and puts back the mute and volume the alarm changed (when the server
    /// still answers; otherwise they stay in the ledger for whoever plays next or the guardian).
    public func close() {
        guard !closed else { return }
        closed = true
        for name in Array(playing.keys) { stop(name) }
        guard connection.isAlive else { return }
        for fix in plan.ledger.all {
            do throws(PulseError) {
                let done = try connection.putBack(fix, channels: sinks[fix.sink]?.channels ?? 2)
                plan.ledger.remove(fix.sink)
                switch done {
                case .restored(let what):
                    plan.report(.restored(sink: fix.sink, message: "sink '\(fix.sink)': \(what), as it was before the alarm"))
                case .leftAlone(let why):
                    plan.report(.leftAlone(sink: fix.sink, message: "sink '\(fix.sink)' is left as it is: \(why), so it was changed since"))
                }
            } catch {
                plan.report(.restored(sink: fix.sink, message: "sink '\(fix.sink)' could not be put back as it was (\(error)); it stays as the alarm left it"))
            }
        }
        plan.ledgerChanged(plan.ledger.all)
    }
}

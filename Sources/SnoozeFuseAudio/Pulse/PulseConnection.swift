import CPulse
public import SnoozeFuseCore
import SnoozeFuseSystem

/// A failed call to the sound server (PulseAudio, or PipeWire through pipewire-pulse): what was
/// asked, of which server or sink, and what libpulse said.
public struct PulseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done: `connect`, `list sinks`, `set mute of 'speakers'`, `play on 'speakers'`…
    public var operation: String
    /// libpulse's own words (`pa_strerror`), or what did not happen in time.
    public var reason: String
    /// The server stopped answering or went away: the connection cannot be used again.
    public var connectionLost: Bool

    public init(operation: String, reason: String, connectionLost: Bool = false) {
        self.operation = operation
        self.reason = reason
        self.connectionLost = connectionLost
    }

    public var description: String {
        "sound server: \(operation) failed: \(reason). Hint: `pactl info` shows whether a PulseAudio or PipeWire server answers for this user"
    }
}

/// One connection to the sound server with its own main loop, driven by the thread that made it
/// (never shared: libpulse's `pa_mainloop` is not thread-safe). Every call waits for its answer at
/// most until a deadline, so a server that is frozen or gone never holds the caller for long.
///
/// It never starts a server (no autospawn). Streams and subscriptions made on it are driven by
/// ``iterate(upTo:)``.
public final class PulseConnection {
    /// `PULSE_SERVER`'s value or the default, for messages.
    public let server: String
    let mainloop: OpaquePointer
    let context: OpaquePointer
    private let subscription: SubscriptionBox

    /// How long one call may take before the server counts as not answering.
    public static let answerLimit = Duration.milliseconds(800)

    /// Connects as `application` (shown in the server's mixers), waiting at most `limit`.
    public init(application: String = "snoozefuse", limit: Duration = .seconds(1)) throws(PulseError) {
        server = (getenv("PULSE_SERVER").map { String(cString: $0) }) ?? "default"
        if let missing = AudioLibraries.loadPulse() { throw PulseError(operation: "connect", reason: missing.description) }
        guard let mainloop = pa_mainloop_new() else { throw PulseError(operation: "connect", reason: "out of memory") }
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, application)
        pa_proplist_sets(properties, PA_PROP_APPLICATION_ID, "org.snoozefuse.snoozefuse")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_ICON_NAME, "alarm-symbolic")
        guard let context = pa_context_new_with_proplist(pa_mainloop_get_api(mainloop), application, properties) else {
            pa_mainloop_free(mainloop)
            throw PulseError(operation: "connect", reason: "out of memory")
        }
        self.mainloop = mainloop
        self.context = context
        subscription = SubscriptionBox()
        // The server libpulse finds (PULSE_SERVER, the user's runtime folder); never a new one.
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            let reason = String(cString: pa_strerror(pa_context_errno(context)))
            throw PulseError(operation: "connect to \(server)", reason: reason)
        }
        let deadline = BootInstant.now.advanced(by: limit)
        while true {
            let state = pa_context_get_state(context)
            if state == PA_CONTEXT_READY { break }
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
                throw PulseError(operation: "connect to \(server)", reason: String(cString: pa_strerror(pa_context_errno(context))))
            }
            guard BootInstant.now < deadline else {
                throw PulseError(operation: "connect to \(server)", reason: "no answer within \(limit.millisecondsDescription)", connectionLost: true)
            }
            iterate(upTo: .milliseconds(50))
        }
        pa_context_set_subscribe_callback(context, { _, event, index, userdata in
            guard let userdata else { return }
            Unmanaged<SubscriptionBox>.fromOpaque(userdata).takeUnretainedValue().note(event, index)
        }, Unmanaged.passUnretained(subscription).toOpaque())
    }

    deinit {
        pa_context_set_subscribe_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        pa_mainloop_free(mainloop)
    }

    /// Whether the connection still works.
    public var isAlive: Bool { pa_context_get_state(context) == PA_CONTEXT_READY }

    /// Runs the main loop once: waits at most `limit` for something to happen (an answer, a stream
    /// that can take more, recorded data, a change of a sink) and handles it.
    public func iterate(upTo limit: Duration) {
        let (seconds, attoseconds) = limit.components
        let microseconds = max(Int32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000), 0)
        guard pa_mainloop_prepare(mainloop, microseconds) >= 0 else { return }
        guard pa_mainloop_poll(mainloop) >= 0 else { return }
        _ = pa_mainloop_dispatch(mainloop)
    }

    /// Iterates until `done()` or `limit` has passed; throws when the connection died or the
    /// server did not answer.
    func wait(for operation: String, limit: Duration = PulseConnection.answerLimit, until done: () -> Bool) throws(PulseError) {
        let deadline = BootInstant.now.advanced(by: limit)
        while !done() {
            guard isAlive else { throw lost(operation) }
            guard BootInstant.now < deadline else {
                throw PulseError(operation: operation, reason: "no answer within \(limit.millisecondsDescription)", connectionLost: true)
            }
            iterate(upTo: .milliseconds(20))
        }
    }

    /// Waits for `operation` (a `pa_operation`, released here) to complete. When it does not in
    /// time, it is cancelled before this returns: libpulse then never calls its callback, whose
    /// userdata (a box on the caller's stack frame) is gone by then. A server that was frozen and
    /// wakes later delivers its late answer to no one.
    func complete(_ pending: OpaquePointer?, _ operation: String) throws(PulseError) {
        guard let pending else { throw failure(operation) }
        defer { pa_operation_unref(pending) }
        do throws(PulseError) {
            try wait(for: operation) { pa_operation_get_state(pending) != PA_OPERATION_RUNNING }
        } catch {
            pa_operation_cancel(pending)
            throw error
        }
    }

    func failure(_ operation: String) -> PulseError {
        PulseError(operation: operation, reason: String(cString: pa_strerror(pa_context_errno(context))), connectionLost: !isAlive)
    }

    func lost(_ operation: String) -> PulseError {
        PulseError(operation: operation, reason: "the connection to the server \(server) was lost (\(String(cString: pa_strerror(pa_context_errno(context)))))",
                   connectionLost: true)
    }

    // MARK: - The server and its sinks

    /// The server's name and version (`pulseaudio 16.1`, `PulseAudio (on PipeWire 0.3.65) 15.0.0`)
    /// and its default sink's name.
    public func serverInfo() throws(PulseError) -> (server: String, defaultSink: String?) {
        let box = Box<(String, String?)>()
        try complete(pa_context_get_server_info(context, { _, info, userdata in
            guard let info, let userdata else { return }
            let name = "\(String(cString: info.pointee.server_name)) \(String(cString: info.pointee.server_version))"
            let sink = info.pointee.default_sink_name.map { String(cString: $0) }
            Unmanaged<Box<(String, String?)>>.fromOpaque(userdata).takeUnretainedValue().values.append((name, sink))
        }, Unmanaged.passUnretained(box).toOpaque()), "read the server's information")
        guard let first = box.values.first else { throw failure("read the server's information") }
        return first
    }

    /// Every sink, as the server lists them.
    public func sinks() throws(PulseError) -> [PulseSink] {
        let box = Box<PulseSink>()
        try complete(pa_context_get_sink_info_list(context, Self.collectSink, Unmanaged.passUnretained(box).toOpaque()), "list the sinks")
        return box.values
    }

    /// The sink named `name`, or nil when the server has none of that name.
    public func sink(named name: String) throws(PulseError) -> PulseSink? {
        let box = Box<PulseSink>()
        try complete(pa_context_get_sink_info_by_name(context, name, Self.collectSink, Unmanaged.passUnretained(box).toOpaque()),
                     "read sink '\(name)'")
        return box.values.first
    }

    private static let collectSink: pa_sink_info_cb_t = { _, info, endOfList, userdata in
        guard endOfList == 0, let info, let userdata else { return }
        Unmanaged<Box<PulseSink>>.fromOpaque(userdata).takeUnretainedValue().values.append(PulseSink(info.pointee))
    }

    /// Mutes or unmutes `sink`.
    public func setMute(_ muted: Bool, sink: String) throws(PulseError) {
        try complete(pa_context_set_sink_mute_by_name(context, sink, muted ? 1 : 0, nil, nil), "\(muted ? "mute" : "unmute") sink '\(sink)'")
    }

    /// Sets every channel of `sink` (which has `channels`) to `percent` of its normal volume.
    public func setVolume(_ percent: Int, channels: Int, sink: String) throws(PulseError) {
        var volume = Self.volume(percent, channels: channels)
        try complete(pa_context_set_sink_volume_by_name(context, sink, &volume, nil, nil), "set the volume of sink '\(sink)' to \(percent) %")
    }

    /// `percent` of the normal volume on each of `channels`.
    private static func volume(_ percent: Int, channels: Int) -> pa_cvolume {
        var volume = pa_cvolume()
        let value = pa_volume_t(clamping: Int(snoozefuse_pa_volume_norm()) * max(percent, 0) / 100)
        pa_cvolume_set(&volume, UInt32(clamping: max(channels, 1)), value)
        return volume
    }

    /// Puts back the person's own volume and mute that `fix` keeps (on a sink with `channels`).
    /// Returns what was done, in words (`volume back to 5 % and muted again`).
    public func putBack(_ fix: SinkLevelFix, channels: Int) throws(PulseError) -> PutBack {
        if let now = try sink(named: fix.sink), let why = fix.changedSince(now.description) { return .leftAlone(why) }
        var done: [String] = []
        if let volume = fix.volumeBefore {
            try setVolume(volume, channels: channels, sink: fix.sink)
            done.append("volume back to \(volume) %")
        }
        if let muted = fix.mutedBefore {
            try setMute(muted, sink: fix.sink)
            done.append(muted ? "muted again" : "not muted")
        }
        return .restored(done.joined(separator: " and "))
    }

    /// What ``putBack(_:channels:)`` did.
    public enum PutBack: Sendable, Hashable {
        /// Put back (what, for people: `volume back to 20 % and muted again`).
        case restored(String)
        /// Left as it is: the person changed it since the alarm did (why).
        case leftAlone(String)
    }

    // MARK: - The alarm's own streams

    /// The mute and volume the server gives the stream (sink input) `index`: what it restored
    /// for it (module-stream-restore, WirePlumber's restore-stream) or what a mixer set since.
    /// Nil when the server has no such stream.
    public func streamLevel(_ index: UInt32) throws(PulseError) -> PulseStreamLevel? {
        let box = Box<PulseStreamLevel>()
        try complete(pa_context_get_sink_input_info(context, index, { _, info, endOfList, userdata in
            guard endOfList == 0, let info, let userdata else { return }
            Unmanaged<Box<PulseStreamLevel>>.fromOpaque(userdata).takeUnretainedValue().values.append(PulseStreamLevel(info.pointee))
        }, Unmanaged.passUnretained(box).toOpaque()), "read the alarm's stream \(index)")
        return box.values.first
    }

    /// Mutes or unmutes the stream (sink input) `index`.
    public func setStreamMute(_ muted: Bool, index: UInt32) throws(PulseError) {
        try complete(pa_context_set_sink_input_mute(context, index, muted ? 1 : 0, nil, nil), "\(muted ? "mute" : "unmute") the alarm's stream \(index)")
    }

    /// Sets every channel of the stream (sink input) `index` (which has `channels`) to `percent`
    /// of its normal volume.
    public func setStreamVolume(_ percent: Int, channels: Int, index: UInt32) throws(PulseError) {
        var volume = Self.volume(percent, channels: channels)
        try complete(pa_context_set_sink_input_volume(context, index, &volume, nil, nil), "set the volume of the alarm's stream \(index) to \(percent) %")
    }

    /// The properties of the alarm's streams: `media.role=alarm` and the application's name, id
    /// and icon (by which the servers remember, and restore, an alarm stream's mute and volume).
    /// The caller frees it.
    static func alarmStreamProperties() -> OpaquePointer? {
        let properties = pa_proplist_new()
        pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, "alarm")
        pa_proplist_sets(properties, PA_PROP_MEDIA_NAME, "Alarm")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, "snoozefuse")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_ID, "org.snoozefuse.snoozefuse")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_ICON_NAME, "alarm-symbolic")
        return properties
    }

    /// The mute and volume the server gives a new alarm stream on `sink`: what it remembers for
    /// alarm streams (module-stream-restore, WirePlumber's restore-stream), read from a stream
    /// opened corked (it never plays) and closed at once. Nil when the server reports none.
    public func restoredAlarmStreamLevel(sink: String) throws(PulseError) -> PulseStreamLevel? {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: 48_000, channels: 2)
        let properties = Self.alarmStreamProperties()
        defer { pa_proplist_free(properties) }
        guard let stream = pa_stream_new_with_proplist(context, "Alarm", &spec, nil, properties) else {
            throw failure("make a test stream for sink '\(sink)'")
        }
        defer {
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        guard pa_stream_connect_playback(stream, sink, nil, PA_STREAM_START_CORKED, nil, nil) >= 0 else {
            throw failure("open a test stream on sink '\(sink)'")
        }
        try wait(for: "open a test stream on sink '\(sink)'") { pa_stream_get_state(stream) != PA_STREAM_CREATING }
        guard pa_stream_get_state(stream) == PA_STREAM_READY else { throw failure("open a test stream on sink '\(sink)'") }
        return try streamLevel(pa_stream_get_index(stream))
    }

    // MARK: - Changes

    /// Asks the server to tell this connection about every change of a sink, of a stream played on
    /// one (a sink input: the alarm's own, muted in a mixer), or of the server (a new default);
    /// read them with ``takeChanges()`` and ``takeStreamChanges()`` after iterating.
    public func subscribeToSinks() throws(PulseError) {
        let mask = pa_subscription_mask_t(PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue
            | PA_SUBSCRIPTION_MASK_SERVER.rawValue)
        try complete(pa_context_subscribe(context, mask, nil, nil), "subscribe to changes of the sinks")
    }

    /// What changed since the last call: sink indices changed or added, sink indices removed,
    /// and whether the server itself changed (its default sink).
    public func takeChanges() -> (changed: Set<UInt32>, removed: Set<UInt32>, server: Bool) {
        subscription.take()
    }

    /// The streams (sink inputs) changed since the last call, by index.
    public func takeStreamChanges() -> Set<UInt32> {
        subscription.takeStreams()
    }

    /// Collects what a libpulse callback hands over, on the connection's own thread.
    final class Box<Value> {
        var values: [Value] = []
    }

    /// Sink changes, noted by the subscription callback (on the connection's thread).
    private final class SubscriptionBox {
        private var changed: Set<UInt32> = []
        private var removed: Set<UInt32> = []
        private var server = false
        private var streams: Set<UInt32> = []

        func note(_ event: pa_subscription_event_type_t, _ index: UInt32) {
            let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
            let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
            if facility == PA_SUBSCRIPTION_EVENT_SERVER.rawValue {
                server = true
            } else if facility == PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue {
                if type == PA_SUBSCRIPTION_EVENT_CHANGE.rawValue { streams.insert(index) }
            } else if facility == PA_SUBSCRIPTION_EVENT_SINK.rawValue {
                if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
                    removed.insert(index)
                    changed.remove(index)
                } else {
                    changed.insert(index)
                }
            }
        }

        func take() -> (changed: Set<UInt32>, removed: Set<UInt32>, server: Bool) {
            defer {
                changed = []
                removed = []
                server = false
            }
            return (changed, removed, server)
        }

        func takeStreams() -> Set<UInt32> {
            defer { streams = [] }
            return streams
        }
    }
}

/// A sink as the server describes it: what the alarm decides from (``SinkDescription``), and what
/// it needs to set its volume.
public struct PulseSink: Sendable, Hashable {
    public var index: UInt32
    public var channels: Int
    public var description: SinkDescription

    public var name: String { description.name }

    init(_ info: pa_sink_info) {
        index = info.index
        channels = Int(info.volume.channels)
        var volume = info.volume
        let loudest = pa_cvolume_max(&volume)
        let percent = Int((Double(loudest) * 100 / Double(snoozefuse_pa_volume_norm())).rounded())
        func property(_ key: String) -> String? {
            pa_proplist_gets(info.proplist, key).map { String(cString: $0) }
        }
        var portType: String?
        var available: Bool?
        var portName: String?
        var portDescription: String?
        if let port = info.active_port?.pointee {
            portType = Self.portTypes[port.type]
            portName = port.name.map { String(cString: $0) }
            portDescription = port.description.map { String(cString: $0) }
            if port.available == Int32(PA_PORT_AVAILABLE_NO.rawValue) { available = false }
            if port.available == Int32(PA_PORT_AVAILABLE_YES.rawValue) { available = true }
        }
        description = SinkDescription(
            name: String(cString: info.name), description: info.description.map { String(cString: $0) } ?? "",
            muted: info.mute != 0, volumePercent: percent, formFactor: property("device.form_factor"),
            bus: property("device.bus"), portType: portType, portAvailable: available,
            monitor: info.monitor_source_name.map { String(cString: $0) }, profile: property("device.profile.name"),
            portName: portName, portDescription: portDescription)
    }

    /// `pa_device_port_type_t` by value, in the words of ``SinkDescription/portType``.
    private static let portTypes: [UInt32: String] = [
        PA_DEVICE_PORT_TYPE_SPEAKER.rawValue: "speaker", PA_DEVICE_PORT_TYPE_HEADPHONES.rawValue: "headphones",
        PA_DEVICE_PORT_TYPE_LINE.rawValue: "line", PA_DEVICE_PORT_TYPE_HEADSET.rawValue: "headset",
        PA_DEVICE_PORT_TYPE_HANDSET.rawValue: "handset", PA_DEVICE_PORT_TYPE_EARPIECE.rawValue: "earpiece",
        PA_DEVICE_PORT_TYPE_SPDIF.rawValue: "spdif", PA_DEVICE_PORT_TYPE_HDMI.rawValue: "hdmi",
        PA_DEVICE_PORT_TYPE_USB.rawValue: "usb", PA_DEVICE_PORT_TYPE_BLUETOOTH.rawValue: "bluetooth",
        PA_DEVICE_PORT_TYPE_HANDSFREE.rawValue: "hands-free", PA_DEVICE_PORT_TYPE_ANALOG.rawValue: "analog",
        PA_DEVICE_PORT_TYPE_AUX.rawValue: "aux", PA_DEVICE_PORT_TYPE_TV.rawValue: "tv",
    ]
}

/// The mute and volume of one of the alarm's streams (a sink input), as the server has them.
public struct PulseStreamLevel: Sendable, Hashable {
    public var muted: Bool
    /// The loudest channel's volume in percent of normal (100 = 0 dB).
    public var volumePercent: Int
    public var channels: Int

    public init(muted: Bool, volumePercent: Int, channels: Int) {
        self.muted = muted
        self.volumePercent = volumePercent
        self.channels = channels
    }

    init(_ info: pa_sink_input_info) {
        var volume = info.volume
        let loudest = pa_cvolume_max(&volume)
        self.init(muted: info.mute != 0, volumePercent: Int((Double(loudest) * 100 / Double(snoozefuse_pa_volume_norm())).rounded()),
                  channels: Int(info.volume.channels))
    }
}

/// One stream of the alarm on a connection (``PulseConnection``): playing on a sink, or recording
/// a sink's monitor. Typed calls over libpulse's `pa_stream`, made on the connection's thread;
/// disconnected and released when it goes.
public final class PulseStream {
    /// The sink it plays on, or whose monitor it records.
    public let sink: String
    private let stream: OpaquePointer
    private let connection: PulseConnection

    private init(sink: String, stream: OpaquePointer, connection: PulseConnection) {
        self.sink = sink
        self.stream = stream
        self.connection = connection
    }

    deinit {
        pa_stream_disconnect(stream)
        pa_stream_unref(stream)
    }

    /// Plays float32 frames of `rate` and `channels` on `sink`, with the alarm's properties
    /// (`media.role=alarm`), a buffer of `bufferBytes` and periods of `periodBytes` (playback
    /// starts with the first period the server has); waits until the server made it.
    public static func playback(on connection: PulseConnection, sink: String, rate: Int, channels: Int,
                                bufferBytes: Int, periodBytes: Int) throws(PulseError) -> PulseStream {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: UInt8(channels))
        let properties = PulseConnection.alarmStreamProperties()
        defer { pa_proplist_free(properties) }
        guard let raw = pa_stream_new_with_proplist(connection.context, "Alarm", &spec, nil, properties) else {
            throw connection.failure("make a stream for sink '\(sink)'")
        }
        let stream = PulseStream(sink: sink, stream: raw, connection: connection)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(bufferBytes), prebuf: UInt32(periodBytes),
                                        minreq: UInt32(periodBytes), fragsize: UInt32.max)
        guard pa_stream_connect_playback(raw, sink, &attributes, PA_STREAM_ADJUST_LATENCY, nil, nil) >= 0 else {
            throw connection.failure("play on sink '\(sink)'")
        }
        try connection.wait(for: "play on sink '\(sink)'") { pa_stream_get_state(raw) != PA_STREAM_CREATING }
        guard stream.isReady else { throw connection.failure("play on sink '\(sink)'") }
        return stream
    }

    /// Records `source` (a sink's monitor) as mono float32 at `rate`, in fragments of
    /// `fragmentBytes`; `corked`: it records nothing until uncorked. It becomes ready by itself
    /// (nil when the server refuses it at once).
    public static func monitor(on connection: PulseConnection, sink: String, source: String, rate: Int,
                               fragmentBytes: Int, corked: Bool) -> PulseStream? {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: 1)
        guard let raw = pa_stream_new(connection.context, "Alarm proof", &spec, nil) else { return nil }
        let stream = PulseStream(sink: sink, stream: raw, connection: connection)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
                                        fragsize: UInt32(fragmentBytes))
        let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_DONT_MOVE.rawValue
            | (corked ? PA_STREAM_START_CORKED.rawValue : 0))
        guard pa_stream_connect_record(raw, source, &attributes, flags) >= 0 else { return nil }
        return stream
    }

    public var isReady: Bool { pa_stream_get_state(stream) == PA_STREAM_READY }
    /// It failed or was ended by the server (its sink gone, the server stopped).
    public var hasEnded: Bool {
        let state = pa_stream_get_state(stream)
        return state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED
    }
    /// The server's index of it (a sink input, for a playing stream); nil when it has none yet.
    public var index: UInt32? {
        let index = pa_stream_get_index(stream)
        return index == UInt32.max ? nil : index
    }
    /// How many bytes it takes now.
    public var writableBytes: Int {
        let room = pa_stream_writable_size(stream)
        return room == Int.max ? 0 : room
    }

    public func write(_ bytes: UnsafeRawPointer, count: Int) throws(PulseError) {
        guard pa_stream_write(stream, bytes, count, nil, 0, PA_SEEK_RELATIVE) >= 0 else {
            throw connection.failure("play on sink '\(sink)'")
        }
    }

    /// Hands each piece recorded so far to `take` (floats), or says how many frames a hole in the
    /// recording skipped (`hole`).
    public func read(_ take: (UnsafeBufferPointer<Float>) -> Void, hole: (Int) -> Void) {
        while pa_stream_readable_size(stream) > 0 {
            var data: UnsafeRawPointer?
            var length = 0
            guard pa_stream_peek(stream, &data, &length) >= 0, length > 0 else { return }
            if let data {
                take(UnsafeBufferPointer(start: data.bindMemory(to: Float.self, capacity: length / 4), count: length / 4))
            } else {
                hole(length / 4)
            }
            pa_stream_drop(stream)
        }
    }

    /// Stops (`true`) or starts the stream without waiting for the answer.
    public func cork(_ corked: Bool) {
        if let operation = pa_stream_cork(stream, corked ? 1 : 0, nil, nil) { pa_operation_unref(operation) }
    }

    /// Drops what is buffered, without waiting.
    public func flush() {
        if let operation = pa_stream_flush(stream, nil, nil) { pa_operation_unref(operation) }
    }

    /// Waits, at most `limit`, until every stream of `streams` has played what it was given.
    public static func drain(_ streams: [PulseStream], on connection: PulseConnection, limit: Duration) {
        let pending = streams.compactMap { pa_stream_drain($0.stream, nil, nil) }
        defer { pending.forEach { pa_operation_unref($0) } }
        let deadline = BootInstant.now.advanced(by: limit)
        while connection.isAlive, BootInstant.now < deadline, pending.contains(where: { pa_operation_get_state($0) == PA_OPERATION_RUNNING }) {
            connection.iterate(upTo: .milliseconds(50))
        }
    }
}

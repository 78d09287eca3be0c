// An example snoozefuse plugin in Swift: a sound source (a soft two-tone chime) and a pulse
// emitter (logs each pulse through the host), behind the C ABI only.
//
// Build (from the repository root):
//     swiftc -emit-library -parse-as-library -O -module-name ExampleSwiftPlugin \
//         -I Sources/SnoozeFusePluginABI/include Examples/swift-plugin/Plugin.swift -o example-swift.so
// Check:
//     snoozefuse plugins check example-swift.so
//
// Rules for Swift plugins: import only the C module SnoozeFusePluginABI (never a Swift module of
// the host); export the entry as a PUBLIC @_cdecl function; keep render free of allocation, locks
// and class references (this one keeps its state in a plain struct behind a pointer).

import SnoozeFusePluginABI

#if canImport(Glibc)
import Glibc
#endif

/// A C string that lives as long as the library (string literals in StaticString are static data).
private func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Writes `text` into the host's message buffer (truncated, always NUL-terminated).
private func report(_ text: String, _ message: UnsafeMutablePointer<CChar>?, _ capacity: UInt32) {
    guard let message, capacity > 0 else { return }
    let bytes = Array(text.utf8.prefix(Int(capacity) - 1))
    for (index, byte) in bytes.enumerated() { message[index] = CChar(bitPattern: byte) }
    message[bytes.count] = 0
}

/// The sound source's state: a plain struct, so render touches no reference counts.
private struct Chime {
    var rate: Float = 48_000
    var channels: UInt32 = 1
    var frame: UInt32 = 0
    var volume: Float = 0.5
}

private func chimeState(_ source: UnsafeMutablePointer<snoozefuse_sound_source>?) -> UnsafeMutablePointer<Chime> {
    source!.pointee.plugin_data.assumingMemoryBound(to: Chime.self)
}

private let createSource: @convention(c) (
    UnsafePointer<snoozefuse_host>?, UnsafeMutablePointer<UnsafeMutablePointer<snoozefuse_sound_source>?>?,
    UnsafeMutablePointer<CChar>?, UInt32
) -> snoozefuse_status = { _, out, _, _ in
    let state = UnsafeMutablePointer<Chime>.allocate(capacity: 1)
    state.initialize(to: Chime())
    let source = UnsafeMutablePointer<snoozefuse_sound_source>.allocate(capacity: 1)
    source.initialize(to: snoozefuse_sound_source(
        struct_size: UInt32(MemoryLayout<snoozefuse_sound_source>.size), reserved0: 0, plugin_data: UnsafeMutableRawPointer(state),
        activate: { source, rate, channels, _, config, message, capacity in
            let state = chimeState(source)
            state.pointee = Chime(rate: Float(rate), channels: channels)
            if let config, let text = Optional(String(cString: config)), !text.isEmpty {
                guard text.hasPrefix("volume="), let volume = Float(text.dropFirst(7)), (0 ... 1).contains(volume) else {
                    report("expected volume=0..1, got \"\(text)\"", message, capacity)
                    return snoozefuse_status(SNOOZEFUSE_STATUS_INVALID_CONFIG)
                }
                state.pointee.volume = volume
            }
            return snoozefuse_status(SNOOZEFUSE_STATUS_OK)
        },
        render: { source, out, frames in
            let state = chimeState(source)
            guard let out else { return snoozefuse_status(SNOOZEFUSE_STATUS_WRONG_STATE) }
            let rate = state.pointee.rate, channels = Int(state.pointee.channels)
            for index in 0 ..< Int(frames) {
                let t = Float(state.pointee.frame) / rate
                let pitch: Float = t < 0.5 ? 659.25 : 523.25 // E5 then C5, each ringing out
                let local = t < 0.5 ? t : t - 0.5
                let sample = state.pointee.volume * expf(-5 * local) * sinf(2 * .pi * pitch * local)
                for channel in 0 ..< channels { out[index * channels + channel] = sample }
                state.pointee.frame = (state.pointee.frame + 1) % UInt32(rate * 1.5)
            }
            return snoozefuse_status(SNOOZEFUSE_STATUS_OK)
        },
        deactivate: { _ in },
        destroy: { source in
            guard let source else { return }
            chimeState(source).deallocate()
            source.deallocate()
        }))
    out?.pointee = source
    return snoozefuse_status(SNOOZEFUSE_STATUS_OK)
}

/// The emitter keeps the host pointer to log through it.
private let createEmitter: @convention(c) (
    UnsafePointer<snoozefuse_host>?, UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<snoozefuse_pulse_emitter>?>?,
    UnsafeMutablePointer<CChar>?, UInt32
) -> snoozefuse_status = { host, _, out, _, _ in
    let emitter = UnsafeMutablePointer<snoozefuse_pulse_emitter>.allocate(capacity: 1)
    emitter.initialize(to: snoozefuse_pulse_emitter(
        struct_size: UInt32(MemoryLayout<snoozefuse_pulse_emitter>.size), reserved0: 0,
        plugin_data: UnsafeMutableRawPointer(mutating: host),
        emit: { emitter, intensity, milliseconds, _, _ in
            if let host = emitter?.pointee.plugin_data?.assumingMemoryBound(to: snoozefuse_host.self), let log = host.pointee.log {
                log(host, Int32(SNOOZEFUSE_LOG_DEBUG.rawValue), "swift example: pulse \(intensity) for \(milliseconds) ms")
            }
            return snoozefuse_status(SNOOZEFUSE_STATUS_OK)
        },
        cancel: { _ in },
        destroy: { $0?.deallocate() }))
    out?.pointee = emitter
    return snoozefuse_status(SNOOZEFUSE_STATUS_OK)
}

// Written once, the first time the entry runs (Swift initializes globals lazily and exactly once),
// then only read by the host; so the unsynchronized global is safe.
nonisolated(unsafe) private let descriptor: UnsafeMutablePointer<snoozefuse_plugin_descriptor> = {
    let pointer = UnsafeMutablePointer<snoozefuse_plugin_descriptor>.allocate(capacity: 1)
    pointer.initialize(to: snoozefuse_plugin_descriptor(
        struct_size: UInt32(MemoryLayout<snoozefuse_plugin_descriptor>.size),
        abi_major: SNOOZEFUSE_PLUGIN_ABI_MAJOR, abi_minor: SNOOZEFUSE_PLUGIN_ABI_MINOR,
        kinds: UInt32(SNOOZEFUSE_KIND_SOUND_SOURCE | SNOOZEFUSE_KIND_PULSE_EMITTER), features: 0,
        id: cString("org.example.swift-chime"), name: cString("Swift chime (example)"), version: cString("1.0.0"),
        vendor: cString("Example Author"), description: cString("The Swift example from PLUGINS.md"),
        config_help: cString("volume=0..1: loudness (default 0.5)"),
        create_sound_source: createSource, create_pulse_emitter: createEmitter, get_extension: nil))
    return pointer
}()

/// The one exported symbol. Public, so it is exported in release builds too.
@_cdecl("snoozefuse_plugin_entry")
public func snoozefusePluginEntry() -> UnsafePointer<snoozefuse_plugin_descriptor>? {
    UnsafePointer(descriptor)
}

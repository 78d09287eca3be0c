public import Logging
import SnoozeFusePluginABI
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The ABI version this host speaks.
public enum PluginABI {
    public static let major = UInt32(SNOOZEFUSE_PLUGIN_ABI_MAJOR)
    public static let minor = UInt32(SNOOZEFUSE_PLUGIN_ABI_MINOR)
    public static let entrySymbol = SNOOZEFUSE_PLUGIN_ENTRY_SYMBOL
}

/// A validated plugin: its descriptor (as Swift values) and the C descriptor it creates instances from.
///
/// `@unchecked Sendable`: the descriptor is immutable data inside a library that is never unloaded
/// (`RTLD_NODELETE`, and the host never calls `dlclose`), so the pointer stays valid and is only read.
public final class LoadedPlugin: @unchecked Sendable, CustomStringConvertible {
    public let info: PluginInfo
    let descriptor: UnsafePointer<snoozefuse_plugin_descriptor>
    let host: PluginHostInterface

    init(info: PluginInfo, descriptor: UnsafePointer<snoozefuse_plugin_descriptor>, host: PluginHostInterface) {
        self.info = info
        self.descriptor = descriptor
        self.host = host
    }

    public var description: String { "\(info.id) \(info.version) (\(info.path))" }
}

/// Loads one plugin file: `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)`, the entry function,
/// and every check of the descriptor. Never `dlclose`s (Swift code in a plugin would make the host
/// crash later), so a library stays mapped even when it is refused.
public enum PluginLoader {
    /// - Throws: `PluginError` naming `path`.
    public static func load(path: String, logger: Logger) throws(PluginError) -> LoadedPlugin {
        func fail(_ reason: PluginError.Reason) -> PluginError { PluginError(path: path, reason: reason) }
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            throw fail(.openFailed(dlerror().map { String(cString: $0) } ?? "unknown dlopen error"))
        }
        guard let symbol = dlsym(handle, PluginABI.entrySymbol) else { throw fail(.missingEntry) }
        let entry = unsafeBitCast(symbol, to: snoozefuse_plugin_entry_fn.self)
        guard let descriptor = entry() else { throw fail(.nullDescriptor) }
        let info = try validate(descriptor, path: path)
        var pluginLogger = logger
        pluginLogger[metadataKey: "plugin"] = "\(info.id)"
        return LoadedPlugin(info: info, descriptor: descriptor, host: PluginHostInterface(logger: pluginLogger))
    }

    /// Every check of ABI 1.0's descriptor rules; returns the descriptor as Swift values.
    static func validate(_ pointer: UnsafePointer<snoozefuse_plugin_descriptor>, path: String) throws(PluginError) -> PluginInfo {
        func fail(_ reason: PluginError.Reason) -> PluginError { PluginError(path: path, reason: reason) }
        // struct_size, abi_major and abi_minor keep their place in every major version (rule 9).
        let raw = UnsafeRawPointer(pointer)
        let major = raw.load(fromByteOffset: 4, as: UInt32.self)
        let minor = raw.load(fromByteOffset: 8, as: UInt32.self)
        guard major == PluginABI.major else {
            throw fail(.abiMajorMismatch(plugin: major, pluginMinor: minor, host: PluginABI.major, hostMinor: PluginABI.minor))
        }
        let size = raw.load(as: UInt32.self)
        let expected = MemoryLayout<snoozefuse_plugin_descriptor>.size
        guard Int(size) >= expected else {
            throw fail(.structTooSmall(name: "snoozefuse_plugin_descriptor", size: size, expected: expected))
        }
        let d = pointer.pointee
        func string(_ value: UnsafePointer<CChar>?, _ field: String) throws(PluginError) -> String {
            guard let value else { throw fail(.missingField("descriptor.\(field)")) }
            return String(cString: value)
        }
        let id = try string(d.id, "id")
        guard PluginInfo.isValidID(id) else { throw fail(.invalidID(id)) }
        let kinds = PluginKinds(rawValue: d.kinds).intersection(.known)
        guard !kinds.isEmpty else { throw fail(.noKnownKind(d.kinds)) }
        if kinds.contains(.soundSource), d.create_sound_source == nil {
            throw fail(.missingField("descriptor.create_sound_source (the plugin declares a sound source)"))
        }
        if kinds.contains(.pulseEmitter), d.create_pulse_emitter == nil {
            throw fail(.missingField("descriptor.create_pulse_emitter (the plugin declares a pulse emitter)"))
        }
        return PluginInfo(
            id: id, name: try string(d.name, "name"), version: try string(d.version, "version"),
            vendor: try string(d.vendor, "vendor"), summary: d.description.map { String(cString: $0) },
            configHelp: d.config_help.map { String(cString: $0) }, kinds: kinds, features: d.features,
            abiMajor: major, abiMinor: minor, path: path)
    }
}

/// The `snoozefuse_host` handed to plugins: its `log` goes to a swift-log `Logger`.
///
/// `@unchecked Sendable`: the C struct and its strings are written once in `init` and only read
/// afterwards; they are never freed, because a plugin may keep the pointer for as long as it lives,
/// and plugins are never unloaded. `Logger` is itself `Sendable`.
public final class PluginHostInterface: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<snoozefuse_host>
    public let logger: Logger

    private final class Box: Sendable {
        let logger: Logger
        init(logger: Logger) { self.logger = logger }
    }

    /// `version`: what `host->version` says (the program's release when nil).
    public init(logger: Logger, version: String? = nil) {
        self.logger = logger
        pointer = .allocate(capacity: 1)
        let box = Unmanaged.passRetained(Box(logger: logger)).toOpaque()
        pointer.initialize(to: snoozefuse_host(
            struct_size: UInt32(MemoryLayout<snoozefuse_host>.size),
            abi_major: PluginABI.major, abi_minor: PluginABI.minor, reserved0: 0,
            name: UnsafePointer(strdup("snoozefuse")), version: UnsafePointer(strdup(version ?? BuildStamp.release)),
            host_data: box,
            log: { host, level, message in
                guard let host, let data = host.pointee.host_data, let message else { return }
                let logger = Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().logger
                let text = Logger.Message(stringLiteral: String(cString: message))
                switch level {
                case 0: logger.debug(text)
                case 1: logger.info(text)
                case 2: logger.warning(text)
                default: logger.error(text)
                }
            },
            get_extension: { _, _ in nil }))
    }
}

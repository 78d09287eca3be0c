/// What a plugin can create.
public struct PluginKinds: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `SNOOZEFUSE_KIND_SOUND_SOURCE`
    public static let soundSource = PluginKinds(rawValue: 1 << 0)
    /// `SNOOZEFUSE_KIND_PULSE_EMITTER`
    public static let pulseEmitter = PluginKinds(rawValue: 1 << 1)
    public static let known: PluginKinds = [.soundSource, .pulseEmitter]

    /// Names for people and JSON: `sound-source`, `pulse-emitter`.
    public var names: [String] {
        var names: [String] = []
        if contains(.soundSource) { names.append("sound-source") }
        if contains(.pulseEmitter) { names.append("pulse-emitter") }
        return names
    }
}

/// The descriptor of a loaded plugin, copied into Swift values.
public struct PluginInfo: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var version: String
    public var vendor: String
    public var summary: String?
    /// The keys its configuration accepts, one `key=values: meaning` per line.
    public var configHelp: String?
    public var kinds: PluginKinds
    public var features: UInt64
    public var abiMajor: UInt32
    public var abiMinor: UInt32
    /// The file it was loaded from.
    public var path: String

    /// Names of the `SNOOZEFUSE_FEATURE_*` bits set.
    public var featureNames: [String] {
        let names: [(UInt64, String)] = [(1 << 0, "stereo"), (1 << 1, "hardware"), (1 << 2, "runs-commands"), (1 << 3, "sleep-sound")]
        var result = names.filter { features & $0.0 != 0 }.map(\.1)
        let unknown = features & ~UInt64(0b1111)
        if unknown != 0 { result.append("unknown(0x\(String(unknown, radix: 16)))") }
        return result
    }

    /// `^[a-z0-9]+(\.[a-z0-9-]+)+$`, at most 127 bytes.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard !bytes.isEmpty, bytes.count <= 127 else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for (index, label) in labels.enumerated() {
            guard !label.isEmpty else { return false }
            for byte in label {
                let lower = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
                let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                let dash = byte == UInt8(ascii: "-") && index > 0
                guard lower || digit || dash else { return false }
            }
        }
        return true
    }
}

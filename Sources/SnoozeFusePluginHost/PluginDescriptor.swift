/// What a plugin can create.
public struct PluginKinds: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `SNOOZEFUSE_KIND_SOUND_SOURCE`
    public static let soundSource = PluginKinds(rawValue: 1 << 0)
    /// `SNOOZEFUSE_KIND_PULSE_EMITTER`
    public static let pulseEmitter = PluginKinds(rawValue: 1 << 1)
    public static let known: PluginKinds = [.soundSource, .pulseEmitter]

    /// Names for people and JSON, the `SNOOZEFUSE_KIND_*` constants in lower case:
    /// `sound_source`, `pulse_emitter`.
    public var names: [String] {
        var names: [String] = []
        if contains(.soundSource) { names.append("sound_source") }
        if contains(.pulseEmitter) { names.append("pulse_emitter") }
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

    /// The `SNOOZEFUSE_FEATURE_*` bits this host knows, named as the constants in lower case.
    public static let knownFeatures: [(bit: UInt64, name: String)] = [
        (1 << 0, "stereo"), (1 << 1, "hardware"), (1 << 2, "runs_commands"), (1 << 3, "sleep_sound"),
    ]

    /// Names of the known feature bits set.
    public var knownFeatureNames: [String] {
        Self.knownFeatures.filter { features & $0.bit != 0 }.map(\.name)
    }

    /// Feature bits set that this host does not know (ignored, rule 8 of the header).
    public var unknownFeatures: UInt64 {
        Self.knownFeatures.reduce(features) { $0 & ~$1.bit }
    }

    /// Names of the feature bits set, for people: the known ones, then `unknown(0x…)`.
    public var featureNames: [String] {
        knownFeatureNames + (unknownFeatures == 0 ? [] : ["unknown(0x\(String(unknownFeatures, radix: 16)))"])
    }

    /// The id prefix of the plugins installed with snoozefuse: a plugin found anywhere else with an
    /// id that starts with it is refused, so `--source tone` always means the built-in tone.
    public static let reservedPrefix = "org.snoozefuse."

    /// Whether the id starts with ``reservedPrefix``.
    public var usesReservedPrefix: Bool { id.hasPrefix(Self.reservedPrefix) }

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

import SnoozeFuseRuntime

/// One plugin in `plugins list --json` and `plugins info --json` (documented in PLUGINS.md).
struct PluginJSON: Encodable {
    var id: String
    var name: String
    var version: String
    var vendor: String
    var summary: String?
    var configHelp: String?
    /// `sound_source`, `pulse_emitter`.
    var kinds: [String]
    /// `stereo`, `hardware`, `runs_commands`, `sleep_sound`.
    var features: [String]
    /// Feature bits this snoozefuse does not know, as hexadecimal (`0x10`); absent when none.
    var unknownFeatureBits: String?
    var abiMajor: UInt32
    var abiMinor: UInt32
    var path: String

    init(_ info: PluginInfo) {
        id = info.id
        name = info.name
        version = info.version
        vendor = info.vendor
        summary = info.summary
        configHelp = info.configHelp
        kinds = info.kinds.names
        features = info.knownFeatureNames
        unknownFeatureBits = info.unknownFeatures == 0 ? nil : "0x" + String(info.unknownFeatures, radix: 16)
        abiMajor = info.abiMajor
        abiMinor = info.abiMinor
        path = info.path
    }
}

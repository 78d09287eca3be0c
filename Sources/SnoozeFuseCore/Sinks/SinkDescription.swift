/// A sound server's sink as the alarm sees it: what it is (form factor, bus, the active port) and
/// how loud it is now. Read from the server (PulseAudio, or PipeWire through pipewire-pulse); the
/// routing, the level fix and `doctor` decide from it.
public struct SinkDescription: Sendable, Hashable, Codable {
    /// The server's name of the sink (`alsa_output.pci-0000_00_1f.3.analog-stereo`, `speakers`).
    public var name: String
    /// Its name for people.
    public var description: String
    public var muted: Bool
    /// The loudest channel's volume in percent of the sink's normal volume (100 = 0 dB).
    public var volumePercent: Int
    /// `device.form_factor`: `internal`, `speaker`, `headset`, `headphone`, `hands-free`, … or nil.
    public var formFactor: String?
    /// `device.bus`: `pci`, `usb`, `bluetooth`, … or nil.
    public var bus: String?
    /// The active port's type (`speaker`, `headphones`, `headset`, `bluetooth`, `hdmi`, …), when the
    /// server says.
    public var portType: String?
    /// Whether the active port has something plugged in: `false` only when the server knows it
    /// has not (headphones unplugged); nil when it cannot tell.
    public var portAvailable: Bool?
    /// The source that carries what the sink plays (`NAME.monitor`).
    public var monitor: String?
    /// `device.profile.name`: the card profile the sink belongs to (`analog-stereo`,
    /// `hdmi-stereo`, `hdmi-stereo-extra1`, `a2dp_sink`, `headset_head_unit`, …), when the server says.
    public var profile: String?
    /// The active port's name (`analog-output-speaker`, `hdmi-output-0`, …) and its description for
    /// people (`HDMI / DisplayPort 2`), when the server says.
    public var portName: String?
    public var portDescription: String?

    public init(name: String, description: String = "", muted: Bool = false, volumePercent: Int = 100,
                formFactor: String? = nil, bus: String? = nil, portType: String? = nil,
                portAvailable: Bool? = nil, monitor: String? = nil, profile: String? = nil,
                portName: String? = nil, portDescription: String? = nil) {
        self.name = name
        self.description = description.isEmpty ? name : description
        self.muted = muted
        self.volumePercent = volumePercent
        self.formFactor = formFactor
        self.bus = bus
        self.portType = portType
        self.portAvailable = portAvailable
        self.monitor = monitor
        self.profile = profile
        self.portName = portName
        self.portDescription = portDescription
    }

    /// Worn by one person (a headset, headphones, a Bluetooth device): an alarm there may play into
    /// a headset lying on the desk.
    public var isPersonal: Bool {
        if let formFactor, ["headset", "headphone", "headphones", "hands-free", "handset"].contains(formFactor) { return true }
        if bus == "bluetooth" { return true }
        if let portType, ["headphones", "headset", "bluetooth", "handset", "earpiece"].contains(portType) { return true }
        return false
    }

    /// A display's audio (HDMI, DisplayPort, a television): the screen may be off, have no
    /// speakers, or be muted with its own remote, and the server cannot tell. Known by the active
    /// port's type or name, the card profile, the form factor, or (for servers that say nothing
    /// else) the sink's own name and description.
    public var isDisplay: Bool {
        if let portType, ["hdmi", "tv"].contains(portType) { return true }
        if formFactor == "tv" { return true }
        let words = [profile, portName, portDescription, name, description].compactMap { $0?.lowercased() }
        return words.contains { Self.find("hdmi", in: $0) || Self.find("displayport", in: $0) }
    }

    /// A loudspeaker of the machine (or one it drives): its form factor or its active port says so.
    /// A display is not one, though its card calls itself internal.
    public var isSpeaker: Bool {
        guard !isPersonal, !isDisplay else { return false }
        if let formFactor, ["internal", "speaker", "computer"].contains(formFactor) { return true }
        if let portType, ["speaker", "line", "analog"].contains(portType) { return true }
        return false
    }

    /// Nothing can be heard from it: its port reports nothing plugged in.
    public var isUnplugged: Bool { portAvailable == false }

    /// What kind of output it is, in a few words for people (`headset on bluetooth`, `display
    /// (HDMI) on pci`).
    public var kind: String {
        let what = isDisplay ? "display (\(displayKind))" : formFactor ?? portType ?? "sink"
        return bus.map { "\(what) on \($0)" } ?? what
    }

    /// Whether `word` (ASCII) is in `text`, by bytes: the core does without the string search of
    /// `_StringProcessing` (see Package.swift).
    private static func find(_ word: StaticString, in text: String) -> Bool {
        let bytes = Array(text.utf8)
        let count = word.utf8CodeUnitCount
        guard count <= bytes.count else { return false }
        return word.withUTF8Buffer { word in
            (0 ... bytes.count - count).contains { start in word.indices.allSatisfy { bytes[start + $0] == word[$0] } }
        }
    }

    /// HDMI, DisplayPort or TV, from what the server says.
    private var displayKind: String {
        let words = [portDescription, portName, profile, description, name].compactMap { $0?.lowercased() }
        if words.contains(where: { Self.find("displayport", in: $0) }) && !words.contains(where: { Self.find("hdmi", in: $0) }) { return "DisplayPort" }
        if portType == "tv" || formFactor == "tv" { return "TV" }
        return "HDMI"
    }
}

/// Where the alarm plays when a sound server runs (`--route`).
public enum AlarmRoute: Sendable, Hashable, CustomStringConvertible {
    /// The default sink only.
    case defaultSink
    /// The default sink, and the machine's speakers too when the default is worn by one person
    /// (a headset, headphones, Bluetooth). The default.
    case wake
    /// Every sink the server has (but those with nothing plugged in).
    case all
    /// These sinks, by name, in this order.
    case sinks([String])

    /// Parses `default`, `wake`, `all` or `SINK[,SINK…]`; nil for an empty list.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: " ")
        switch trimmed {
        case "default": self = .defaultSink
        case "wake": self = .wake
        case "all": self = .all
        default:
            let names = trimmed.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
            guard !names.isEmpty, names.count == trimmed.split(separator: ",", omittingEmptySubsequences: false).count else { return nil }
            self = .sinks(names)
        }
    }

    public var description: String {
        switch self {
        case .defaultSink: "default"
        case .wake: "wake"
        case .all: "all"
        case .sinks(let names): names.joined(separator: ",")
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}

import CALSA

/// The system's playback volume through the ALSA mixer: set for the alarm, restored after.
///
/// Looks for the first simple element with a playback volume named `Master`, else `PCM`, else
/// `Speaker`, on the mixer of `card` (`default` follows the configuration, e.g. to PulseAudio's
/// mixer). Not thread-safe: one owner at a time.
public final class SystemMixerVolume {
    /// Which element it controls.
    public let elementName: String
    /// The card (mixer device) it attached to.
    public let card: String

    private var mixer: OpaquePointer?
    private let element: OpaquePointer
    private let savedVolumes: [(snd_mixer_selem_channel_id_t, Int)]
    private let savedSwitches: [(snd_mixer_selem_channel_id_t, Int32)]
    private let minimum: Int
    private let maximum: Int

    /// Opens the mixer and remembers the current volume and mute switches.
    /// - Throws: `ALSAError` (operation `mixer`) when there is no mixer or no suitable element.
    public init(card: String = "default") throws(ALSAError) {
        self.card = card
        var handle: OpaquePointer?
        try ALSACall.check(device: card, .mixer, detail: "opening the mixer") { snd_mixer_open(&handle, 0) }
        guard let handle else { throw ALSAError(device: card, operation: .mixer, code: .noMemory) }
        do {
            try ALSACall.check(device: card, .mixer, detail: "attaching") { snd_mixer_attach(handle, card) }
            try ALSACall.check(device: card, .mixer, detail: "registering") { snd_mixer_selem_register(handle, nil, nil) }
            try ALSACall.check(device: card, .mixer, detail: "loading") { snd_mixer_load(handle) }
        } catch {
            snd_mixer_close(handle)
            throw error
        }
        var found: [String: OpaquePointer] = [:]
        var element = snd_mixer_first_elem(handle)
        while let current = element {
            if snd_mixer_selem_is_active(current) != 0, snd_mixer_selem_has_playback_volume(current) != 0,
               let name = snd_mixer_selem_get_name(current) {
                found[String(cString: name)] = current
            }
            element = snd_mixer_elem_next(current)
        }
        guard let (name, chosen) = ["Master", "PCM", "Speaker"].lazy
            .compactMap({ name in found[name].map { (name, $0) } }).first else {
            snd_mixer_close(handle)
            throw ALSAError(device: card, operation: .mixer, code: .noSuchEntry,
                            detail: "no Master, PCM or Speaker playback volume")
        }
        var low = 0, high = 0
        snd_mixer_selem_get_playback_volume_range(chosen, &low, &high)
        var volumes: [(snd_mixer_selem_channel_id_t, Int)] = []
        var switches: [(snd_mixer_selem_channel_id_t, Int32)] = []
        for raw in 0 ... SND_MIXER_SCHN_LAST.rawValue {
            let channel = snd_mixer_selem_channel_id_t(rawValue: raw)
            guard snd_mixer_selem_has_playback_channel(chosen, channel) != 0 else { continue }
            var value = 0
            if snd_mixer_selem_get_playback_volume(chosen, channel, &value) == 0 { volumes.append((channel, value)) }
            var on: Int32 = 0
            if snd_mixer_selem_has_playback_switch(chosen) != 0,
               snd_mixer_selem_get_playback_switch(chosen, channel, &on) == 0 {
                switches.append((channel, on))
            }
        }
        mixer = handle
        self.element = chosen
        elementName = name
        minimum = low
        maximum = high
        savedVolumes = volumes
        savedSwitches = switches
    }

    deinit {
        restore()
    }

    /// The volume found at `init`: the loudest channel, in percent of the element's range.
    public var foundPercent: Int? {
        guard let loudest = savedVolumes.map(\.1).max(), maximum > minimum else { return nil }
        return (loudest - minimum) * 100 / (maximum - minimum)
    }

    /// Whether every channel was muted at `init` (its playback switch off).
    public var foundMuted: Bool {
        !savedSwitches.isEmpty && savedSwitches.allSatisfy { $0.1 == 0 }
    }

    /// Sets every channel to `percent` (0–100, linear in the element's raw range) and unmutes.
    public func set(percent: Int) throws(ALSAError) {
        guard mixer != nil else { return }
        let value = minimum + (maximum - minimum) * min(max(percent, 0), 100) / 100
        try ALSACall.check(device: card, .mixer, detail: "setting \(elementName) to \(percent) %") {
            snd_mixer_selem_set_playback_volume_all(element, value)
        }
        if !savedSwitches.isEmpty {
            _ = snd_mixer_selem_set_playback_switch_all(element, 1)
        }
    }

    /// Puts back the volume and mute switches found at `init`, and closes the mixer. Idempotent.
    public func restore() {
        guard let mixer else { return }
        self.mixer = nil
        for (channel, value) in savedVolumes {
            _ = snd_mixer_selem_set_playback_volume(element, channel, value)
        }
        for (channel, on) in savedSwitches {
            _ = snd_mixer_selem_set_playback_switch(element, channel, on)
        }
        snd_mixer_close(mixer)
    }
}

extension ALSAError.Operation {
    /// A mixer call (`snd_mixer_*`).
    public static let mixer = ALSAError.Operation(rawValue: "mixer")
}

@available(*, unavailable)
extension SystemMixerVolume: Sendable {}

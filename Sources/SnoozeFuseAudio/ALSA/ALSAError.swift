/// A failed ALSA call: which device, which operation, the code alsa-lib returned and what alsa-lib
/// said about it (captured instead of being printed to stderr).
public struct ALSAError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The ALSA operation that failed.
    public struct Operation: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// `snd_pcm_open`.
        public static let open = Operation(rawValue: "open")
        /// Negotiating hardware parameters (format, rate, channels, buffer): `snd_pcm_hw_params*`.
        public static let hwParams = Operation(rawValue: "hw_params")
        /// `snd_pcm_prepare`.
        public static let prepare = Operation(rawValue: "prepare")
        /// `snd_pcm_writei`.
        public static let write = Operation(rawValue: "write")
        /// `snd_pcm_recover` after an xrun or suspend.
        public static let recover = Operation(rawValue: "recover")
        /// `snd_pcm_drain`.
        public static let drain = Operation(rawValue: "drain")
        /// `snd_pcm_drop`.
        public static let drop = Operation(rawValue: "drop")
        /// `snd_pcm_close`.
        public static let close = Operation(rawValue: "close")
        /// `snd_pcm_avail_update` / `snd_pcm_delay`.
        public static let status = Operation(rawValue: "status")
        /// `snd_device_name_hint`.
        public static let listDevices = Operation(rawValue: "list devices")
        /// Starting the audio thread (`pthread_create`); `code` is the errno it returned.
        public static let startThread = Operation(rawValue: "start audio thread")
        /// A call to the sound server through libpulse (`PulseSinkOutput`, which the audio thread
        /// drives as it drives an ALSA PCM); `detail` is the ``PulseError``'s whole text.
        public static let soundServer = Operation(rawValue: "sound server")

        public var description: String { rawValue }
    }

    /// What kind of failure this is, for callers that decide what to do next.
    public enum Kind: Sendable, Hashable {
        /// No such PCM: the name is not defined, or it refers to a card that does not exist.
        case noSuchDevice
        /// A sound-server plugin (`pulse`, `pipewire`, `jack`) found no server.
        case noSoundServer
        /// The device is in use by another program.
        case busy
        /// No permission to open the device.
        case permissionDenied
        /// The device supports none of the requested configurations.
        case unsupportedConfiguration
        /// The device vanished while streaming (`EIO`, `ENODEV`, `EBADFD`). The PCM cannot be used
        /// again: close it and reopen (with backoff) or move to the next device.
        case deviceLost
        /// Anything else.
        case other
    }

    /// The PCM name as given to `snd_pcm_open` (`default`, `hw:0`, `file:FILE=…`).
    public var device: String
    /// The operation that failed.
    public var operation: Operation
    /// The error alsa-lib returned (as a positive errno).
    public var code: ALSAErrno
    /// What alsa-lib reported while the operation ran, oldest first.
    public var messages: [ALSAMessage]
    /// Extra detail from this library (e.g. which parameter could not be set).
    public var detail: String?

    public init(device: String, operation: Operation, code: ALSAErrno, messages: [ALSAMessage] = [],
                detail: String? = nil) {
        self.device = device
        self.operation = operation
        self.code = code
        self.messages = messages
        self.detail = detail
    }

    /// The failure classified by operation, code and alsa-lib's messages.
    public var kind: Kind {
        if operation == .soundServer {
            return code == .connectionRefused ? .noSoundServer : .deviceLost
        }
        if operation != .open && operation != .listDevices && code.meansDeviceLost {
            return .deviceLost
        }
        if operation == .open && mentionsMissingCard {
            // `hw:N` answers ENOENT, EINVAL (N ≥ 32) or ENODEV (`hw:CARD=name`) for a missing card.
            return .noSuchDevice
        }
        switch code {
        case .busy: return .busy
        case .permissionDenied, .notPermitted: return .permissionDenied
        case .connectionRefused: return .noSoundServer
        case .noSuchEntry, .noDevice, .noSuchDeviceOrAddress:
            return operation == .open ? .noSuchDevice : .other
        case .invalidArgument:
            return operation == .hwParams ? .unsupportedConfiguration : .other
        default:
            return .other
        }
    }

    /// `true` when the PCM must be closed and reopened (see `Kind.deviceLost`).
    public var isDeviceLost: Bool { kind == .deviceLost }

    /// `true` when alsa-lib's messages say the PCM refers to a sound card that does not exist.
    private var mentionsMissingCard: Bool {
        messages.contains { message in
            message.text.contains("cannot find card") || message.text.contains("Cannot get card index")
                || message.function == "parse_card" || message.function == "snd_config_get_card"
        }
    }

    /// What the user can do about it.
    public var suggestion: String? {
        if code == .timedOut {
            return "the device or its sound server does not answer (stopped, hung or overloaded); check it "
                + "(`pactl info` for PulseAudio) or choose another --device"
        }
        switch kind {
        case .noSuchDevice:
            if mentionsMissingCard {
                return "there is no sound card or sound server on this machine; "
                    + "try --device file:FILE=alarm.wav,FORMAT=wav (records the alarm to a file) or start PulseAudio"
            }
            return "no PCM of that name is defined; `snoozefuse devices` lists the ones that are"
        case .noSoundServer:
            return "the sound server is not running; start PulseAudio or PipeWire, or choose another --device"
        case .busy:
            return "another program is using the device; close it, or use `default` to share the card through the sound server"
        case .permissionDenied:
            return "no permission to use the sound device; add the user to the `audio` group or use the sound server"
        case .unsupportedConfiguration:
            return "the device accepts none of the requested formats; try the `plug:` prefix or `default`"
        case .deviceLost:
            return "the device or sound server went away; reopen it or switch to another device"
        case .other:
            return nil
        }
    }

    /// For example: `ALSA open failed on PCM 'default': No such file or directory (ENOENT). alsa-lib:
    /// cannot find card '0'; … — there is no sound card or sound server on this machine; try …`.
    public var description: String {
        if operation == .soundServer, let detail { return detail }
        var text = "ALSA \(operation) failed on PCM '\(device)': \(code)"
        if let detail { text += " (\(detail))" }
        text += "."
        if !messages.isEmpty {
            text += " alsa-lib: " + messages.map(\.description).joined(separator: "; ") + "."
        }
        if let suggestion { text += " Hint: \(suggestion)." }
        return text
    }
}

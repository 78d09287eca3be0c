import CALSA
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A PCM that alsa-lib's configuration advertises (`snd_device_name_hint`), for `snoozefuse devices`.
public struct ALSAPCMDevice: Sendable, Hashable {
    /// Which directions a PCM advertises (its `IOID` hint; none means both).
    public enum Direction: String, Sendable, Hashable {
        case playback = "Output"
        case capture = "Input"
        case both
    }

    /// Whether the PCM could be opened for playback.
    public enum Probe: Sendable, Hashable {
        /// Not tried (listing without probing, or a capture-only PCM).
        case notProbed
        /// It opened for playback (and was closed again at once).
        case opens
        /// It did not open; the error says why.
        case fails(ALSAError)

        /// `true` for `.opens`.
        public var opens: Bool {
            if case .opens = self { return true }
            return false
        }
    }

    /// The name to pass to `--device` / `PCMOutput(device:)`, e.g. `null`, `pulse`, `hw:CARD=PCH,DEV=0`.
    public var name: String
    /// alsa-lib's description (may span lines, e.g. card name then device name).
    public var description: String?
    /// Playback, capture or both.
    public var direction: Direction
    /// The playback probe's result.
    public var probe: Probe

    public init(name: String, description: String?, direction: Direction, probe: Probe) {
        self.name = name
        self.description = description
        self.direction = direction
        self.probe = probe
    }

    /// `true` when the PCM can be used for playback according to its hint.
    public var canPlay: Bool { direction != .capture }
}

/// Listing ALSA PCMs.
public enum ALSADeviceList {
    /// The PCMs alsa-lib knows (`snd_device_name_hint(-1, "pcm")`), in its order.
    ///
    /// With `probe`, every PCM that can play is opened for playback (non-blocking, so a busy device
    /// answers `EBUSY` instead of waiting) and closed again; `probe` reports the result. alsa-lib's own
    /// messages are captured into the errors. Note that some plugins' libraries print to stderr by
    /// themselves (libjack does when no JACK server runs); that output does not pass through alsa-lib.
    ///
    /// A sound server that does not answer (a stopped PulseAudio) makes alsa-lib wait for ever, in
    /// the open of a PCM on it and in loading the configuration, whose hooks ask the server: each
    /// probe runs on a thread of its own and is given `answerLimit`, after which it fails with
    /// `ETIMEDOUT`; the listing is given three times that.
    /// - Throws: `ALSAError` (`listDevices`), `ETIMEDOUT` when the listing did not return in time.
    public static func pcmDevices(probe: Bool = true, answerLimit: Duration = .seconds(1)) throws(ALSAError) -> [ALSAPCMDevice] {
        let listLimit = answerLimit * 3
        guard let listed = BoundedCall.start(named: "snoozefuse-list", {
            Result { () throws(ALSAError) in try listPCMs() }
        }).wait(atMost: listLimit) else {
            throw ALSAError(device: "(all)", operation: .listDevices, code: .timedOut,
                            detail: "alsa-lib did not list the PCMs within \(listLimit): loading its configuration did not finish (a hook that asks a sound server which does not answer, or a file that cannot be read)")
        }
        var devices = try listed.get()
        guard probe else { return devices }
        for index in devices.indices where devices[index].canPlay {
            let name = devices[index].name
            devices[index].probe = probePlayback(name, answerLimit: answerLimit)
        }
        return devices
    }

    private static func listPCMs() throws(ALSAError) -> [ALSAPCMDevice] {
        var hintsPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        try ALSACall.check(device: "(all)", .listDevices) {
            snd_device_name_hint(-1, "pcm", &hintsPointer)
        }
        guard let hints = hintsPointer else { return [] }
        defer { snd_device_name_free_hint(hints) }

        var devices: [ALSAPCMDevice] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = hintValue(hint, "NAME") else { continue }
            let direction: ALSAPCMDevice.Direction = switch hintValue(hint, "IOID") {
            case "Output": .playback
            case "Input": .capture
            default: .both
            }
            devices.append(ALSAPCMDevice(name: name, description: hintValue(hint, "DESC"), direction: direction, probe: .notProbed))
        }
        return devices
    }

    /// ``probePlayback(_:)`` on a thread of its own, given `answerLimit` to answer (then it fails
    /// with `ETIMEDOUT`; the open may still return later, on its thread).
    public static func probePlayback(_ name: String, answerLimit: Duration) -> ALSAPCMDevice.Probe {
        BoundedCall.start(named: "snoozefuse-probe") { probePlayback(name) }.wait(atMost: answerLimit)
            ?? .fails(ALSAError(device: name, operation: .open, code: .timedOut, detail: "no answer within \(answerLimit)"))
    }

    /// Tries to open `name` for playback (non-blocking) and closes it again.
    public static func probePlayback(_ name: String) -> ALSAPCMDevice.Probe {
        do throws(ALSAError) {
            let pcm = try PCMOutput.open(device: name, nonBlocking: true)
            snd_pcm_close(pcm)
            return .opens
        } catch {
            return .fails(error)
        }
    }

    private static func hintValue(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}

import Glibc
import SnoozeFuseAudio

/// One ALSA PCM as `snoozefuse devices` shows it.
public struct AudioDevice: Sendable, Hashable, Encodable {
    /// The name to pass to `--device`.
    public var name: String
    /// alsa-lib's description (may span lines).
    public var description: String?
    /// `Output`, `Input` or `both`.
    public var direction: String
    /// Whether it opened for playback (nil: not tried).
    public var opens: Bool?
    /// Why it did not open: the errno's name, with the reason where it helps.
    public var error: String?
}

/// Lists the ALSA PCMs and opens each that can play (and closes it again at once). Each PCM gets
/// one second to answer (then `ETIMEDOUT`), the listing three.
public enum DeviceListing {
    /// The PCMs, each opened when `probe` says so; throws a line naming what failed when they
    /// cannot be listed (exit 69).
    public static func list(probe: Bool = true) throws(DeviceListingError) -> [AudioDevice] {
        let devices: [ALSAPCMDevice]
        do {
            // Some plugins' libraries (libjack) print to fd 2 by themselves while probing: keep it quiet.
            devices = try withQuietStandardError { () throws(ALSAError) in try ALSADeviceList.pcmDevices(probe: probe) }
        } catch {
            throw DeviceListingError(description: "\(error)")
        }
        return devices.map { entry(for: $0) }
    }

    /// Opens `name` for playback (and closes it again), whether alsa-lib lists it or not (a PCM of
    /// `~/.asoundrc`, a `default` that the listing leaves out); it gets one second to answer.
    public static func probe(_ name: String) -> AudioDevice {
        let probe = ALSADeviceList.probePlayback(name, answerLimit: .seconds(1))
        return entry(for: ALSAPCMDevice(name: name, description: nil, direction: .playback, probe: probe))
    }

    private static func entry(for device: ALSAPCMDevice) -> AudioDevice {
        var entry = AudioDevice(name: device.name, description: device.description, direction: device.direction.rawValue)
        switch device.probe {
        case .notProbed: break
        case .opens: entry.opens = true
        case .fails(let error):
            entry.opens = false
            entry.error = "\(error.code)"
            if error.code == .timedOut, let detail = error.detail {
                entry.error? += " (\(detail))"
            } else if error.kind == .noSuchDevice || error.kind == .noSoundServer {
                entry.error? += " (\(error.kind))"
            }
        }
        return entry
    }
}

/// The PCMs could not be listed.
public struct DeviceListingError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// Runs `body` with file descriptor 2 pointed at /dev/null, restoring it after.
func withQuietStandardError<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
    if saved >= 0, null >= 0 { dup2(null, STDERR_FILENO) }
    if null >= 0 { close(null) }
    defer {
        if saved >= 0 {
            dup2(saved, STDERR_FILENO)
            close(saved)
        }
    }
    return try body()
}

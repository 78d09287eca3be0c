import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error code returned by alsa-lib. alsa-lib functions return `-code` (a negative errno) on
/// failure; `rawValue` is the positive errno, as in `<errno.h>`.
///
/// The static members name the codes ALSA playback code meets, with what they mean for a PCM.
public struct ALSAErrno: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The positive errno value (`ENOENT` is 2); alsa-lib returned its negation.
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Builds the code from an alsa-lib return value (`-ENOENT` → `.noSuchEntry`).
    public init(returnValue: some BinaryInteger) {
        self.rawValue = -Int32(truncatingIfNeeded: returnValue)
    }

    /// The value alsa-lib returned (the negated errno).
    public var returnValue: Int32 { -rawValue }

    /// `EPERM`: operation not permitted.
    public static var notPermitted: ALSAErrno { ALSAErrno(rawValue: EPERM) }
    /// `ENOENT`: no such PCM, card or device. `default` and `hw:N` on a machine with no sound card
    /// and no sound server fail to open with this; so does an unknown PCM name.
    public static var noSuchEntry: ALSAErrno { ALSAErrno(rawValue: ENOENT) }
    /// `EINTR`: a blocking call was interrupted by a signal; retried transparently.
    public static var interrupted: ALSAErrno { ALSAErrno(rawValue: EINTR) }
    /// `EIO`: input/output error. While streaming it means the device (or the sound server behind
    /// it) is gone; `snd_pcm_recover` cannot fix it: close and reopen.
    public static var ioError: ALSAErrno { ALSAErrno(rawValue: EIO) }
    /// `ENXIO`: no such device or address.
    public static var noSuchDeviceOrAddress: ALSAErrno { ALSAErrno(rawValue: ENXIO) }
    /// `EAGAIN`: would block (only in non-blocking mode).
    public static var wouldBlock: ALSAErrno { ALSAErrno(rawValue: EAGAIN) }
    /// `ENOMEM`: out of memory.
    public static var noMemory: ALSAErrno { ALSAErrno(rawValue: ENOMEM) }
    /// `EACCES`: permission denied (for example no access to `/dev/snd/*`: join the `audio` group).
    public static var permissionDenied: ALSAErrno { ALSAErrno(rawValue: EACCES) }
    /// `EBUSY`: the device is in use by another program (typical for `hw:` devices).
    public static var busy: ALSAErrno { ALSAErrno(rawValue: EBUSY) }
    /// `ENODEV`: the device was removed (USB unplugged). Close and reopen.
    public static var noDevice: ALSAErrno { ALSAErrno(rawValue: ENODEV) }
    /// `EINVAL`: invalid argument; for hw_params, a configuration the device does not support.
    public static var invalidArgument: ALSAErrno { ALSAErrno(rawValue: EINVAL) }
    /// `EPIPE`: xrun. For playback an underrun: the device ran out of frames. Recovered with
    /// `snd_pcm_recover`.
    public static var xrun: ALSAErrno { ALSAErrno(rawValue: EPIPE) }
    /// `ESTRPIPE`: the stream was suspended (system suspend). Recovered with `snd_pcm_recover`.
    public static var suspended: ALSAErrno { ALSAErrno(rawValue: ESTRPIPE) }
    /// `EBADFD`: the PCM is in a bad state (file descriptor in bad state); close and reopen.
    public static var badState: ALSAErrno { ALSAErrno(rawValue: EBADFD) }
    /// `ECONNREFUSED`: a sound-server plugin (e.g. `pulse`) found no server to connect to.
    public static var connectionRefused: ALSAErrno { ALSAErrno(rawValue: ECONNREFUSED) }
    /// `ETIMEDOUT`: a call did not return in the time this library gave it (a device or sound server
    /// that does not answer); set by this library, alsa-lib itself waits for ever.
    public static var timedOut: ALSAErrno { ALSAErrno(rawValue: ETIMEDOUT) }

    /// The codes after which the PCM cannot be used again and must be closed and reopened.
    public var meansDeviceLost: Bool {
        self == .ioError || self == .noDevice || self == .badState
    }

    /// alsa-lib's text for the code (`snd_strerror`), e.g. "No such file or directory".
    public var message: String {
        String(cString: snd_strerror(-rawValue))
    }

    /// The C constant's name when known (`ENOENT`), else the number.
    public var symbol: String {
        switch rawValue {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case EINTR: "EINTR"
        case EIO: "EIO"
        case ENXIO: "ENXIO"
        case EAGAIN: "EAGAIN"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EBUSY: "EBUSY"
        case ENODEV: "ENODEV"
        case EINVAL: "EINVAL"
        case EPIPE: "EPIPE"
        case ESTRPIPE: "ESTRPIPE"
        case EBADFD: "EBADFD"
        case ECONNREFUSED: "ECONNREFUSED"
        case ETIMEDOUT: "ETIMEDOUT"
        default: "errno \(rawValue)"
        }
    }

    /// For example `No such file or directory (ENOENT)`.
    public var description: String { "\(message) (\(symbol))" }
}

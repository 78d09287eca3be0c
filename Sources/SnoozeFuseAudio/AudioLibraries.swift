import CALSA
import CEbur128
import CPulse
import CSampleRate
import CSndFile
import SnoozeFuseSystem

/// The C libraries an alarm plays through, each linked on its first call rather than when the
/// program starts (CLazyLink; issue 23): libsndfile, alsa-lib, libsamplerate, and libpulse where
/// a sound server answers.
public enum AudioLibraries {
    /// A library that cannot be loaded, and why.
    public struct Missing: Error, Sendable, Hashable, CustomStringConvertible {
        public var file: String
        public var package: String
        public var reason: String

        public var description: String { "cannot load \(file) (\(reason)): install Debian's package \(package)" }
    }

    /// Loads libsndfile, alsa-lib and libsamplerate now, so that a nap that cannot play its alarm
    /// ends before it begins and never at its alarm (the first call of a library that cannot load
    /// ends the program). libpulse is loaded by each connection to a sound server, whose failure is
    /// the server's (``PulseConnection``).
    public static func loadForAlarm() throws(Missing) {
        try load(file: "libsndfile.so.1", package: "libsndfile1") { snoozefuse_sndfile_load($0, $1) }
        try load(file: "libasound.so.2", package: "libasound2") { snoozefuse_alsa_load($0, $1) }
        try load(file: "libsamplerate.so.0", package: "libsamplerate0") { snoozefuse_samplerate_load($0, $1) }
    }

    /// Loads libpulse; `nil` once loaded, else why not.
    static func loadPulse() -> Missing? {
        do { try load(file: "libpulse.so.0", package: "libpulse0") { snoozefuse_pulse_load($0, $1) } } catch { return error }
        return nil
    }

    /// Loads libebur128 (a sound's loudness: an import, a validation, a nap setting its alarm's
    /// level); `nil` once loaded, else why not.
    static func loadLoudness() -> Missing? {
        do { try load(file: "libebur128.so.1", package: "libebur128-1") { snoozefuse_ebur128_load($0, $1) } } catch { return error }
        return nil
    }

    private static func load(file: String, package: String,
                             _ loader: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(Missing) {
        if let reason = LazyLibrary.failure(of: loader) { throw Missing(file: file, package: package, reason: reason) }
    }
}

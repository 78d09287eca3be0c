import CALSA
import CSndFile

/// The versions of the C audio libraries this process is linked against, as they report them.
public enum AudioLibraryVersions {
    /// libsndfile's own version string, e.g. `libsndfile-1.2.0`.
    public static var sndfile: String { String(cString: sf_version_string()) }

    /// alsa-lib's version, e.g. `1.2.8`.
    public static var alsa: String { String(cString: snd_asoundlib_version()) }
}

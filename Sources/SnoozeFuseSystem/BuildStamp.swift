import CLinux

/// What the running program was built from: the commit `make build` stamps into it (nil in a
/// plain `swift build`, which stamps nothing).
public enum BuildStamp {
    /// The release number: the one place it is written (`make deb`, `make dist` and the package
    /// test read it from here; `--version` prints it, and plugins get it as `host->version`).
    public static let release = "0.2.0"

    public static var commit: String? {
        snoozefuse_build_commit_or_null().map { String(cString: $0) }
    }
}

import CLinux

/// What the running program was built from: the commit `make build` stamps into it (nil in a
/// plain `swift build`, which stamps nothing).
public enum BuildStamp {
    public static var commit: String? {
        snoozefuse_build_commit_or_null().map { String(cString: $0) }
    }
}

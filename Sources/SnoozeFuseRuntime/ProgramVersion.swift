import SnoozeFuseSystem

/// The program's version: the one place it is written (the Makefile's `make deb` and `make dist`
/// read it from here), and what `--version` prints with the commit the program was built from.
public enum ProgramVersion {
    /// The release number.
    public static let number = "0.2.0"

    /// `snoozefuse 0.2.0 (a1b2c3d4e5f6)`, or without the commit when none was stamped in.
    public static var text: String {
        "snoozefuse \(number)" + (BuildStamp.commit.map { " (\($0))" } ?? "")
    }
}

import SnoozeFuseSystem

/// The program's version: what `--version` prints with the commit the program was built from.
public enum ProgramVersion {
    /// The release number (written in one place: ``BuildStamp/release``).
    public static let number = BuildStamp.release

    /// `snoozefuse 0.2.0 (a1b2c3d4e5f6)`, or without the commit when none was stamped in.
    public static var text: String {
        "snoozefuse \(number)" + (BuildStamp.commit.map { " (\($0))" } ?? "")
    }
}

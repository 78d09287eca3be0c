import Glibc

/// A program that ships with `snoozefuse` and that it starts (the plugin host, the guardian's
/// watch): it sits next to the executable in a build folder or a test's, and in
/// `PREFIX/lib/snoozefuse/` for an executable installed in `PREFIX/bin/`.
public enum CompanionProgram {
    /// Where the program `name` is looked for, beside the executable at `executablePath`.
    public static func candidates(_ name: String, beside executablePath: String?) -> [String] {
        guard let executablePath else { return [] }
        let folder = parent(of: executablePath)
        var found = [folder + "/" + name]
        if lastComponent(of: folder) == "bin" {
            found.append(parent(of: folder) + "/lib/snoozefuse/" + name)
        }
        return found
    }

    /// The first of ``candidates(_:beside:)`` that this process may run; nil when none.
    public static func locate(_ name: String, beside executablePath: String?) -> String? {
        candidates(name, beside: executablePath).first { access($0, X_OK) == 0 }
    }

    /// `/usr/local/bin` for `/usr/local/bin/snoozefuse`; `/` for `/snoozefuse`; `.` for a bare name.
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `snoozefuse` for `/usr/local/bin/snoozefuse` (and for `/usr/local/bin/snoozefuse/`).
    public static func lastComponent(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

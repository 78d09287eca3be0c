import Glibc

/// The names in a folder, read with `readdir`: for short commands, where FileManager's listing
/// (and the NSError it builds for a folder that is not there) is much of their work (issue 23).
public enum FolderEntries {
    /// The names in `path`, without `.` and `..`, in no order; nil when it cannot be opened
    /// (`errno` says why).
    public static func names(in path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}

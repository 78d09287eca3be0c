public import Foundation

/// The built-in alarm sounds shipped with the program (the repository's `Sounds/` folder), found
/// at run time relative to the executable (SPEC §4):
///
/// 1. installed: `PREFIX/share/snoozefuse/sounds`, with the executable in `PREFIX/bin`;
/// 2. run straight from a checkout's build folder: walk up from the executable to the folder that
///    holds the package's `Package.swift`, and use its `Sounds/`.
public struct BuiltInSounds: Sendable, Hashable {
    /// The folder the sounds are in.
    public let folder: URL

    /// The file name extension of a built-in sound.
    public static let fileExtension = "caf"

    /// The sound `nap` plays when none is chosen.
    public static let defaultName = "beep"

    /// File name extensions that make a `--sound` argument a path rather than a built-in's name.
    public static let soundFileExtensions: Set<String> = [
        "caf", "wav", "wave", "aif", "aiff", "aifc", "flac", "ogg", "oga", "opus", "mp3",
        "au", "snd", "w64", "rf64",
    ]

    public init(folder: URL) {
        self.folder = folder.standardizedFileURL
    }

    /// The built-in sounds for the running executable, or nil when no folder exists where they
    /// should be (an incomplete install).
    public static func locate() -> BuiltInSounds? {
        locate(executable: runningExecutable)
    }

    /// The built-in sounds for the executable at `executable`, or nil if none of the
    /// ``candidateFolders(executable:)`` exists.
    public static func locate(executable: URL) -> BuiltInSounds? {
        let files = FileManager.default
        for candidate in candidateFolders(executable: executable) {
            var isFolder: ObjCBool = false
            if files.fileExists(atPath: candidate.path, isDirectory: &isFolder), isFolder.boolValue {
                return BuiltInSounds(folder: candidate)
            }
        }
        return nil
    }

    /// Where the sounds are looked for, best first: the install layout next to the executable, then
    /// the `Sounds/` of the nearest enclosing checkout (a folder with a `Package.swift` that names
    /// this package).
    public static func candidateFolders(executable: URL) -> [URL] {
        let binFolder = executable.resolvingSymlinksInPath().deletingLastPathComponent().standardizedFileURL
        var candidates = [
            binFolder.deletingLastPathComponent()
                .appendingPathComponent("share/snoozefuse/sounds", isDirectory: true).standardizedFileURL,
        ]
        var folder = binFolder
        while true {
            let manifest = folder.appendingPathComponent("Package.swift")
            if let text = try? String(contentsOf: manifest, encoding: .utf8), text.contains("name: \"snoozefuse\"") {
                candidates.append(folder.appendingPathComponent("Sounds", isDirectory: true))
                break
            }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { break }
            folder = parent
        }
        return candidates
    }

    /// The names of the sounds, sorted: each `<name>.caf` in the folder.
    public var names: [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries
            .filter { ($0 as NSString).pathExtension == Self.fileExtension && !$0.hasPrefix(".") }
            .map { ($0 as NSString).deletingPathExtension }
            .sorted()
    }

    /// The path of the sound called `name`, or nil if there is none.
    public func path(named name: String) -> String? {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else { return nil }
        let path = folder.appendingPathComponent("\(name).\(Self.fileExtension)").path
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }

    /// Whether a `--sound` argument is a file path (it contains a `/` or ends in a sound file
    /// extension) rather than the name of a built-in sound.
    public static func isPath(_ argument: String) -> Bool {
        if argument.contains("/") { return true }
        let suffix = (argument as NSString).pathExtension.lowercased()
        return soundFileExtensions.contains(suffix)
    }

    /// The running executable: `/proc/self/exe`, else the first command-line argument.
    public static var runningExecutable: URL {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: target)
        }
        let argument = CommandLine.arguments.first ?? ""
        return URL(fileURLWithPath: argument, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    }
}

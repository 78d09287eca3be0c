public import Foundation

/// Makes a fresh private folder (mode 0700) under the system's temporary directory and returns it.
/// The caller removes it (`defer { try? FileManager.default.removeItem(at: folder) }`); for a
/// folder that removes itself, use `TemporaryFolder`.
///
/// Private because some tests make it a runtime folder (`XDG_RUNTIME_DIR`), which PulseAudio
/// refuses when others may enter it.
public func makeTemporaryDirectory(prefix: String = "snoozefuse-test") throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                            attributes: [.posixPermissions: 0o700])
    return url
}

/// A scratch folder for one test, made by `makeTemporaryDirectory` and removed with everything in it
/// when the value goes away. Keep the value itself (not only its `url`) for as long as the files
/// are needed.
public final class TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL

    public init(prefix: String = "snoozefuse-test") throws {
        url = try makeTemporaryDirectory(prefix: prefix)
    }

    /// The path of `name` in the folder (the file need not exist).
    public func path(_ name: String) -> String { file(name).path }

    /// The URL of `name` in the folder (the file need not exist).
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

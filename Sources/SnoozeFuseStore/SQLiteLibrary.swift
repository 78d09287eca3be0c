import CSQLite

/// SQLite is linked on first use (CSQLite's trampolines): the store loads it before it opens a
/// database, so that a library that cannot be loaded is a ``StoreError`` the caller reports (a nap
/// then goes on without the settings and saved presets, and keeps its history for later), never the
/// trampoline's last resort, which ends the program at its first SQLite call.
enum SQLiteLibrary {
    static let file = "libsqlite3.so.0"

    static func load() throws(StoreError) {
        var why = [CChar](repeating: 0, count: 256)
        let size = why.count
        guard why.withUnsafeMutableBufferPointer({ snoozefuse_sqlite_load($0.baseAddress!, size) }) != 0 else { return }
        let reason = why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw StoreError(.libraryUnavailable, subject: file, message: "SQLite cannot be loaded (\(reason)): install it (Debian package `libsqlite3-0`)")
    }
}

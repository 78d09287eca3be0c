/// A failure of the store: which file or folder, what went wrong, and what to do about it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The environment does not say where the files go (no `HOME`, a relative XDG path).
        case badConfiguration
        /// A file or folder could not be created, read, written, locked or renamed.
        case fileSystem(errno: Int32)
        /// The SQLite index could not be opened, migrated, read or written.
        case database
        /// The database is not a usable SQLite database (not SQLite at all, truncated, corrupt, or
        /// not the schema this release reads). ``SoundIndex/init(file:movingDamagedAside:now:)``
        /// moves such a file aside when told to; everything else reports it and leaves it alone.
        case damaged
        /// The database was written by a newer release of snoozefuse (it records schema changes
        /// this release does not know): refused, and left exactly as it is.
        case newerRelease
        /// Another process holds a lock this call would have had to wait for (the index's write
        /// lock, or the sounds folder's lock) longer than it waits.
        case busy
        /// A name is already used by another sound or preset.
        case nameTaken
        /// No sound or preset has this name.
        case notFound
        /// SQLite itself cannot be loaded (linked on first use: uninstalled, damaged); `subject`
        /// names the file, the message the package to install.
        case libraryUnavailable
    }

    public var kind: Kind
    /// The file, folder or name concerned.
    public var subject: String
    public var message: String

    public init(_ kind: Kind, subject: String, message: String) {
        self.kind = kind
        self.subject = subject
        self.message = message
    }

    public var description: String { "\(subject): \(message)" }
}

/// A failure of the store: which file or folder, what went wrong, and what to do about it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The environment does not say where the files go (no `HOME`, a relative XDG path).
        case badConfiguration
        /// A file or folder could not be created, read, written, locked or renamed.
        case fileSystem(errno: Int32)
        /// The SQLite index could not be opened, migrated, read or written.
        case database
        /// The index is not a usable SQLite database (not SQLite at all, corrupt, or not the sound
        /// index's schema). ``SoundIndex/openForWriting(file:movingDamagedAsideTo:)`` moves such a
        /// file aside; a reader reports it.
        case damaged
        /// Another process holds a lock this call would have had to wait for (the index's write
        /// lock, or the sounds folder's lock) longer than it waits.
        case busy
        /// A name is already used by another sound.
        case nameTaken
        /// No sound has this name.
        case notFound
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

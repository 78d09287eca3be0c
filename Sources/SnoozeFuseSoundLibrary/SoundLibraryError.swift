import SnoozeFuseAudio
import SnoozeFuseStore

/// Why a sound-library operation failed, with a message that names the file or sound and says what
/// to do. ``Kind`` decides the command line's exit status.
public struct SoundLibraryError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The input file is missing or unreadable (exit 66).
        case missingInput
        /// The input is not sound that can be decoded or repaired (exit 65).
        case badData
        /// No sound has the name given (exit 66).
        case notFound
        /// The request is not allowed: a built-in sound would be removed, renamed or overwritten, or
        /// a name is taken or empty (exit 64).
        case refused
        /// The library's folder or index cannot be used, or writing failed (exit 78).
        case storage
        /// A system library the operation needs cannot be loaded (exit 69).
        case unavailable
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    init(_ error: SoundFileError) {
        let kind: Kind = error.isMissingInput ? .missingInput : error.isBadData ? .badData : .storage
        self.init(kind, error.description)
    }

    init(_ error: StoreError) {
        switch error.kind {
        case .notFound: self.init(.notFound, error.description)
        case .nameTaken: self.init(.refused, error.description)
        case .damaged:
            self.init(.storage, "\(error.subject): the sound index is damaged: \(error.message). Your sounds are safe: each sound file holds its own name, and `snoozefuse sounds list` moves the damaged index aside (it is kept, never deleted) and rebuilds the index from the files.")
        case .badConfiguration, .fileSystem, .database, .busy, .newerRelease: self.init(.storage, error.description)
        case .libraryUnavailable: self.init(.unavailable, error.description)
        }
    }
}

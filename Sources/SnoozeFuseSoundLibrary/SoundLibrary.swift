public import Foundation
public import SnoozeFuseAudio
public import SnoozeFuseStore

/// A sound `sounds list` shows: a built-in (shipped with the program, read-only) or an imported one.
public struct LibrarySound: Sendable {
    public var name: String
    public var isBuiltIn: Bool
    public var path: String
    /// The index record of an imported sound.
    public var stored: StoredSound?
    /// What libsndfile reports for a built-in (nil if the file cannot be opened).
    public var info: SoundFileInfo?
}

/// What an import did.
public struct ImportResult: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// A new sound was stored.
        case imported
        /// The same audio is in the library already (``sound`` is that sound); nothing was stored.
        case duplicate
    }

    public var outcome: Outcome
    public var sound: StoredSound
    /// Repairs applied in memory to decode the input.
    public var repairs: [String]
    /// How the audio was stored, e.g. `WAV (Microsoft), Signed 24 bit PCM → CAF, Signed 24 bit PCM (lossless)`.
    public var conversion: String
    /// The name asked for or derived from the file, when the stored name differs from it.
    public var requestedName: String?
}

/// The user's sound library: the built-in sounds plus the sounds imported into
/// `$XDG_DATA_HOME/snoozefuse/sounds`, indexed in `library.sqlite`.
///
/// Built-in names are reserved (compared without case): no imported sound takes one, and built-ins
/// cannot be removed, renamed or overwritten (``SoundLibraryError/Kind/refused``).
public struct SoundLibrary: Sendable {
    /// The names of the built-in sounds the program ships, reserved even when their files are missing.
    public static let reservedNames = ["beep", "chime", "rising", "digital", "gentle"]

    public let paths: StorePaths
    public let folder: SoundsFolder
    /// Built-in name → file path.
    public let builtIns: [String: String]
    /// Files the opening cleanup deleted (temporary files of interrupted imports, stored files the
    /// index does not list).
    public let removedStaleFiles: [String]
    let index: SoundIndex

    /// Opens the library (creating its folders, mode 0700, and index, mode 0600) and removes what
    /// interrupted imports or removals left behind.
    public init(paths: StorePaths, builtIns: [String: String]) throws(SoundLibraryError) {
        self.paths = paths
        self.builtIns = builtIns
        do {
            try PrivateFolders.ensure(paths.data)
            let folder = try SoundsFolder(url: paths.soundsFolder)
            let index = try SoundIndex(file: paths.database)
            self.folder = folder
            self.index = index
            let cleanup = try folder.withLock { () throws(StoreError) -> [String] in
                let known = Set(try index.all().map(\.storedFileName))
                return try folder.removeStaleFiles(keeping: known)
            }
            removedStaleFiles = try cleanup.get()
        } catch {
            throw SoundLibraryError(error)
        }
    }

    /// Whether `name` is a built-in's name (reserved), compared without case.
    public func isBuiltIn(_ name: String) -> Bool {
        let folded = name.lowercased()
        return Self.reservedNames.contains(folded) || builtIns.keys.contains { $0.lowercased() == folded }
    }

    /// Built-ins first (sorted), then imported sounds (by name).
    public func list() throws(SoundLibraryError) -> [LibrarySound] {
        var sounds: [LibrarySound] = builtIns.keys.sorted().map { name in
            let path = builtIns[name]!
            return LibrarySound(name: name, isBuiltIn: true, path: path, stored: nil,
                                info: try? SoundFile(readingAtPath: path).info)
        }
        do {
            sounds += try index.all().map { stored in
                LibrarySound(name: stored.name, isBuiltIn: false, path: folder.path(of: stored.storedFileName),
                             stored: stored, info: nil)
            }
        } catch {
            throw SoundLibraryError(error)
        }
        return sounds
    }

    /// The file of the sound called `name`: a built-in's first, then an imported one (without case).
    public func path(named name: String) throws(SoundLibraryError) -> String? {
        if let path = builtIns[name] ?? builtIns.first(where: { $0.key.lowercased() == name.lowercased() })?.value {
            return path
        }
        do {
            return try index.sound(named: name).map { folder.path(of: $0.storedFileName) }
        } catch {
            throw SoundLibraryError(error)
        }
    }

    /// Imports the sound file at `path` as `name` (default: the file's name without extension).
    ///
    /// Decodes it (repairing CAF files libsndfile rejects), streams it into a temporary CAF file in
    /// the sounds folder while hashing the audio, then, holding the folder's lock, either reports
    /// the sound with the same audio that is already there (and deletes the temporary file) or makes
    /// the file durable under its final name and adds the index row. A name that is taken gets a
    /// number: `name (2)`. Asking for a built-in's name is refused.
    public func importSound(at path: String, name requested: String? = nil, now: Date = Date()) throws(SoundLibraryError) -> ImportResult {
        let fileName = URL(fileURLWithPath: path).lastPathComponent
        var base = SoundNames.name(forFileName: fileName)
        if let requested {
            base = SoundNames.clean(requested)
            guard !base.isEmpty else {
                throw SoundLibraryError(.refused, "The name \"\(requested)\" has nothing left once cleaned (no control characters, path separators or leading dots); choose another with --name.")
            }
            guard !isBuiltIn(base) else {
                throw SoundLibraryError(.refused, "\"\(base)\" is a built-in sound's name; built-in sounds cannot be overwritten. Choose another name with --name.")
            }
        }
        var input = try SoundInput(path: path)
        let sourceInfo = input.file.info
        let (encoding, lossless) = StoredEncoding.choose(for: sourceInfo.format.subtype)
        let temporary: TemporaryStoreFile
        do { temporary = try folder.makeTemporaryFile() } catch { throw SoundLibraryError(error) }
        let copied = try SoundCopy.copy(&input.file, toCAFAt: temporary.path, encoding: encoding,
                                        flushDescriptor: temporary.fileDescriptor)
        guard copied.frames > 0 else {
            throw SoundLibraryError(.badData, "'\(path)' holds no audio frames; there is nothing to import.")
        }
        let storedFormat = SoundFileFormat(.caf, encoding.subtype).littleEndian
        let conversion = "\(sourceInfo.format) → \(storedFormat)" + (lossless ? " (lossless)" : " (decoded from a lossy encoding)")
        let reserved = Set(Self.reservedNames + builtIns.keys)
        let repairs = input.repairs
        let index = self.index, folder = self.folder
        let outcome: Result<ImportResult, StoreError>
        do throws(StoreError) {
            outcome = try folder.withLock { () throws(StoreError) -> ImportResult in
            if let existing = try index.sound(sha256: copied.sha256) {
                return ImportResult(outcome: .duplicate, sound: existing, repairs: repairs, conversion: conversion)
            }
            let taken = Set(try index.all().map(\.name)).union(reserved)
            let name = SoundNames.unique(base, taken: taken)
            let storedFileName = String(copied.sha256.prefix(32)) + ".caf"
            let sound = StoredSound(
                name: name, originalFileName: fileName, frames: copied.frames, sampleRate: sourceInfo.sampleRate,
                channels: sourceInfo.channels, durationSeconds: Double(copied.frames) / Double(sourceInfo.sampleRate),
                format: storedFormat.description, sourceFormat: sourceInfo.format.description, sha256: copied.sha256,
                importedAt: now, storedFileName: storedFileName)
            try folder.commit(temporary, as: storedFileName)
            do throws(StoreError) {
                try index.insert(sound)
            } catch {
                try? folder.removeFile(storedFileName)
                throw error
            }
            return ImportResult(outcome: .imported, sound: sound, repairs: repairs, conversion: conversion,
                                requestedName: name == base ? nil : base)
            }
            return try outcome.get()
        } catch {
            throw SoundLibraryError(error)
        }
    }

    /// Removes an imported sound (row first, then file). Built-ins are refused.
    public func remove(_ name: String) throws(SoundLibraryError) -> StoredSound {
        guard !isBuiltIn(name) else {
            throw SoundLibraryError(.refused, "\"\(name)\" is a built-in sound; built-in sounds cannot be removed.")
        }
        let index = self.index, folder = self.folder
        do throws(StoreError) {
            return try folder.withLock { () throws(StoreError) -> StoredSound in
                let removed = try index.remove(named: name)
                try folder.removeFile(removed.storedFileName)
                return removed
            }.get()
        } catch {
            throw SoundLibraryError(error)
        }
    }

    /// Renames an imported sound. Built-ins cannot be renamed, and no sound can take a built-in's name.
    public func rename(_ name: String, to newName: String) throws(SoundLibraryError) -> StoredSound {
        guard !isBuiltIn(name) else {
            throw SoundLibraryError(.refused, "\"\(name)\" is a built-in sound; built-in sounds cannot be renamed.")
        }
        let cleaned = SoundNames.clean(newName)
        guard !cleaned.isEmpty else {
            throw SoundLibraryError(.refused, "The name \"\(newName)\" has nothing left once cleaned (no control characters, path separators or leading dots); choose another.")
        }
        guard !isBuiltIn(cleaned) else {
            throw SoundLibraryError(.refused, "\"\(cleaned)\" is a built-in sound's name; built-in sounds cannot be overwritten. Choose another name.")
        }
        let index = self.index
        do throws(StoreError) {
            return try folder.withLock { () throws(StoreError) -> StoredSound in
                try index.rename(name, to: cleaned)
            }.get()
        } catch {
            throw SoundLibraryError(error)
        }
    }
}

enum PrivateFolders {
    static func ensure(_ url: URL) throws(StoreError) {
        _ = try SoundsFolder(url: url)
    }
}

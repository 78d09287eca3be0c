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
    /// EBU R 128 integrated loudness (LUFS) and true peak (dBTP): stored at import for an imported
    /// sound, measured as it is listed for a built-in; nil when not known.
    public var loudness: Double?
    public var truePeak: Double?
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
    /// Set when the input decoded to fewer frames than it declares and the import was told to accept
    /// that (`acceptTruncated`); the stored sound holds the frames that decoded.
    public var truncation: Truncation?
    /// Its EBU R 128 loudness, or why it could not be measured.
    public var loudness: SoundLoudness?
    public var loudnessFailure: LoudnessError?
}

/// The user's sound library: the built-in sounds plus the sounds imported into
/// `$XDG_DATA_HOME/snoozefuse/sounds`, indexed in `library.sqlite`.
///
/// Built-in names are reserved (compared without case): no imported sound takes one, and built-ins
/// cannot be removed, renamed or overwritten (``SoundLibraryError/Kind/refused``).
///
/// The library never deletes what it cannot account for. Each stored file carries its name and
/// metadata (``StoredFileMetadata``, a CAF `info` chunk), so the index is a cache of the files:
/// opening the library adopts every stored file the index does not list (after a lost, emptied or
/// older index, or an import or removal a crash cut short), and moves a damaged index aside and
/// rebuilds it. Only temporary files of dead imports are ever deleted by cleanup.
///
/// Names: the index is authoritative while it lists a sound; the name inside the file is used only
/// to adopt a file the index does not list. ``rename(_:to:)`` rewrites the file's name first (a new
/// copy of the file, renamed into place atomically) and then the index, so the two agree; if a crash
/// comes between the two steps, the index's (old) name stays in use until the next rename.
public struct SoundLibrary: Sendable {
    /// The names of the built-in sounds the program ships, reserved even when their files are missing.
    public static let reservedNames = ["beep", "chime", "rising", "digital", "gentle"]

    public let paths: StorePaths
    public let folder: SoundsFolder
    /// Built-in name → file path.
    public let builtIns: [String: String]
    /// What opening the library found and did (the index rebuilt, files adopted, temporary files of
    /// dead imports removed …); ``LibraryOpening/messages`` says it for people.
    public let opening: LibraryOpening
    let index: SoundIndex

    /// The temporary files of interrupted imports that opening removed.
    public var removedStaleFiles: [String] { opening.removedTemporaryFiles }

    /// Opens the library for `environment`'s XDG folders (see ``init(paths:builtIns:now:)``).
    public static func open(environment: [String: String] = ProcessInfo.processInfo.environment,
                            builtIns: [String: String]) throws(SoundLibraryError) -> SoundLibrary {
        try SoundLibrary(paths: try paths(environment), builtIns: builtIns)
    }

    static func paths(_ environment: [String: String]) throws(SoundLibraryError) -> StorePaths {
        do { return try StorePaths(environment: environment) } catch { throw SoundLibraryError(error) }
    }

    /// Opens the library for commands that may change it (creating its folders, mode 0700, and
    /// index, mode 0600, when missing; an existing folder must be writable and keeps its mode).
    ///
    /// If no other process holds the sounds folder's lock, it then checks the folder against the
    /// index (never waiting for the lock: when it is held, this is skipped): a damaged index is moved
    /// aside and a new one made, stored files the index does not list are adopted, rows whose file
    /// is missing are reported, and temporary files of dead imports are deleted. ``opening`` says
    /// what it did.
    public init(paths: StorePaths, builtIns: [String: String], now: Date = Date()) throws(SoundLibraryError) {
        self.paths = paths
        self.builtIns = builtIns
        let reserved = Set(Self.reservedNames + builtIns.keys)
        let folder = try store { () throws(StoreError) in
            try PrivateFolders.ensure(paths.data)
            return try SoundsFolder(url: paths.soundsFolder)
        }
        self.folder = folder
        let checked = try store { () throws(StoreError) in
            try folder.withLockIfFree { () throws(SoundLibraryError) -> (SoundIndex, LibraryOpening) in
                try store { () throws(StoreError) in
                    let index = try SoundIndex(file: paths.database, movingDamagedAside: true, now: now)
                    var opening = LibraryOpening(index: index.condition, indexPath: paths.database.path, folderPath: folder.url.path)
                    opening.removedTemporaryFiles = try folder.removeDeadTemporaryFiles()
                    try LibraryRecovery.reconcile(index: index, folder: folder, reserved: reserved, into: &opening)
                    return (index, opening)
                }
            }
        }
        if let checked {
            (index, opening) = try checked.get()
        } else {
            // Another process holds the folder's lock (it is changing the library): use the index
            // as it is, and leave the check of the files to the next command.
            index = try store { () throws(StoreError) in try SoundIndex(file: paths.database, movingDamagedAside: false, now: now) }
            opening = LibraryOpening(index: index.condition, indexPath: paths.database.path, folderPath: folder.url.path,
                                     checkedFiles: false)
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
            // A few seconds each: measured as they are listed.
            let measured = (try? AlarmSound.file(path: path).measure(within: .seconds(60)))??.loudness
            return LibrarySound(name: name, isBuiltIn: true, path: path, stored: nil,
                                info: try? SoundFile(readingAtPath: path).info,
                                loudness: measured?.integrated, truePeak: measured?.truePeak)
        }
        do {
            sounds += try index.all().map { stored in
                LibrarySound(name: stored.name, isBuiltIn: false, path: folder.path(of: stored.storedFileName),
                             stored: stored, info: nil, loudness: stored.loudness, truePeak: stored.truePeak)
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
        return try store { () throws(StoreError) in try index.sound(named: name).map { folder.path(of: $0.storedFileName) } }
    }

    /// Imports the sound file at `path` as `name` (default: the file's name without extension).
    ///
    /// Decodes it (repairing CAF files libsndfile rejects), streams it into a temporary CAF file in
    /// the sounds folder while hashing the audio, then, holding the folder's lock, either reports
    /// the sound with the same audio that is already there (and deletes the temporary file) or
    /// writes the sound's name and metadata into the file (``StoredFileMetadata``), makes it durable
    /// under its final name and adds the index row. A name that is taken gets a number: `name (2)`.
    /// Asking for a built-in's name is refused.
    ///
    /// A file that decodes to fewer frames than it declares (``Truncation``) is refused
    /// (``SoundLibraryError/Kind/badData``) unless `acceptTruncated`; then the frames that decoded
    /// are imported and ``ImportResult/truncation`` says so.
    public func importSound(at path: String, name requested: String? = nil, acceptTruncated: Bool = false,
                            now: Date = Date()) throws(SoundLibraryError) -> ImportResult {
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
        let truncation = Truncation.check(read: copied.frames, declared: sourceInfo.frames, format: sourceInfo.format,
                                          sampleRate: sourceInfo.sampleRate, stoppedBy: copied.decodingStopped)
        if let truncation, !acceptTruncated || copied.frames == 0 {
            throw SoundLibraryError(.badData, "'\(path)': \(truncation). Nothing was imported. "
                + (copied.frames == 0 ? "No audio decoded at all; export the file again from its source."
                    : "The file was cut short or is damaged; export it again from its source, or import the part that decodes with --accept-truncated."))
        }
        guard copied.frames > 0 else {
            throw SoundLibraryError(.badData, "'\(path)' holds no audio frames; there is nothing to import.")
        }
        let storedFormat = SoundFileFormat(.caf, encoding.subtype).littleEndian
        let conversion = "\(sourceInfo.format) → \(storedFormat)" + (lossless ? " (lossless)" : " (decoded from a lossy encoding)")
        let reserved = Set(Self.reservedNames + builtIns.keys)
        let repairs = input.repairs
        let index = self.index, folder = self.folder
        let outcome: Result<ImportResult, SoundLibraryError>
        do throws(StoreError) {
            outcome = try folder.withLock { () throws(SoundLibraryError) -> ImportResult in
                if let existing = try store({ () throws(StoreError) in try index.sound(sha256: copied.sha256) }) {
                    return ImportResult(outcome: .duplicate, sound: existing, repairs: repairs, conversion: conversion)
                }
                let taken = Set(try store { () throws(StoreError) in try index.all().map(\.name) }).union(reserved)
                let name = SoundNames.unique(base, taken: taken)
                let storedFileName = String(copied.sha256.prefix(32)) + "." + SoundsFolder.storedExtension
                let sound = StoredSound(
                    name: name, originalFileName: fileName, frames: copied.frames, sampleRate: sourceInfo.sampleRate,
                    channels: sourceInfo.channels, durationSeconds: Double(copied.frames) / Double(sourceInfo.sampleRate),
                    format: storedFormat.description, sourceFormat: sourceInfo.format.description, sha256: copied.sha256,
                    importedAt: now, storedFileName: storedFileName,
                    loudness: copied.loudness?.integrated, truePeak: copied.loudness.map(\.truePeak))
                // The name goes into the file before the file gets its final name: a stored file
                // always says what it is, whatever happens to the index.
                try StoredSoundFile.appendMetadata(StoredFileMetadata(sound), toFileAt: temporary.path,
                                                   fileDescriptor: temporary.fileDescriptor)
                try store { () throws(StoreError) in
                    try folder.commit(temporary, as: storedFileName)
                    do throws(StoreError) {
                        try index.insert(sound)
                    } catch {
                        // This import's own file, just moved into place: nothing else refers to it.
                        try? folder.removeFile(storedFileName)
                        throw error
                    }
                }
                return ImportResult(outcome: .imported, sound: sound, repairs: repairs, conversion: conversion,
                                    requestedName: name == base ? nil : base, truncation: truncation,
                                    loudness: copied.loudness, loudnessFailure: copied.loudnessFailure)
            }
        } catch {
            throw SoundLibraryError(error)
        }
        return try outcome.get()
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
        let index = self.index, folder = self.folder
        let outcome: Result<StoredSound, SoundLibraryError>
        do throws(StoreError) {
            outcome = try folder.withLock { () throws(SoundLibraryError) -> StoredSound in
                guard let existing = try store({ () throws(StoreError) in try index.sound(named: name) }) else {
                    throw SoundLibraryError(StoreError(.notFound, subject: name, message: "no imported sound has this name (`snoozefuse sounds list` shows them)"))
                }
                if let other = try store({ () throws(StoreError) in try index.sound(named: cleaned) }), other.storedFileName != existing.storedFileName {
                    throw SoundLibraryError(StoreError(.nameTaken, subject: cleaned, message: "a sound with this name exists; remove it or choose another name"))
                }
                // The name inside the file first (a new copy, renamed over the old one), then the index.
                // The file keeps the rest of its own metadata; a file without any gets the index's.
                let stored = folder.path(of: existing.storedFileName)
                if folder.contains(existing.storedFileName) {
                    var metadata = try StoredSoundFile.inspect(stored).metadata ?? StoredFileMetadata(existing)
                    metadata.name = cleaned
                    if metadata.sha256.isEmpty { metadata.sha256 = existing.sha256 }
                    let temporary = try store { () throws(StoreError) in try folder.makeTemporaryFile() }
                    try StoredSoundFile.rewrite(stored, with: metadata, into: temporary)
                    try store { () throws(StoreError) in try folder.replace(existing.storedFileName, with: temporary) }
                }
                return try store { () throws(StoreError) in try index.rename(name, to: cleaned) }
            }
        } catch {
            throw SoundLibraryError(error)
        }
        return try outcome.get()
    }
}

/// Runs a store call, its error as a ``SoundLibraryError``.
func store<R>(_ body: () throws(StoreError) -> R) throws(SoundLibraryError) -> R {
    do { return try body() } catch { throw SoundLibraryError(error) }
}

enum PrivateFolders {
    static func ensure(_ url: URL) throws(StoreError) {
        _ = try SoundsFolder(url: url)
    }
}

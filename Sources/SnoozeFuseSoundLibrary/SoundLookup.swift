public import Foundation
public import SnoozeFuseStore

extension SoundLibrary {
    /// The file of the imported sound called `name` (compared without case), for `--sound NAME`,
    /// or nil when there is none. Read-only and never waiting on another process: it takes no lock of
    /// the sounds folder, runs no cleanup or migration, creates nothing, and reads the index as a
    /// WAL reader (which a writer does not block). When the index does not have the name, or cannot
    /// be read, the stored files the index does not list are asked for their own names.
    ///
    /// - Throws: ``SoundLibraryError/Kind/storage`` when the name is not found and the index could
    ///   not be read (damaged, locked, unreadable): the message says why, since the sound may be
    ///   there.
    public static func importedSoundPath(named name: String,
                                         environment: [String: String] = ProcessInfo.processInfo.environment) throws(SoundLibraryError) -> String? {
        try importedSoundPath(named: name, paths: try paths(environment))
    }

    /// ``importedSoundPath(named:environment:)`` for explicit paths.
    public static func importedSoundPath(named name: String, paths: StorePaths) throws(SoundLibraryError) -> String? {
        let folder = SoundsFolder(readingAt: paths.soundsFolder)
        var listed: Set<String> = []
        var indexProblem: StoreError?
        do throws(StoreError) {
            if let index = try SoundIndex.openForReading(file: paths.database) {
                if let sound = try index.sound(named: name) { return folder.path(of: sound.storedFileName) }
                listed = try index.storedFileNames()
            }
        } catch {
            indexProblem = error
        }
        let wanted = name.lowercased()
        for file in (try? folder.storedFileNames()) ?? [] where !listed.contains(file) {
            let path = folder.path(of: file)
            guard let inspected = try? StoredSoundFile.inspect(path) else { continue }
            let ownName = inspected.metadata?.name ?? LibraryRecovery.derivedName(file)
            if ownName.lowercased() == wanted { return path }
        }
        if let indexProblem {
            let error = SoundLibraryError(indexProblem)
            throw SoundLibraryError(.storage, "cannot look up the sound \"\(name)\": \(error.message)")
        }
        return nil
    }
}

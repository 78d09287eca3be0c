import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseCAF
public import SnoozeFuseStore

/// What opening the library found and did, for tests and for people (``messages``).
public struct LibraryOpening: Sendable {
    /// A stored file the index did not list, now listed.
    public struct Adopted: Sendable, Equatable {
        public var name: String
        public var storedFileName: String
        /// The file had no metadata of its own (imported by an earlier version): its name was made
        /// from the file's name.
        public var nameDerivedFromFile: Bool
        /// The name inside the file, when it was taken and the sound got a number instead.
        public var nameInFile: String?
    }

    /// A file in the sounds folder that was left as it is, and why.
    public struct LeftAlone: Sendable, Equatable {
        public var storedFileName: String
        public var reason: String
    }

    /// What the index's path held when the library opened.
    public var index: SoundIndex.Condition
    public var indexPath: String
    public var folderPath: String
    /// Whether the folder was checked against the index (not when another process held its lock).
    public var checkedFiles: Bool = true
    /// Temporary files of imports whose process is gone, deleted.
    public var removedTemporaryFiles: [String] = []
    public var adopted: [Adopted] = []
    public var leftAlone: [LeftAlone] = []
    /// Sounds the index lists whose file is missing: name and stored file name.
    public var missingFiles: [(name: String, storedFileName: String)] = []

    init(index: SoundIndex.Condition, indexPath: String, folderPath: String, checkedFiles: Bool = true) {
        self.index = index
        self.indexPath = indexPath
        self.folderPath = folderPath
        self.checkedFiles = checkedFiles
    }

    /// One line per thing worth saying, for standard error.
    public var messages: [String] {
        var lines: [String] = []
        let count = adopted.count
        let files = "\(count) sound file\(count == 1 ? "" : "s") in \(folderPath)"
        switch index {
        case .missing where count > 0:
            lines.append("the sound index \(indexPath) was missing; rebuilt it from the \(files) (every sound is kept)")
        case .empty where count > 0:
            lines.append("the sound index \(indexPath) was empty (0 bytes); rebuilt it from the \(files) (every sound is kept)")
        case .damaged(let reason, let movedTo):
            lines.append("the sound index \(indexPath) was damaged (\(reason)); moved it to \(movedTo) (kept, not deleted) and rebuilt the index from the \(files). Presets, settings and nap history it held are in that file: `sqlite3 '\(movedTo)' .recover` may get them back")
        case .existing where count > 0:
            let names = adopted.map { "\"\($0.name)\"" }.joined(separator: ", ")
            lines.append("the sound index \(indexPath) did not list \(count) stored sound\(count == 1 ? "" : "s") (an older copy of the index, or an import or removal cut short); listed \(count == 1 ? "it" : "them") again from \(count == 1 ? "its file" : "their files"): \(names)")
        default:
            break
        }
        for sound in adopted where sound.nameDerivedFromFile {
            lines.append("\(sound.storedFileName) holds no name of its own (imported by an earlier version of snoozefuse); listed it as \"\(sound.name)\": rename it with `snoozefuse sounds rename \"\(sound.name)\" NEW-NAME`")
        }
        for sound in adopted {
            if let nameInFile = sound.nameInFile {
                lines.append("\(sound.storedFileName) is called \"\(nameInFile)\", a name another sound has; listed it as \"\(sound.name)\"")
            }
        }
        for file in leftAlone {
            lines.append("\(folderPath)/\(file.storedFileName) is not listed: \(file.reason); it was left where it is, unchanged")
        }
        for missing in missingFiles {
            lines.append("\"\(missing.name)\" is listed but its file \(folderPath)/\(missing.storedFileName) is missing; `snoozefuse sounds remove \"\(missing.name)\"` takes it off the list")
        }
        for file in removedTemporaryFiles {
            lines.append("removed \(file), left behind by an interrupted import")
        }
        return lines
    }
}

/// Brings the index in line with the sound files: every stored file the index does not list is
/// adopted (its row made from the metadata inside it and from what libsndfile reads), and nothing
/// is deleted.
enum LibraryRecovery {
    /// Call with the folder's lock held.
    static func reconcile(index: SoundIndex, folder: SoundsFolder, reserved: Set<String>,
                          into opening: inout LibraryOpening) throws(StoreError) {
        let files = try folder.storedFileNames()
        let listed = try index.all()
        let listedFiles = Set(listed.map(\.storedFileName))
        let present = Set(files)
        opening.missingFiles = listed.filter { !present.contains($0.storedFileName) }.map { ($0.name, $0.storedFileName) }
        var taken = Set(listed.map(\.name)).union(reserved)
        for file in files where !listedFiles.contains(file) {
            let sound: StoredSound
            let metadata: StoredFileMetadata?
            do throws(SoundLibraryError) {
                (sound, metadata) = try describe(file, in: folder)
            } catch {
                opening.leftAlone.append(.init(storedFileName: file, reason: error.message))
                continue
            }
            if let existing = try index.sound(sha256: sound.sha256) {
                opening.leftAlone.append(.init(storedFileName: file, reason: "it holds the same audio as \"\(existing.name)\" (\(existing.storedFileName))"))
                continue
            }
            var adopted = sound
            adopted.name = SoundNames.unique(sound.name, taken: taken)
            try index.insert(adopted)
            taken.insert(adopted.name)
            opening.adopted.append(.init(name: adopted.name, storedFileName: file, nameDerivedFromFile: metadata == nil,
                                         nameInFile: adopted.name == sound.name ? nil : sound.name))
        }
    }

    /// The index row for the stored file `file`: name and import details from its metadata (or, for a
    /// file without any, a name made from its file name), audio details from libsndfile, and the
    /// audio's digest from the metadata or, when it has none, computed.
    static func describe(_ file: String, in folder: SoundsFolder) throws(SoundLibraryError) -> (StoredSound, StoredFileMetadata?) {
        let path = folder.path(of: file)
        let metadata = try StoredSoundFile.inspect(path).metadata
        let info: SoundFileInfo
        do { info = try SoundFile(readingAtPath: path).info } catch {
            throw SoundLibraryError(.badData, "libsndfile cannot read it (\(error.message))")
        }
        guard info.frames > 0, info.sampleRate > 0, info.channels > 0 else {
            throw SoundLibraryError(.badData, "it holds no audio (\(info))")
        }
        var digest = metadata?.sha256 ?? ""
        if digest.isEmpty { digest = try AudioDigest.ofStoredFile(at: path) }
        let importedAt = metadata.map(\.importedAt).flatMap { $0 == .distantPast ? nil : $0 } ?? modificationDate(path)
        let sound = StoredSound(
            name: metadata?.name ?? derivedName(file), originalFileName: metadata.map(\.originalFileName).flatMap { $0.isEmpty ? nil : $0 } ?? file,
            frames: info.frames, sampleRate: info.sampleRate, channels: info.channels,
            durationSeconds: Double(info.frames) / Double(info.sampleRate), format: info.format.description,
            sourceFormat: metadata.map(\.sourceFormat).flatMap { $0.isEmpty ? nil : $0 } ?? "unknown (listed again from the stored file)",
            sha256: digest, importedAt: importedAt, storedFileName: file, loudness: metadata?.loudness, truePeak: metadata?.truePeak)
        return (sound, metadata)
    }

    /// The name for a stored file without metadata: `recovered ` and the first 8 characters of its
    /// file name (earlier versions named files after the audio's digest).
    static func derivedName(_ file: String) -> String {
        "recovered " + SoundNames.name(forFileName: file).prefix(8)
    }

    private static func modificationDate(_ path: String) -> Date {
        var status = stat()
        guard stat(path, &status) == 0 else { return Date() }
        return Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
    }
}

extension AudioDigest {
    /// The digest of a stored file's audio, by the definition the import uses (the samples in the
    /// type its encoding is copied in).
    static func ofStoredFile(at path: String) throws(SoundLibraryError) -> String {
        var file: SoundFile
        do { file = try SoundFile(readingAtPath: path) } catch { throw SoundLibraryError(error) }
        let info = file.info
        let encoding = StoredEncoding.choose(for: info.format.subtype).encoding
        let digest = try AudioDigest(sampleType: encoding.sampleType, sampleRate: info.sampleRate, channels: info.channels)
        do throws(SoundFileError) {
            switch encoding.sampleType {
            case "s16": try digest.add(Int16.zero, &file) { (f, b) throws(SoundFileError) in try f.read(into: b) }
            case "s32": try digest.add(Int32.zero, &file) { (f, b) throws(SoundFileError) in try f.read(into: b) }
            case "f64": try digest.add(Double.zero, &file) { (f, b) throws(SoundFileError) in try f.read(into: b) }
            default: try digest.add(Float.zero, &file) { (f, b) throws(SoundFileError) in try f.read(into: b) }
            }
        } catch {
            throw SoundLibraryError(.badData, "its audio does not decode (\(error.message))")
        }
        return digest.finish()
    }

    private func add<Sample>(_ zero: Sample, _ file: inout SoundFile,
                             _ read: (inout SoundFile, UnsafeMutableBufferPointer<Sample>) throws(SoundFileError) -> Int) throws(SoundFileError) {
        let channels = file.info.channels
        var buffer = [Sample](repeating: zero, count: 16_384 * channels)
        while true {
            let frames = try buffer.withUnsafeMutableBufferPointer { pointer throws(SoundFileError) in try read(&file, pointer) }
            if frames == 0 { return }
            buffer.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<(frames * channels * MemoryLayout<Sample>.stride)])) }
        }
    }
}

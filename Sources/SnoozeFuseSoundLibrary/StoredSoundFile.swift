public import Foundation
import Glibc
import SnoozeFuseAudio
public import SnoozeFuseCAF
public import SnoozeFuseStore

/// What a stored sound file says about itself, in its CAF `info` chunk (written at import, after the
/// `data` chunk): its name and the index's metadata, so the index can always be rebuilt from the
/// files. libsndfile reads the file as before (it maps `title` to `SF_STR_TITLE` and skips the rest).
///
/// Entries: `title` (the name), `snoozefuse original file`, `snoozefuse source format`,
/// `snoozefuse imported` (ISO 8601, UTC), `snoozefuse audio sha256`, `snoozefuse loudness` (LUFS)
/// and `snoozefuse true peak` (dBTP) when they were measured, `snoozefuse metadata` (the layout
/// version, `1`), `encoding application` (`snoozefuse`). Frames, rate, channels and the stored
/// format are not repeated: libsndfile reads them from the file itself.
public struct StoredFileMetadata: Sendable, Equatable {
    public var name: String
    public var originalFileName: String
    public var sourceFormat: String
    public var importedAt: Date
    public var sha256: String
    /// EBU R 128, as measured at import (nil in files of an earlier release, and for silence).
    public var loudness: Double?
    public var truePeak: Double?

    enum Key {
        static let name = "title"
        static let originalFileName = "snoozefuse original file"
        static let sourceFormat = "snoozefuse source format"
        static let importedAt = "snoozefuse imported"
        static let sha256 = "snoozefuse audio sha256"
        static let loudness = "snoozefuse loudness"
        static let truePeak = "snoozefuse true peak"
        static let version = "snoozefuse metadata"
        static let application = "encoding application"
    }

    static let version = "1"

    public init(name: String, originalFileName: String, sourceFormat: String, importedAt: Date, sha256: String,
                loudness: Double? = nil, truePeak: Double? = nil) {
        self.name = name
        self.originalFileName = originalFileName
        self.sourceFormat = sourceFormat
        self.importedAt = importedAt
        self.sha256 = sha256
        self.loudness = loudness
        self.truePeak = truePeak
    }

    /// The metadata of an indexed sound.
    public init(_ sound: StoredSound) {
        self.init(name: sound.name, originalFileName: sound.originalFileName, sourceFormat: sound.sourceFormat,
                  importedAt: sound.importedAt, sha256: sound.sha256, loudness: sound.loudness, truePeak: sound.truePeak)
    }

    /// The metadata in an `info` chunk's entries; nil when they hold none of snoozefuse's (a file
    /// imported by an earlier version, or not made by snoozefuse). A digest that is not 64 hex
    /// digits is left empty (it is then computed from the audio).
    public init?(entries: [CAFInfoEntry]) {
        func value(_ key: String) -> String? { entries.last { $0.key == key }?.value }
        guard value(Key.version) == Self.version, let name = value(Key.name).map(SoundNames.clean), !name.isEmpty else {
            return nil
        }
        let digest = value(Key.sha256)?.lowercased() ?? ""
        let isDigest = digest.utf8.count == 64 && digest.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        // A number a sound can have, or nothing (a file edited by hand).
        func decibels(_ key: String) -> Double? { value(key).flatMap(Double.init).flatMap { $0.isFinite && abs($0) < 1_000 ? $0 : nil } }
        self.init(name: name, originalFileName: value(Key.originalFileName) ?? "", sourceFormat: value(Key.sourceFormat) ?? "",
                  importedAt: value(Key.importedAt).flatMap { try? Self.dateStyle.parse($0) } ?? .distantPast,
                  sha256: isDigest ? digest : "", loudness: decibels(Key.loudness), truePeak: decibels(Key.truePeak))
    }

    var entries: [CAFInfoEntry] {
        [
            CAFInfoEntry(key: Key.name, value: name),
            CAFInfoEntry(key: Key.originalFileName, value: originalFileName),
            CAFInfoEntry(key: Key.sourceFormat, value: sourceFormat),
            CAFInfoEntry(key: Key.importedAt, value: Self.text(importedAt)),
            CAFInfoEntry(key: Key.sha256, value: sha256),
        ] + [(Key.loudness, loudness), (Key.truePeak, truePeak)].compactMap { key, value in
            value.flatMap { $0.isFinite ? CAFInfoEntry(key: key, value: String(format: "%.2f", $0)) : nil }
        } + [
            CAFInfoEntry(key: Key.version, value: Self.version),
            CAFInfoEntry(key: Key.application, value: "snoozefuse"),
        ]
    }

    static var dateStyle: Date.ISO8601FormatStyle { Date.ISO8601FormatStyle(includingFractionalSeconds: true) }

    /// ISO 8601 in UTC to the millisecond, from the rounded millisecond count (so a parsed date
    /// formats back to the same text; Foundation's formatter truncates, and a parsed 0.345 s can be
    /// 0.3449999… s).
    static func text(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, remainder) = (milliseconds.quotientAndRemainder(dividingBy: 1000))
        let whole = remainder < 0 ? seconds - 1 : seconds
        let fraction = remainder < 0 ? remainder + 1000 : remainder
        var text = Date(timeIntervalSince1970: Double(whole)).formatted(Date.ISO8601FormatStyle())
        text.removeLast() // "Z"
        return text + "." + String(String(fraction + 1000).dropFirst()) + "Z"
    }
}

/// Reading and writing the metadata inside stored files.
enum StoredSoundFile {
    /// The chunk report and metadata of the stored file at `path` (metadata nil: the file has none).
    /// - Throws: ``SoundLibraryError`` when the file cannot be opened or is not valid CAF.
    static func inspect(_ path: String) throws(SoundLibraryError) -> (report: CAFReport, metadata: StoredFileMetadata?) {
        let file = try OpenInputFile(path: path)
        let report = CAFInspector().inspect(FileCAFSource(file: file))
        if let error = report.errors.first {
            throw SoundLibraryError(.badData, "'\(path)' is not valid CAF: \(error)")
        }
        return (report, StoredFileMetadata(entries: report.info))
    }

    /// Appends the `info` chunk for `metadata` to a CAF file just written by libsndfile (its `data`
    /// chunk has its real size, so chunks may follow it), through `fileDescriptor`, open on it for
    /// writing.
    static func appendMetadata(_ metadata: StoredFileMetadata, toFileAt path: String, fileDescriptor: Int32) throws(SoundLibraryError) {
        let report = try inspect(path).report
        guard let data = report.audioData, !data.sizeWasUnknown, !report.chunks.contains(where: { $0.type == .info }) else {
            throw SoundLibraryError(.storage, "'\(path)': the CAF file libsndfile wrote has no data chunk of known size, or an info chunk already; cannot add the sound's name to it (nothing was imported).")
        }
        try write(CAFInfoChunk.encode(metadata.entries), to: fileDescriptor, at: report.fileSize, path: path)
    }

    /// Writes into `temporary` a copy of the stored file at `path` whose `info` chunk holds `metadata`:
    /// every other chunk byte for byte, in order, then the new `info` chunk. Checks that libsndfile
    /// reads the copy as the same audio (format, rate, channels, frames).
    static func rewrite(_ path: String, with metadata: StoredFileMetadata, into temporary: TemporaryStoreFile) throws(SoundLibraryError) {
        let source = try OpenInputFile(path: path)
        let report = CAFInspector().inspect(FileCAFSource(file: source))
        guard report.errors.isEmpty, let data = report.audioData, !data.sizeWasUnknown else {
            throw SoundLibraryError(.badData, "'\(path)' is not a CAF file whose name can be rewritten (\(report.errors.first.map { "\($0)" } ?? "its data chunk has no size")); nothing was changed.")
        }
        var position: Int64 = 0
        try copy(from: source, range: 0..<8, to: temporary, at: &position)
        for chunk in report.chunks where chunk.type != .info {
            try copy(from: source, range: chunk.offset..<(chunk.bodyOffset + chunk.bodySize), to: temporary, at: &position)
        }
        try write(CAFInfoChunk.encode(metadata.entries), to: temporary.fileDescriptor, at: position, path: temporary.path)
        let before: SoundFileInfo, after: SoundFileInfo
        do {
            before = try SoundFile(readingAtPath: path).info
            after = try SoundFile(readingAtPath: temporary.path).info
        } catch {
            throw SoundLibraryError(.storage, "'\(path)': the rewritten copy does not read back (\(error)); nothing was changed.")
        }
        guard before == after else {
            throw SoundLibraryError(.storage, "'\(path)': the rewritten copy reads as \(after), not \(before); nothing was changed.")
        }
    }

    private static func copy(from source: OpenInputFile, range: Range<Int64>, to temporary: TemporaryStoreFile, at position: inout Int64) throws(SoundLibraryError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let want = Int(min(Int64(buffer.count), range.upperBound - offset))
            let got = try source.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard got == want else {
                throw SoundLibraryError(.badData, "'\(source.path)' ended at byte \(offset + Int64(got)), inside a chunk; nothing was changed.")
            }
            try write(UnsafeRawBufferPointer(rebasing: buffer[0..<want]), to: temporary.fileDescriptor, at: position, path: temporary.path)
            offset += Int64(want)
            position += Int64(want)
        }
    }

    private static func write(_ bytes: [UInt8], to fd: Int32, at offset: Int64, path: String) throws(SoundLibraryError) {
        var failure: SoundLibraryError?
        bytes.withUnsafeBytes { buffer in
            do throws(SoundLibraryError) { try write(buffer, to: fd, at: offset, path: path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32, at offset: Int64, path: String) throws(SoundLibraryError) {
        let (done, failure) = transferAll(bytes.count, at: offset) { done, position in
            pwrite(fd, bytes.baseAddress! + done, bytes.count - done, position)
        }
        if failure != nil || done < bytes.count {
            let reason = failure.map { String(cString: strerror($0)) } ?? "nothing more could be written"
            throw SoundLibraryError(.storage, "Cannot write '\(path)' at byte \(offset + Int64(done)): \(reason). Check the free space of the sounds folder.")
        }
    }
}

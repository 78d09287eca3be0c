import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseCAF

/// What `sounds export` wrote.
public struct ExportResult: Sendable {
    public var path: String
    /// What was converted or trimmed (empty for a plain copy).
    public var changes: [String]
    public var frames: Int64
    public var sampleRate: Int
}

extension SoundLibrary {
    /// Notification exports stop here: under Apple's 30-second limit, with room to spare.
    public static let notificationLengthSeconds = 29.5
    /// A trimmed notification sound fades out over its last quarter second, so it does not click.
    static let fadeOutSeconds = 0.25

    /// Writes the sound called `name` to `output` (replacing it atomically). Without `notification`,
    /// the stored CAF file as it is. With it, a CAF file iOS accepts as a notification sound: 16-bit
    /// linear PCM, at most ``notificationLengthSeconds`` long (longer sounds are trimmed with a
    /// short fade-out); `changes` says what was converted and trimmed.
    public func export(_ name: String, to output: String, notification: Bool) throws(SoundLibraryError) -> ExportResult {
        guard let source = try path(named: name) else {
            throw SoundLibraryError(.notFound, "No sound is called \"\(name)\"; `snoozefuse sounds list` shows the names.")
        }
        let outputURL = URL(fileURLWithPath: output)
        let folder = outputURL.deletingLastPathComponent().path
        let temporary = folder + "/." + outputURL.lastPathComponent + ".\(getpid()).tmp"
        defer { unlink(temporary) }
        var file: SoundFile
        do { file = try SoundFile(readingAtPath: source) } catch { throw SoundLibraryError(error) }
        let info = file.info
        var changes: [String] = []
        var frames = info.frames
        if !notification {
            try copyBytes(from: source, to: temporary)
        } else {
            if info.format.subtype != .pcm16 {
                changes.append("converted \(info.format.subtype) to Signed 16 bit PCM")
            }
            let limit = Int64(Self.notificationLengthSeconds * Double(info.sampleRate))
            let fadeFrames = Int64(Self.fadeOutSeconds * Double(info.sampleRate))
            let trimmed = info.frames > limit
            if trimmed {
                frames = limit
                changes.append(String(format: "trimmed from %.2f s to %.2f s, with a %.2f s fade-out", info.duration.secondsDouble,
                                      Self.notificationLengthSeconds, Self.fadeOutSeconds))
            }
            do throws(SoundFileError) {
                var writer = try SoundFileWriter(creatingAtPath: temporary, format: SoundFileFormat(.caf, .pcm16),
                                                 sampleRate: info.sampleRate, channels: info.channels)
                let channels = info.channels
                var buffer = [Int16](repeating: 0, count: 8192 * channels)
                var done: Int64 = 0
                while done < frames {
                    let want = Int(min(Int64(8192), frames - done))
                    let got = try buffer.withUnsafeMutableBufferPointer { pointer throws(SoundFileError) in
                        try file.read(into: UnsafeMutableBufferPointer(rebasing: pointer[0..<(want * channels)]))
                    }
                    if got == 0 { break }
                    if trimmed {
                        for frame in 0..<got {
                            let left = frames - (done + Int64(frame))
                            guard left <= fadeFrames else { continue }
                            let gain = Double(left - 1) / Double(fadeFrames) // 0 on the last frame
                            for channel in 0..<channels {
                                let index = frame * channels + channel
                                buffer[index] = Int16((Double(buffer[index]) * gain).rounded())
                            }
                        }
                    }
                    try buffer.withUnsafeBufferPointer { pointer throws(SoundFileError) in
                        try writer.write(UnsafeBufferPointer(rebasing: pointer[0..<(got * channels)]))
                    }
                    done += Int64(got)
                }
                frames = done
                try writer.close()
            } catch {
                throw SoundLibraryError(.storage, error.description)
            }
        }
        try finish(temporary, as: output)
        return ExportResult(path: output, changes: changes, frames: frames, sampleRate: info.sampleRate)
    }

    private func copyBytes(from source: String, to target: String) throws(SoundLibraryError) {
        do {
            if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
            try FileManager.default.copyItem(atPath: source, toPath: target)
        } catch {
            throw SoundLibraryError(.storage, "Cannot write '\(target)': \(error). Check that the folder exists and is writable.")
        }
    }

    /// `fsync` the temporary file, rename it over `output`, `fsync` the folder.
    private func finish(_ temporary: String, as output: String) throws(SoundLibraryError) {
        let fd = Glibc.open(temporary, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
        guard Glibc.rename(temporary, output) == 0 else {
            let code = errno
            throw SoundLibraryError(.storage, "Cannot write '\(output)': \(String(cString: strerror(code))). Check that the folder exists and is writable.")
        }
        let folder = URL(fileURLWithPath: output).deletingLastPathComponent().path
        let folderFD = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 { fsync(folderFD); close(folderFD) }
    }
}

extension Duration {
    var secondsDouble: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

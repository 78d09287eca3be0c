import Foundation
import Glibc
import SnoozeFuseAudio
import SnoozeFuseTestSupport
import Testing

@Suite struct SoundFileErrorTests {
    @Test func aMissingFileIsMissingInputAndNamesThePath() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("not-here.wav")
        let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: path) }
        #expect(error?.isMissingInput == true)
        #expect(error?.isBadData == false)
        #expect(error?.systemErrno == ENOENT)
        #expect(error?.code == .system)
        #expect(error?.operation == .open)
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains("No such file") == true)
    }

    @Test func aFolderIsMissingInputToo() throws {
        let folder = try TemporaryFolder()
        let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: folder.url.path) }
        #expect(error?.isMissingInput == true)
        #expect(error?.systemErrno == EISDIR)
        #expect(error?.description.contains(folder.url.path) == true)
    }

    /// Opening a FIFO without a writer for reading blocks for ever, and a device never ends: both
    /// are refused before libsndfile sees them, with what they are (the FIFO would hang this test).
    @Test func aFIFOAndADeviceAreMissingInputAndSayWhatTheyAre() throws {
        let folder = try TemporaryFolder()
        let fifo = folder.path("alarm.wav")
        #expect(mkfifo(fifo, 0o600) == 0)
        let cases: [(String, SoundFileError.FileType, String)] = [
            (fifo, .fifo, "it is a FIFO (named pipe), not a regular file"),
            ("/dev/zero", .characterDevice, "it is a character device, not a regular file"),
            (folder.url.path, .directory, "it is a folder, not a regular file"),
        ]
        for (path, type, message) in cases {
            let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: path) }
            #expect(error?.isMissingInput == true, "\(path)")
            #expect(error?.isBadData == false, "\(path)")
            #expect(error?.fileType == type, "\(path)")
            #expect(error?.description.contains("'\(path)': \(message)") == true, "\(error?.description ?? "")")
            #expect(error?.description.contains("libsndfile error") == false, "the refusal is not libsndfile's")
        }
    }

    @Test func anEmptyFileIsBadData() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("empty.wav")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: path) }
        #expect(error?.isBadData == true)
        #expect(error?.isMissingInput == false)
        #expect(error?.code == .unrecognisedFormat)
        #expect(error?.description.contains(path) == true)
        #expect(error?.parseLog.contains("Length : 0") == true)
    }

    @Test func textRenamedToWAVIsBadData() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("notes.wav")
        try "Remember to buy milk.\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: path) }
        #expect(error?.isBadData == true)
        #expect(error?.isMissingInput == false)
        #expect(error?.code == .unrecognisedFormat)
        #expect(error?.systemErrno == nil)
        #expect(error?.description.contains(path) == true)
    }

    /// libsndfile 1.2 opens a WAV whose `data` chunk claims more bytes than the file holds: it
    /// counts only the frames present (logging "should be …"), and reading stops cleanly there.
    @Test func aTruncatedWAVOpensWithTheFramesThatArePresent() throws {
        let folder = try TemporaryFolder()
        let source = try makeSourceWAV(in: folder)
        let reference = try soxReference(source, in: folder)
        let whole = try Data(contentsOf: URL(fileURLWithPath: source))
        let path = folder.path("truncated.wav")
        try whole.prefix(20_000).write(to: URL(fileURLWithPath: path))

        var file = try SoundFile(readingAtPath: path)
        let presentFrames = (20_000 - 44) / 4
        #expect(file.info.frames == Int64(presentFrames))
        #expect(file.parseLog().contains("should be"))
        let samples = try readAll(&file)
        #expect(samples.count == presentFrames * 2)
        #expect(firstDifference(samples, reference.prefix(presentFrames * 2)) == nil)
    }

    @Test func aWAVCutInsideItsHeaderIsBadData() throws {
        let folder = try TemporaryFolder()
        let whole = try Data(contentsOf: URL(fileURLWithPath: try makeSourceWAV(in: folder)))
        let path = folder.path("header-only.wav")
        try whole.prefix(30).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: path) }
        #expect(error?.isBadData == true)
        #expect(error?.code != .noError)
        #expect(error?.description.contains(path) == true)
        #expect(error?.parseLog.contains("RIFF") == true)
    }

    @Test func anIMA4CAFIsAnUnsupportedEncoding() throws {
        let folder = try TemporaryFolder()
        let source = try makeSourceWAV(in: folder)
        let path = folder.path("notification.caf")
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c:a", "adpcm_ima_qt", "-f", "caf", path])

        let error = #expect(throws: SoundFileError.self) { _ = try SoundFile(readingAtPath: path) }
        #expect(error?.code == .unsupportedEncoding)
        #expect(error?.code.rawValue == 4)
        #expect(error?.isBadData == true)
        #expect(error?.isMissingInput == false)
        #expect(error?.description.contains(path) == true)
        #expect(error?.parseLog.contains("ima4") == true)
        #expect(error?.debugDescription.contains("ima4") == true)
    }

    /// The parse log is process-wide in libsndfile; opens that fail at the same time on several
    /// threads must each still report their own file's log. (Without the wrapper's lock this run
    /// mixed logs up every time it was tried: from 4 to 1812 of 4000 opens.)
    @Test func concurrentFailedOpensEachGetTheirOwnLog() async throws {
        let folder = try TemporaryFolder()
        let empty = folder.path("empty.wav")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let text = folder.path("text.wav")
        try String(repeating: "not audio ", count: 50).write(toFile: text, atomically: true, encoding: .utf8)

        let mismatches = await withTaskGroup(of: Int.self) { group in
            for index in 0..<10_000 {
                let path = index.isMultiple(of: 2) ? empty : text
                let expected = index.isMultiple(of: 2) ? "Length : 0" : "Length : 500"
                group.addTask {
                    do throws(SoundFileError) {
                        _ = try SoundFile(readingAtPath: path)
                        return 1
                    } catch {
                        return error.parseLog.contains(expected) && error.path == path ? 0 : 1
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test func codesDescribeThemselvesWithLibsndfilesText() {
        #expect(SoundFileError.Code.unsupportedEncoding.description == "Supported file format but unsupported encoding.")
        #expect(SoundFileError.Code(rawValue: 1) == .unrecognisedFormat)
        #expect(SoundFileError.Code.system.rawValue == 2)
        #expect(SoundFileError.Code.malformedFile.rawValue == 3)
    }
}

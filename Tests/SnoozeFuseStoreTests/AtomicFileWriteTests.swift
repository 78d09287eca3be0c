import Foundation
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// AtomicFile.write replaces a file whole: a new private file in its place and no temporary file
/// left beside it.
@Suite("AtomicFile.write: a file replaced whole")
struct AtomicFileWriteTests {
    @Test func aFileIsReplacedWholeInAPrivateFolderWithNothingLeftBeside() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("state/session.json")
        let first = Data(repeating: UInt8(ascii: "a"), count: 10_000)
        let second = Data("{\"phase\":\"napping\"}".utf8)
        try AtomicFile.write(first, to: url)
        #expect(try AtomicFile.read(url) == first)
        try AtomicFile.write(second, to: url)
        #expect(try AtomicFile.read(url) == second, "the shorter contents replace the longer whole")
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: url.deletingLastPathComponent().path)
        #expect((folderAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700, "the missing folder is made private")
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["session.json"])
    }

    /// The same by path (what a nap's live state is written with): a folder made, a relative path
    /// in the working folder, a folder that is a file refused with its name.
    @Test func byPathAsByURL() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("state/deeper/session.json")
        try AtomicFile.write(Array("{}".utf8), toPath: path)
        #expect(try AtomicFile.read(path: path) == Data("{}".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("state/deeper")) == ["session.json"])
        let relative = "snoozefuse-relative-\(getpid()).json"
        defer { unlink(relative) }
        try AtomicFile.write(Array("x".utf8), toPath: relative)
        #expect(try AtomicFile.read(path: FileManager.default.currentDirectoryPath + "/" + relative) == Data("x".utf8))
        try Data().write(to: folder.url.appendingPathComponent("file"))
        #expect(throws: StoreError.self) { try AtomicFile.write(Array("y".utf8), toPath: folder.path("file/session.json")) }
    }
}

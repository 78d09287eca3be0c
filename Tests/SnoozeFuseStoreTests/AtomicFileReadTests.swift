import Foundation
import SnoozeFuseStore
import SnoozeFuseTestSupport
import Testing

/// AtomicFile.read reads a file whole, whatever its size, and files of /proc, which have none.
@Suite("AtomicFile.read: a file whole")
struct AtomicFileReadTests {
    @Test func filesOfEverySizeAroundItsReadsReadWhole() throws {
        let folder = try TemporaryFolder()
        var random = SeededRandom(seed: 0x5EED_2026_1128)
        for size in [0, 1, 1_268, 4_095, 4_096, 4_097, 8_192, 65_536, 100_003] {
            let bytes = Data((0 ..< size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            let path = folder.path("f\(size)")
            try bytes.write(to: URL(fileURLWithPath: path))
            #expect(try AtomicFile.read(path: path) == bytes, "\(size) bytes")
        }
    }

    @Test func aFileWithoutASizeIsReadToItsEnd() throws {
        // /proc files say size 0; this one is longer than the 4 KiB of one read.
        let read = try #require(try AtomicFile.read(path: "/proc/self/smaps"))
        #expect(read.count > 4_096)
        #expect(String(decoding: read, as: UTF8.self).hasSuffix("\n"))
        #expect(try AtomicFile.read(path: "/proc/self/status").map { String(decoding: $0, as: UTF8.self).hasPrefix("Name:") } == true)
    }

    @Test func aMissingFileIsNilAndAFolderIsAnErrorNamingIt() throws {
        let folder = try TemporaryFolder()
        #expect(try AtomicFile.read(path: folder.path("missing")) == nil)
        do {
            _ = try AtomicFile.read(path: folder.url.path)
            Issue.record("read a folder")
        } catch {
            #expect("\(error)".contains(folder.url.path), "\(error)")
        }
    }
}

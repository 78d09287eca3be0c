import Foundation
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// The room kept for a file that must stay writable on a full disk: made with real blocks, written
/// in place and traded for the file, which is whole before and after.
@Suite("Disk reserve: a file written without a new block")
struct DiskReserveTests {
    func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func theSpareTakesTheNewContentsAndKeepsTheOldOnesForNextTime() throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-reserve")
        let file = folder.path("state.json"), spare = folder.path("state.spare")
        try #"{"a":1}"#.write(toFile: file, atomically: false, encoding: .utf8)
        let reserve = DiskReserve(spare: spare, size: 4096)
        try reserve.ensure()
        var info = stat()
        #expect(stat(spare, &info) == 0 && info.st_size == 4096 && info.st_blocks * 512 >= 4096)
        try reserve.replace(file, with: Array(#"{"a":2}"#.utf8))
        // The file: the new contents, padded with spaces to the spare's size (JSON readers skip them).
        let written = try #require(contents(file))
        #expect(written.utf8.count == 4096)
        #expect(written.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"a":2}"#)
        #expect((try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Int]) == ["a": 2])
        // The spare: the old file, room for the next write.
        #expect(contents(spare) == #"{"a":1}"#)
        try reserve.replace(file, with: Array(#"{"a":3}"#.utf8))
        #expect(contents(file)?.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"a":3}"#)
        #expect(contents(spare)?.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"a":2}"#)
        // ensure() leaves a spare that holds the room (whatever it holds), and makes a smaller one again.
        try reserve.ensure()
        #expect(contents(spare)?.utf8.count == 4096 && contents(spare)?.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"a":2}"#)
        try "x".write(toFile: spare, atomically: false, encoding: .utf8)
        try reserve.ensure()
        #expect(contents(spare)?.utf8.count == 4096 && contents(spare)?.trimmingCharacters(in: .whitespacesAndNewlines) == "")
    }

    @Test func contentsLargerThanTheSpareAreRefusedAndTheFileIsUntouched() throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-reserve")
        let file = folder.path("state.json"), spare = folder.path("state.spare")
        try "old".write(toFile: file, atomically: false, encoding: .utf8)
        // A spare smaller than one block holds what its block does.
        let reserve = DiskReserve(spare: spare, size: 100)
        try reserve.ensure()
        var info = stat()
        #expect(stat(spare, &info) == 0)
        let room = max(Int(info.st_size), Int(info.st_blocks) * 512)
        #expect(throws: DiskReserve.Failure.self) { try reserve.replace(file, with: [UInt8](repeating: 0x41, count: room + 1)) }
        #expect(contents(file) == "old")
        #expect(contents(spare)?.utf8.count == 100)
    }

    @Test func withNoFileYetTheSpareBecomesTheFile() throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-reserve")
        let file = folder.path("state.json"), spare = folder.path("state.spare")
        let reserve = DiskReserve(spare: spare, size: 1024)
        try reserve.ensure()
        try reserve.replace(file, with: Array("[]".utf8))
        #expect(contents(file)?.hasPrefix("[] ") == true)
        #expect(!FileManager.default.fileExists(atPath: spare))
        #expect(throws: DiskReserve.Failure.self) { try reserve.replace(file, with: Array("[1]".utf8)) }
        #expect(contents(file)?.hasPrefix("[] ") == true)
    }
}

import Foundation
@testable import SnoozeFusePluginHost
import SnoozeFuseSystem
import Synchronization
import Testing

/// How a plugin child's standard error is cut into lines: whole lines across the reads' buffer
/// boundaries, a long line in pieces, a last line without its newline.
@Suite("Plugin standard error: lines")
struct PluginErrorOutputTests {
    /// Every line handed on, and whether a newline ended it.
    struct Collect: PluginErrorSink {
        final class Lines: Sendable {
            let taken = Locked<[(String, Bool)]>([])
            let finished = Atomic<Bool>(false)
        }

        let lines: Lines

        mutating func take(_ line: [UInt8], ended: Bool) {
            lines.taken.withLock { $0.append((String(decoding: line, as: UTF8.self), ended)) }
        }

        mutating func finish() {
            lines.finished.store(true, ordering: .releasing)
        }
    }

    @Test func linesAcrossReadsALongLineInPiecesAndALastLineWithoutItsNewline() throws {
        let ends = try #require(makePipe())
        // 3000 short lines (18000 bytes: past one read's 16 KiB, so one is cut between reads), a
        // line of 10000 bytes, then one without a newline.
        let long = String(repeating: "x", count: 10_000)
        let text = String(repeating: "abcde\n", count: 3000) + long + "\ntail"
        let written = text.utf8CString.withUnsafeBufferPointer { write(ends.write, $0.baseAddress, $0.count - 1) }
        #expect(written == text.utf8.count)
        close(ends.write)
        let lines = Collect.Lines()
        let output = PluginErrorOutput()
        #expect(output.start(reading: ends.read, into: Collect(lines: lines)))
        #expect(output.waitUntilRead(deadline: BootInstant.now.advanced(by: .seconds(30))))
        let finished = lines.finished.load(ordering: .acquiring)
        #expect(finished)
        let taken = lines.taken.withLock { $0 }
        try #require(taken.count == 3000 + 3 + 1, "\(taken.count) lines")
        #expect(taken.prefix(3000).allSatisfy { $0.0 == "abcde" && $0.1 }, "\(taken.prefix(3000).filter { $0.0 != "abcde" || !$0.1 })")
        let pieces = taken.dropFirst(3000).prefix(3)
        #expect(pieces.map(\.0.count) == [4096, 4096, 10_000 - 2 * 4096])
        #expect(pieces.map(\.1) == [false, false, true])
        #expect(pieces.allSatisfy { $0.0.allSatisfy { $0 == "x" } })
        #expect(taken.last?.0 == "tail" && taken.last?.1 == false)
    }

    @Test func theExcerptCountsEveryByteAndKeepsTheHostsWarningsApart() throws {
        let ends = try #require(makePipe())
        let text = String(repeating: "noise\n", count: 100) + "snoozefuse: warning: plugin a.b: said once\n" + "end"
        let written = text.utf8CString.withUnsafeBufferPointer { write(ends.write, $0.baseAddress, $0.count - 1) }
        #expect(written == text.utf8.count)
        close(ends.write)
        let result = PluginErrorExcerpt.Result()
        let output = PluginErrorOutput()
        #expect(output.start(reading: ends.read, into: PluginErrorExcerpt(into: result)))
        #expect(output.waitUntilRead(deadline: BootInstant.now.advanced(by: .seconds(30))))
        let details = result.summary.withLock { $0.details }
        #expect(details.first == "it wrote \(text.utf8.count) bytes to standard error (102 lines; a nap keeps 64 KiB of each instance's in plugins.log in the state folder); the first 5, and of the warnings logged through host->log the first 1:", "\(details)")
        #expect(Array(details.dropFirst()) == Array(repeating: "| noise", count: 5) + ["| snoozefuse: warning: plugin a.b: said once"], "\(details)")
    }
}

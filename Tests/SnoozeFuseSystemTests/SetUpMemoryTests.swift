import Foundation
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// Giving back what a set-up touched: only mappings whose pages are all their file's own, read
/// from smaps as the kernel writes it; with real mappings, their pages go and their contents stay.
@Suite("Set-up memory: clean file pages given back, written ones kept")
struct SetUpMemoryTests {
    /// Four lines of a mapping in smaps's format, with the fields that decide.
    func mapping(_ range: String, _ permissions: String, _ path: String, rss: Int, anonymous: Int, locked: Int = 0) -> String {
        """
        \(range) \(permissions) 00001000 fe:01 1234567                    \(path)
        Size:                 64 kB
        KernelPageSize:        4 kB
        Rss:                  \(rss) kB
        Pss:                  \(rss) kB
        Anonymous:            \(anonymous) kB
        LazyFree:              0 kB
        Locked:               \(locked) kB
        THPeligible:    0
        VmFlags: rd ex mr mw me sd

        """.replacingOccurrences(of: "\n\n", with: "\n")
    }

    @Test func onlyPrivateReadOnlyFileMappingsWithNoWrittenPageAreChosen() {
        let text = [
            mapping("00200000-0069a000", "r--p", "/usr/bin/snoozefuse", rss: 448, anonymous: 0),
            mapping("0069a000-01a7c000", "r-xp", "/usr/bin/snoozefuse", rss: 10436, anonymous: 0),
            // Relocated read-only data: the loader wrote its pages.
            mapping("01a7c000-01b39000", "r--p", "/usr/bin/snoozefuse", rss: 756, anonymous: 12),
            mapping("01b39000-03f87000", "rw-p", "/usr/bin/snoozefuse", rss: 1972, anonymous: 1900),
            mapping("7f0000000000-7f0000021000", "rw-p", "", rss: 132, anonymous: 132),
            mapping("7f0000100000-7f0000200000", "r--s", "/dev/shm/pulse-shm-1", rss: 64, anonymous: 0),
            mapping("7f0000300000-7f0000400000", "r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6", rss: 0, anonymous: 0),
            mapping("7f0000400000-7f0000500000", "r-xp", "/usr/lib/locked.so", rss: 64, anonymous: 0, locked: 64),
            mapping("7f0000500000-7f0000600000", "r--p", "/tmp/a name with spaces (deleted)", rss: 8, anonymous: 0),
            mapping("7ffd00000000-7ffd00002000", "r-xp", "[vdso]", rss: 8, anonymous: 0),
        ].joined()
        let chosen = SetUpMemory.clean(smaps: Array(text.utf8))
        #expect(chosen == [
            .init(start: 0x200000, end: 0x69a000, residentKiB: 448, path: "/usr/bin/snoozefuse"),
            .init(start: 0x69a000, end: 0x1a7c000, residentKiB: 10436, path: "/usr/bin/snoozefuse"),
            .init(start: 0x7f0000500000, end: 0x7f0000600000, residentKiB: 8, path: "/tmp/a name with spaces (deleted)"),
        ])
    }

    @Test func aMappingWhoseFieldsAreMissingOrCutShortIsNotChosen() {
        let whole = mapping("00200000-00300000", "r-xp", "/usr/bin/x", rss: 64, anonymous: 0)
        // No Anonymous line: whether a page was written is unknown.
        let noAnonymous = whole.split(separator: "\n").filter { !$0.hasPrefix("Anonymous") }.joined(separator: "\n") + "\n"
        #expect(SetUpMemory.clean(smaps: Array(noAnonymous.utf8)).isEmpty)
        // Cut in its header, or nothing but a header.
        #expect(SetUpMemory.clean(smaps: Array("00200000-00300000 r-xp 00000000".utf8)).isEmpty)
        #expect(SetUpMemory.clean(smaps: Array("00200000-zz r-xp 00000000 fe:01 1 /usr/bin/x\nRss: 4 kB\nAnonymous: 0 kB\n".utf8)).isEmpty)
        #expect(SetUpMemory.clean(smaps: []).isEmpty)
        #expect(SetUpMemory.clean(smaps: Array(whole.utf8)).count == 1)
    }

    /// The resident size (KiB) of this process's mapping that starts at `address`, from smaps.
    func residentKiB(at address: UnsafeMutableRawPointer) -> Int? {
        let text = wholeProcFile("/proc/self/smaps")
        var inside = false
        for line in text.split(separator: "\n") {
            let first = line.prefix { $0 != " " }
            if let dash = first.firstIndex(of: "-"), !first.hasSuffix(":") {
                inside = UInt(first[..<dash], radix: 16) == UInt(bitPattern: address)
            } else if inside, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ")[1])
            }
        }
        return nil
    }

    @Test func aCleanMappingLosesItsPagesAndKeepsItsContentsAWrittenOneKeepsBoth() throws {
        let folder = try TemporaryFolder(prefix: "snoozefuse-setup-memory")
        let path = folder.path("pages.bin")
        let length = 256 * 1024
        let pattern = (0 ..< length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        try Data(pattern).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        // A clean mapping of the file, every page read.
        let clean = try #require(mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0))
        try #require(clean != MAP_FAILED)
        defer { munmap(clean, length) }
        var sum = 0
        for offset in stride(from: 0, to: length, by: 4096) { sum &+= Int(clean.load(fromByteOffset: offset, as: UInt8.self)) }
        // A mapping of the same file with one page written, then made read-only (as the loader
        // leaves relocated data): its written page must survive.
        let written = try #require(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, descriptor, 0))
        try #require(written != MAP_FAILED)
        defer { munmap(written, length) }
        for offset in stride(from: 0, to: length, by: 4096) { sum &+= Int(written.load(fromByteOffset: offset, as: UInt8.self)) }
        written.storeBytes(of: 0xA5, toByteOffset: 8192, as: UInt8.self)
        try #require(mprotect(written, length, PROT_READ) == 0)
        #expect(sum != 0)
        #expect(try #require(residentKiB(at: clean)) == length / 1024)
        #expect(try #require(residentKiB(at: written)) == length / 1024)

        let given = SetUpMemory.giveBack()

        #expect(given.mappings >= 1 && given.residentKiB >= length / 1024)
        #expect(residentKiB(at: clean) == 0)
        #expect(residentKiB(at: written) == length / 1024)
        // Read again: the file's own bytes, mapped back from the page cache.
        #expect(Array(UnsafeRawBufferPointer(start: clean, count: length)) == pattern)
        var expected = pattern
        expected[8192] = 0xA5
        #expect(Array(UnsafeRawBufferPointer(start: written, count: length)) == expected)
        #expect(residentKiB(at: clean) == length / 1024)
    }
}

import CLinux
import Glibc

/// Gives back what a long-lived process's set-up left resident and its waiting does not need.
///
/// A nap parses its command, reads its settings from the store, checks its sound, starts its
/// guardian and its plugins; each touches code and read-only data of the binary and its libraries
/// once, and the kernel keeps those pages mapped, and counted as the process's memory, for the
/// rest of the nap (issue 23: a ringing nap held 13.6 MiB of its binary, about half of it code and
/// data that only its set-up ran). Here the process unmaps them (`madvise(MADV_DONTNEED)`): they
/// stay in the page cache, and what runs again maps its own pages back with a minor fault.
///
/// Only mappings whose pages are all the file's own are given back: private, read-only, mapped
/// from a file, with no page written since it was mapped (`Anonymous: 0 kB` in smaps: relocated
/// read-only data, whose pages the loader wrote, would lose its relocations) and none locked. The
/// heap's free memory goes back with `malloc_trim`.
///
/// Call it once the set-up is over, when no other thread is loading or unloading a library or
/// mapping a file: a mapping replaced at the same address between the read of smaps and the
/// `madvise` (milliseconds) would lose its pages.
public enum SetUpMemory {
    /// A mapping of `/proc/PID/smaps` that can be given back.
    public struct Mapping: Sendable, Hashable {
        public var start: UInt
        public var end: UInt
        /// Its resident size (KiB) when it was read.
        public var residentKiB: Int
        /// The file it maps.
        public var path: String

        public init(start: UInt, end: UInt, residentKiB: Int, path: String) {
            self.start = start
            self.end = end
            self.residentKiB = residentKiB
            self.path = path
        }
    }

    /// What ``giveBack()`` gave back.
    public struct Given: Sendable, Hashable {
        /// How many mappings were unmapped (each stays mapped; its pages come back on use).
        public var mappings: Int
        /// Their resident size (KiB) before.
        public var residentKiB: Int
    }

    /// Unmaps the resident pages of every mapping ``clean(smaps:)`` finds in this process, and
    /// trims the heap. Nothing when smaps cannot be read.
    @discardableResult
    public static func giveBack() -> Given {
        var given = Given(mappings: 0, residentKiB: 0)
        guard let text = readProcFile("/proc/self/smaps", limit: 64 << 20) else { return given }
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        for mapping in clean(smaps: text) where mapping.start % pageSize == 0 && mapping.end > mapping.start {
            let address = UnsafeMutableRawPointer(bitPattern: mapping.start)
            if madvise(address, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 {
                given.mappings += 1
                given.residentKiB += mapping.residentKiB
            }
        }
        malloc_trim(0)
        return given
    }

    /// The mappings of smaps's text whose resident pages can be dropped and mapped back from
    /// their file unchanged: private (`p`), not writable, mapped from a file (a path), with some
    /// pages resident, none written (`Anonymous: 0 kB`) and none locked.
    public static func clean(smaps text: [UInt8]) -> [Mapping] {
        var found: [Mapping] = []
        var current: (mapping: Mapping, candidate: Bool, anonymous: Int?, locked: Int?)?
        func finish() {
            if let entry = current, entry.candidate, entry.anonymous == 0, entry.locked ?? 0 == 0, entry.mapping.residentKiB > 0 {
                found.append(entry.mapping)
            }
            current = nil
        }
        var lineStart = 0
        while lineStart < text.count {
            let lineEnd = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? text.count
            let line = text[lineStart ..< lineEnd]
            lineStart = lineEnd + 1
            guard let first = line.first else { continue }
            // A mapping's line starts with its address (lowercase hexadecimal); its fields with a
            // capitalised name. Only three of the fields matter.
            if isHexadecimal(first) {
                finish()
                if let header = header(line) { current = (header.mapping, header.candidate, nil, nil) }
            } else if current != nil, first == UInt8(ascii: "R") || first == UInt8(ascii: "A") || first == UInt8(ascii: "L"),
                      let (name, kib) = field(line) {
                switch name {
                case "Rss": current?.mapping.residentKiB = kib
                case "Anonymous": current?.anonymous = kib
                case "Locked": current?.locked = kib
                default: break
                }
            }
        }
        finish()
        return found
    }

    /// `start-end perms offset device inode [path]`, or nil when the line is not one.
    private static func header(_ line: ArraySlice<UInt8>) -> (mapping: Mapping, candidate: Bool)? {
        let space = UInt8(ascii: " ")
        var index = line.startIndex
        /// The next run of non-spaces, after any spaces.
        func word() -> ArraySlice<UInt8> {
            while index < line.endIndex, line[index] == space { index += 1 }
            let start = index
            while index < line.endIndex, line[index] != space { index += 1 }
            return line[start ..< index]
        }
        let range = word(), permissions = word()
        guard let dash = range.firstIndex(of: UInt8(ascii: "-")),
              let start = hexadecimal(range[..<dash]), let end = hexadecimal(range[(dash + 1)...]),
              permissions.count == 4 else { return nil }
        for _ in 0 ..< 3 {   // offset, device, inode
            if word().isEmpty { return nil }
        }
        while index < line.endIndex, line[index] == space { index += 1 }
        let file = line[index...]
        let flags = Array(permissions)
        let candidate = flags[0] == UInt8(ascii: "r") && flags[1] == UInt8(ascii: "-") && flags[3] == UInt8(ascii: "p")
            && file.first == UInt8(ascii: "/")
        return (Mapping(start: start, end: end, residentKiB: 0, path: candidate ? String(decoding: file, as: UTF8.self) : ""), candidate)
    }

    private static func isHexadecimal(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a") ... UInt8(ascii: "f")).contains(byte)
    }

    /// `Name:   123 kB` as its name and number; nil for any other line.
    private static func field(_ line: ArraySlice<UInt8>) -> (String, Int)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        var value = 0, digits = 0
        for byte in line[(colon + 1)...] {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if digits > 0 { break }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value < Int.max / 10 - 10 else {
                return digits > 0 ? (name, value) : nil
            }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? (name, value) : nil
    }

    private static func hexadecimal(_ digits: ArraySlice<UInt8>) -> UInt? {
        UInt(String(decoding: digits, as: UTF8.self), radix: 16)
    }
}

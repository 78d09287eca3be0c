import Foundation
import SnoozeFuseCore
@testable import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

/// The plugin host writes and reads its JSON with Core's JSONValueEncoder and JSONValueDecoder (the
/// host program carries no Foundation): the scanner's lines, the checking child's messages, the
/// `--check-only` answer and the scan cache are what JSONEncoder (`.sortedKeys`,
/// `.withoutEscapingSlashes`) wrote before, byte for byte, and what JSONEncoder wrote (a cache
/// on disk, a host program of the version before) still reads the same.
@Suite("Plugin host JSON: what JSONEncoder wrote and JSONDecoder read")
struct PluginJSONTests {
    static func foundationText<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The same text as JSONEncoder's, read back the same by both decoders, and JSONEncoder's
    /// text read back the same by JSONValueDecoder.
    static func expectSameJSON<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let mine = try JSONValueEncoder().encode(value), foundation = try foundationText(value)
        #expect(mine == foundation, sourceLocation: sourceLocation)
        #expect(try JSONDecoder().decode(T.self, from: Data(mine.utf8)) == value, "\(mine)", sourceLocation: sourceLocation)
        #expect(try JSONValueDecoder().decode(T.self, from: mine) == value, "\(mine)", sourceLocation: sourceLocation)
        #expect(try JSONValueDecoder().decode(T.self, from: foundation) == value, "\(foundation)", sourceLocation: sourceLocation)
    }

    /// A path with what JSON escapes, slashes and text beyond ASCII.
    static let oddPath = "/home/ünï/plug ins/🌙/\"quoted\"\\back\n\t\u{1}\u{1F}\u{7F}/x.so"

    static let info = PluginInfo(id: "org.example.rain", name: "Rain \"heavy\"", version: "1.2.3", vendor: "Exämple/Vendor",
                                 summary: "rain on a roof\nall night", configHelp: "volume=0..1: how loud\nseed=N: which rain",
                                 kinds: [.soundSource, .pulseEmitter], features: .max, abiMajor: 1, abiMinor: 0, path: oddPath)
    static let bareInfo = PluginInfo(id: "a.b", name: "", version: "", vendor: "", summary: nil, configHelp: nil,
                                     kinds: .pulseEmitter, features: 0, abiMajor: .max, abiMinor: 7, path: "/p")

    /// One reason of every case, in the order declared.
    static let reasons: [PluginError.Reason] = [
        .unreadable("No such file or directory"), .writableByOthers(path: oddPath, mode: 0o40777),
        .ownedByOtherUser(path: "/opt", owner: 4_294_967_294, user: 1000), .endedWhileLoading("killed by signal 11 (Segmentation fault)"),
        .hungWhileLoading(milliseconds: 2000), .reservedID("org.snoozefuse.x"), .changedSinceScan(expected: "a.b", found: "c.d"),
        .openFailed("/x.so: cannot open shared object file"), .missingEntry, .nullDescriptor,
        .abiMajorMismatch(plugin: 2, pluginMinor: 1, host: 1, hostMinor: 0), .structTooSmall(name: "snoozefuse_plugin_descriptor", size: 8, expected: 96),
        .missingField("snoozefuse_sound_source.render"), .invalidID("Not An ID"), .noKnownKind(12),
        .duplicateID(id: "a.b", firstPath: "/first/a.so"), .unknownPlugin("rain"), .wrongKind(id: "a.b", wanted: "pulse emitter"),
        .callFailed(call: "activate", status: -5, message: "volume=loud: expected 0..1"), .renderNotFinite,
        .timedOut(call: "emit", milliseconds: 1000), .processEnded("exited with status 3"),
    ]

    /// The position of `reason`'s case among the declared ones: a case added to `Reason` stops this
    /// compiling until ``reasons`` has one of it.
    static func caseIndex(_ reason: PluginError.Reason) -> Int {
        switch reason {
        case .unreadable: 0
        case .writableByOthers: 1
        case .ownedByOtherUser: 2
        case .endedWhileLoading: 3
        case .hungWhileLoading: 4
        case .reservedID: 5
        case .changedSinceScan: 6
        case .openFailed: 7
        case .missingEntry: 8
        case .nullDescriptor: 9
        case .abiMajorMismatch: 10
        case .structTooSmall: 11
        case .missingField: 12
        case .invalidID: 13
        case .noKnownKind: 14
        case .duplicateID: 15
        case .unknownPlugin: 16
        case .wrongKind: 17
        case .callFailed: 18
        case .renderNotFinite: 19
        case .timedOut: 20
        case .processEnded: 21
        }
    }

    @Test func everyReasonOfAnErrorIsWrittenAndReadAsBefore() throws {
        #expect(Self.reasons.map(Self.caseIndex) == Array(0 ... 21))
        for reason in Self.reasons {
            try Self.expectSameJSON(PluginError(path: Self.oddPath, reason: reason))
        }
        // Enums with values are objects named for their case, as Swift's synthesized Codable has them.
        #expect(try JSONValueEncoder().encode(PluginError.Reason.missingEntry) == #"{"missingEntry":{}}"#)
        #expect(try JSONValueEncoder().encode(PluginError.Reason.unreadable("x")) == #"{"unreadable":{"_0":"x"}}"#)
    }

    @Test func scanVerdictsAndTheScannersLinesAreWrittenAndReadAsBefore() throws {
        for verdict in [PluginScanVerdict.plugin(Self.info), .plugin(Self.bareInfo), .refused(PluginError(path: "/x", reason: .missingEntry))] {
            try Self.expectSameJSON(verdict)
            let line = PluginScanner.Line(path: Self.oddPath, verdict: verdict)
            let mine = try JSONValueEncoder().encode(line)
            #expect(mine == (try Self.foundationText(line)))
            let read = try JSONDecoder().decode(PluginScanner.Line.self, from: Data(mine.utf8))
            #expect(read.path == Self.oddPath && read.verdict == verdict && read.ready == nil)
        }
        let ready = try JSONValueEncoder().encode(PluginScanner.Line(ready: true))
        #expect(ready == #"{"ready":true}"#)
        #expect(try JSONValueDecoder().decode(PluginScanner.Line.self, from: ready).ready == true)
    }

    @Test func checkMessagesAndReportsAreWrittenAndReadAsBefore() throws {
        let messages = [
            PluginCheckMessage(phase: .load), PluginCheckMessage(note: "ABI 1.0 (host 1.0)"), PluginCheckMessage(rendered: 480_000),
            PluginCheckMessage(verdict: .pass, summary: "loads with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE", info: Self.info),
            PluginCheckMessage(phase: .emit, note: "n", rendered: 0, verdict: .warning, summary: Self.oddPath, info: Self.bareInfo),
        ]
        for message in messages { try Self.expectSameJSON(message) }
        for phase in [PluginCheckPhase.load, .create, .render, .emit] { try Self.expectSameJSON(PluginCheckMessage(phase: phase)) }
        for verdict in [PluginCheckVerdict.pass, .fail, .skip, .warning] { try Self.expectSameJSON(PluginCheckMessage(verdict: verdict)) }
        let report = PluginCheckReport(path: Self.oddPath, checks: [
            PluginCheckResult(name: "file", verdict: .pass, summary: "a regular file"),
            PluginCheckResult(name: PluginCheckName.sourceRealtime.rawValue, verdict: .fail, summary: "render made 2 system calls",
                              details: ["| write ×2", "it wrote 10 bytes"]),
        ])
        try Self.expectSameJSON(report)
        try Self.expectSameJSON(RenderProbeReport(systemCalls: ["write": 2, "futex": 1, "Futex": 3, "clock_nanosleep": 10], allocations: 1, frees: 0))
        for name in PluginCheckName.allCases { try Self.expectSameJSON([name: name.rawValue]) }
    }

    @Test func aCheckOnlyAnswerIsReadAsBefore() throws {
        let answers = [
            PluginStartAnswer(nil),
            PluginStartAnswer(PluginError(path: "/a.so", reason: .callFailed(call: "activate", status: 1, message: "bell=yes: expected 0 or 1"))),
            PluginStartAnswer(PluginError(path: Self.oddPath, reason: .openFailed("/a/b.so: cannot open"))),
        ]
        for answer in answers {
            try Self.expectSameJSON(answer)
            // The version before wrote it with a plain JSONEncoder (members unsorted, slashes escaped).
            let plain = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
            #expect(try JSONValueDecoder().decode(PluginStartAnswer.self, from: plain) == answer, "\(plain)")
        }
    }

    @Test func theScanCacheOnDiskIsWrittenAndReadAsBefore() throws {
        let folder = try TemporaryFolder()
        let plugins = folder.url.path + "/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        var entries: [String: PluginScanCache.Entry] = [:]
        for (index, name) in ["b.so", "B.so", "a10.so", "a2.so", "é.so", "_x.so"].enumerated() {
            let path = plugins + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data(name.utf8)))
            let identity = try #require(PluginScanCache.FileIdentity(path: path))
            let verdict: PluginScanVerdict = index.isMultiple(of: 2)
                ? .plugin(PluginInfo(id: "org.example.p\(index)", name: name, version: "1", vendor: "v", summary: nil, configHelp: "k=v",
                                     kinds: .soundSource, features: 5, abiMajor: 1, abiMinor: 0, path: path))
                : .refused(PluginError(path: path, reason: Self.reasons[index]))
            entries[path] = PluginScanCache.Entry(identity: identity, verdict: verdict)
        }
        let host = try #require(PluginScanCache.FileIdentity(path: plugins + "/b.so"))
        let cache = PluginScanCache(file: folder.url.path + "/cache/snoozefuse/plugins.json")

        // Written now: JSONEncoder's bytes for the same contents, and read back whole.
        try cache.save(entries, host: host)
        let written = try String(contentsOfFile: cache.file, encoding: .utf8)
        let contents = PluginScanCache.Contents(format: PluginScanCache.Contents.currentFormat, host: host, abi: PluginScanCache.abi,
                                                entries: entries)
        #expect(written == (try Self.foundationText(contents)))
        #expect(cache.load(host: host) == entries)
        let decoded = try JSONDecoder().decode(PluginScanCache.Contents.self, from: Data(written.utf8))
        #expect(decoded.entries == entries && decoded.host == host && decoded.format == 1 && decoded.abi == PluginScanCache.abi)

        // Written by the version before (JSONEncoder): read the same.
        let older = PluginScanCache(file: folder.url.path + "/older.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(FileManager.default.createFile(atPath: older.file, contents: try encoder.encode(contents), attributes: [.posixPermissions: 0o600]))
        #expect(older.load(host: host) == entries)
        // Another host program's cache is not used.
        #expect(older.load(host: try #require(PluginScanCache.FileIdentity(path: plugins + "/B.so"))).isEmpty)
    }

    /// A plugin file dated after 2262 (`touch -d 2300-01-01`; ext4, xfs, btrfs and tmpfs keep such
    /// times) or long before 1970: its identity is taken, not a trap in nanoseconds, and tells the
    /// two apart.
    @Test func fileTimesBeyondNanosecondsSince1970AreIdentitiesNotTraps() throws {
        let folder = try TemporaryFolder()
        let path = folder.url.path + "/late.so"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        var identities: [PluginScanCache.FileIdentity] = []
        for seconds in [10_413_792_000, -10_000_000_000, 1_800_000_000] as [Int] {
            var times = [timespec(tv_sec: seconds, tv_nsec: 5), timespec(tv_sec: seconds, tv_nsec: 5)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0, "utimensat: \(errno)")
            identities.append(try #require(PluginScanCache.FileIdentity(path: path)))
        }
        #expect(Set(identities.map(\.modified)).count == 3, "\(identities)")
    }
}

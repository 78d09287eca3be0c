import Foundation
import SnoozeFuseRuntime
import SnoozeFuseTestSupport
import Testing

/// Finding the built-in sounds from the executable: the install layout and a checkout's build folder.
@Suite struct BuiltInSoundsLocatorTests {
    /// The checkout this file is in (`Tests/SnoozeFuseRuntimeTests/…`).
    static let checkout = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A fresh folder under the system's temporary directory, with symlinks resolved.
    static func scratchFolder() throws -> URL {
        try makeTemporaryDirectory().resolvingSymlinksInPath()
    }

    static func touch(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: url)
    }

    @Test func findsTheCheckoutsSoundsFromTheBuildFolder() throws {
        let executable = BuiltProducts.executable("snoozefuse")
        let sounds = try #require(BuiltInSounds.locate(executable: executable))
        #expect(sounds.folder.resolvingSymlinksInPath().path
            == Self.checkout.appendingPathComponent("Sounds").resolvingSymlinksInPath().path)
        #expect(Set(sounds.names).isSuperset(of: ["beep", "chime", "rising", "digital", "gentle"]))
        let beep = try #require(sounds.path(named: BuiltInSounds.defaultName))
        #expect(beep.hasSuffix("/Sounds/beep.caf"))
    }

    @Test func findsTheInstallLayoutFirst() throws {
        let prefix = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let folder = prefix.appendingPathComponent("share/snoozefuse/sounds")
        for file in ["beep.caf", "chime.caf", ".hidden.caf", "notes.txt"] {
            try Self.touch(folder.appendingPathComponent(file))
        }
        let executable = prefix.appendingPathComponent("bin/snoozefuse")
        try Self.touch(executable)

        let sounds = try #require(BuiltInSounds.locate(executable: executable))
        #expect(sounds.folder.path == folder.path)
        #expect(sounds.names == ["beep", "chime"])
        #expect(sounds.path(named: "chime") == folder.appendingPathComponent("chime.caf").path)
        #expect(sounds.path(named: "rising") == nil)
        #expect(sounds.path(named: "../sounds/beep") == nil)
        #expect(sounds.path(named: ".hidden") == nil)
        #expect(sounds.path(named: "") == nil)

        // Through a symbolic link to the installed binary (e.g. from ~/bin), the same folder.
        let elsewhere = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let link = elsewhere.appendingPathComponent("bin/snoozefuse")
        try FileManager.default.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: executable)
        #expect(BuiltInSounds.locate(executable: link)?.folder.path == folder.path)
    }

    @Test func findsNothingForAnIncompleteInstall() throws {
        let prefix = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let executable = prefix.appendingPathComponent("bin/snoozefuse")
        try Self.touch(executable)
        #expect(BuiltInSounds.locate(executable: executable) == nil)
        #expect(BuiltInSounds.candidateFolders(executable: executable).map(\.path)
            == [prefix.appendingPathComponent("share/snoozefuse/sounds").path])
    }

    @Test func ignoresAnotherPackagesCheckout() throws {
        let other = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: other) }
        try Data("let package = Package(name: \"something-else\")\n".utf8)
            .write(to: other.appendingPathComponent("Package.swift"))
        try Self.touch(other.appendingPathComponent("Sounds/beep.caf"))
        let executable = other.appendingPathComponent(".build/debug/snoozefuse")
        try Self.touch(executable)
        #expect(BuiltInSounds.locate(executable: executable) == nil)
    }

    @Test(arguments: [
        ("beep", false), ("gentle", false), ("my.sound", false),
        ("rooster.wav", true), ("Alarm.MP3", true), ("chime.caf", true), ("./beep", true),
        ("sounds/beep", true), ("/usr/share/sounds/x", true), ("song.flac", true), ("voice.ogg", true),
    ])
    func tellsPathsFromNames(argument: String, isPath: Bool) {
        #expect(BuiltInSounds.isPath(argument) == isPath)
    }
}

import Foundation
import SnoozeFuseTestSupport
import Testing

/// The author kit's examples are built with the exact commands PLUGINS.md gives and must pass
/// `snoozefuse plugins check`, so CI keeps them working.
@Suite("Examples for plugin authors")
struct ExamplePluginTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    @Test func cExampleBuildsAndPassesTheCheck() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildC("example-rain.so", source: repositoryRoot.appendingPathComponent("Examples/c-plugin/rain.c").path)
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("org.example.rain"))
        // The author kit's parser: a typo is refused naming the key and the accepted ones, a bad
        // value naming the value; the validator reports both.
        let typo = try runMergingOutput(snoozefuse, ["plugins", "check", path, "--config", "volum=0.5"])
        #expect(typo.status != 0 && typo.output.contains(#"unknown key "volum" (rain accepts volume)"#), "\(typo.output)")
        let bad = try runMergingOutput(snoozefuse, ["plugins", "check", path, "--config", "volume=loud"])
        #expect(bad.status != 0 && bad.output.contains(#"volume: expected a number from 0 to 1, not "loud""#), "\(bad.output)")
    }

    /// The Swift example, built as PLUGINS.md says (with `extra` flags), at `path`.
    func buildSwiftExample(at path: String, _ extra: [String] = []) throws {
        let build = try runMergingOutput("/usr/bin/env", [
            "swiftc", "-emit-library", "-parse-as-library", "-O", "-module-name", "ExampleSwiftPlugin",
            "-I", abiInclude, repositoryRoot.appendingPathComponent("Examples/swift-plugin/Plugin.swift").path, "-o", path,
        ] + extra)
        #expect(build.status == 0, "\(build.output)")
    }

    @Test func swiftExampleBuildsAndPassesTheCheck() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = folder.path + "/example-swift.so"
        try buildSwiftExample(at: path)
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("org.example.swift-chime"))
        #expect(result.output.contains("sound_source + pulse_emitter"))
    }

    /// PLUGINS.md's way to a Swift plugin that loads on a machine without this toolchain: with
    /// `-static-stdlib` it needs no Swift library (only the system's), and still passes.
    @Test func swiftExampleWithTheStaticStandardLibraryNeedsNoSwiftLibraryAndPasses() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = folder.path + "/example-swift-static.so"
        try buildSwiftExample(at: path, ["-static-stdlib"])
        let dynamic = try runMergingOutput("/usr/bin/env", ["readelf", "--dynamic", path])
        #expect(dynamic.status == 0, "\(dynamic.output)")
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty && !needed.contains { $0.contains("libswift") }, "\(needed)")
        #expect(!dynamic.output.contains("(RUNPATH)") && !dynamic.output.contains("(RPATH)"), "\(dynamic.output)")
        let result = try runMergingOutput(snoozefuse, ["plugins", "check", path])
        #expect(result.status == 0, "\(result.output)")
    }
}

import Foundation
import SnoozeFuseTestSupport
import Testing

private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// CLazyLink's trampolines (every C library snoozefuse calls is linked on first use): built with
/// the template into a small C program that calls a library of every shape of call (more
/// arguments than registers, of both kinds, mixed, variadic, a structure returned through memory
/// and one passed by value, eight threads whose first calls race), on x86_64 natively, with the
/// system compiler and with the toolchain's clang, and on aarch64 under qemu (clang's assembly,
/// Debian's cross linker): each call returns what the library computed, the library is opened
/// once, and a library that is not there ends the program with what to install (exit 70).
/// One build at a time (`.serialized`): each compiles and runs a few programs, and the whole
/// suite's other tests include timed checks (the plugin validator's render limit) that share the
/// two cores.
@Suite("CLazyLink: a library linked on first use, every shape of call", .serialized)
struct LazyLinkTests {
    struct Built {
        let folder: TemporaryFolder
        let caller: String
        let libraryFolder: String
        /// How to run the caller: natively, or under an emulator.
        let runner: [String]
    }

    static let fixtures = repositoryRoot.appendingPathComponent("Tests/SnoozeFuseSystemTests/Fixtures")
    static let template = repositoryRoot.appendingPathComponent("Sources/CLazyLink")
    static var common: [String] {
        ["-O2", "-I", fixtures.path, "-I", template.appendingPathComponent("include").path]
    }

    static func buildNative(compiler: String) throws -> Built {
        let folder = try TemporaryFolder(prefix: "snoozefuse-lazy-link")
        let libraries = folder.path("lib")
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        try runTool(compiler, common + ["-shared", "-fPIC", fixtures.appendingPathComponent("lazy_library.c").path,
                                        "-o", libraries + "/liblazy_fixture.so"])
        try runTool(compiler, common + [fixtures.appendingPathComponent("lazy_caller.c").path,
                                        template.appendingPathComponent("lazy_link.c").path, "-o", folder.path("caller"), "-lpthread"])
        return Built(folder: folder, caller: folder.path("caller"), libraryFolder: libraries, runner: [])
    }

    static func buildAArch64() throws -> Built {
        let folder = try TemporaryFolder(prefix: "snoozefuse-lazy-link-arm64")
        let libraries = folder.path("lib")
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        let gcc = "aarch64-linux-gnu-gcc"
        try runTool(gcc, common + ["-shared", "-fPIC", fixtures.appendingPathComponent("lazy_library.c").path,
                                   "-o", libraries + "/liblazy_fixture.so"])
        // The trampolines as the toolchain's clang assembles them on an arm64 machine.
        for (source, object) in [(fixtures.appendingPathComponent("lazy_caller.c"), "caller.o"),
                                 (template.appendingPathComponent("lazy_link.c"), "lazy_link.o")] {
            try runTool("clang", ["--target=aarch64-linux-gnu"] + common + ["-c", source.path, "-o", folder.path(object)])
        }
        try runTool(gcc, [folder.path("caller.o"), folder.path("lazy_link.o"), "-o", folder.path("caller"), "-lpthread"])
        return Built(folder: folder, caller: folder.path("caller"), libraryFolder: libraries,
                     runner: ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"])
    }

    /// Runs the caller with `arguments`, its library found or not.
    static func run(_ built: Built, _ arguments: [String], libraryThere: Bool) throws -> (status: Int32, output: String, signalled: Bool) {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = libraryThere ? built.libraryFolder : built.folder.path("nothing-here")
        // What the test runner preloads (stdbuf's) is an x86_64 library: not for the emulated loader.
        environment["LD_PRELOAD"] = nil
        let command = built.runner + [built.caller] + arguments
        let executable = command[0].hasPrefix("/") ? command[0] : executableInPath(command[0]).path
        return try runMergingOutput(executable, Array(command.dropFirst()), environment: environment)
    }

    /// Every shape once as the first call (the only one through the stub), then every shape again.
    static func checkEveryCall(_ built: Built, _ label: String) throws {
        for arguments in [["threads"], ["integers"], ["doubles"], ["mixed"], ["variadic"], ["returned"], ["passed"], ["load"]] {
            let run = try run(built, arguments, libraryThere: true)
            let lines = run.output.split(separator: "\n").map(String.init)
            #expect(!run.signalled && run.status == 0, "\(label) \(arguments): status \(run.status): \(run.output)")
            #expect(lines.filter { $0.hasPrefix("ok ") }.count == 8, "\(label) \(arguments): \(run.output)")
            #expect(!lines.contains { $0.hasPrefix("wrong ") }, "\(label) \(arguments): \(run.output)")
            #expect(lines.last == "opened 1", "\(label) \(arguments): \(run.output)")
        }
        // Not there: the first call says so and what to install; an explicit load says why.
        let missing = try run(built, [], libraryThere: false)
        #expect(!missing.signalled && missing.status == 70, "\(label): status \(missing.status): \(missing.output)")
        #expect(missing.output.contains("cannot load liblazy_fixture.so (") && missing.output.contains("package lazy-fixture"),
                "\(label): \(missing.output)")
        #expect(!missing.output.contains("ok "), "\(label): nothing was called: \(missing.output)")
        let refused = try run(built, ["load"], libraryThere: false)
        #expect(refused.status == 3 && refused.output.hasPrefix("not loaded: ") && refused.output.contains("liblazy_fixture.so"),
                "\(label): \(refused.output)")
    }

    @Test(arguments: ["cc", "clang"])
    func everyShapeOfCallPassesThroughOnThisMachine(_ compiler: String) throws {
        let built = try Self.buildNative(compiler: compiler)
        try Self.checkEveryCall(built, compiler)
    }

    @Test func everyShapeOfCallPassesThroughOnAArch64() throws {
        let built = try Self.buildAArch64()
        try Self.checkEveryCall(built, "aarch64")
    }
}

import Foundation
import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

/// What the package promises, checked from the code: the libraries it depends on are those the
/// code opens, the plugins need no Swift, the version has one place, every component linked in is
/// named in the copyright file. (`make package-test` installs the package itself in clean roots.)
@Suite("Packaging")
struct PackagingTests {
    /// Packaging/runtime-libraries.txt: the file each library is opened by, and its Debian package.
    static func runtimeLibraries() throws -> [(file: String, package: String)] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("Packaging/runtime-libraries.txt"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { line in
            let words = line.split(separator: " ", maxSplits: 1)
            return (String(words[0]), words.count > 1 ? String(words[1]) : "")
        }
    }

    /// Every `"libNAME.so.N"` string literal in the sources (C, headers and Swift), with where.
    static func librariesTheCodeOpens() throws -> [String: String] {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        let literal = try Regex(#""(lib[A-Za-z0-9_+-]+\.so\.[0-9]+)""#)
        var found: [String: String] = [:]
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard ["c", "h", "swift"].contains(file.pathExtension) else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: literal) {
                found[String(match.output[1].substring ?? "")] = file.path.replacingOccurrences(of: repositoryRoot.path + "/", with: "")
            }
        }
        return found
    }

    /// The libraries are opened lazily, so dpkg-shlibdeps sees none of them: a library the code
    /// starts to open without a line in the list (and so without its package in Depends) fails here.
    @Test func everyLibraryTheCodeOpensHasItsPackageInTheList() throws {
        let listed = Dictionary(try Self.runtimeLibraries().map { ($0.file, $0.package) }, uniquingKeysWith: { first, _ in first })
        let opened = try Self.librariesTheCodeOpens()
        #expect(opened.count >= 8, "the sources name too few libraries: \(opened.keys.sorted())")
        for (library, source) in opened.sorted(by: { $0.key < $1.key }) {
            #expect(listed[library] != nil, "\(source) opens \(library), which Packaging/runtime-libraries.txt does not name (the .deb would not depend on its package)")
        }
        // And no stale line: each listed library beyond the C library's own is opened by the code.
        for library in listed.keys.sorted() where !["libc.so.6", "libm.so.6", "libgcc_s.so.1"].contains(library) {
            #expect(opened[library] != nil, "Packaging/runtime-libraries.txt names \(library), which no source opens")
        }
    }

    /// Where the code names the package for a library in its own message (`load(file:package:)`),
    /// it is the package the list (and so Depends) names.
    @Test func theCodesPackageNamesAgreeWithTheList() throws {
        let listed = Dictionary(try Self.runtimeLibraries().map { ($0.file, $0.package) }, uniquingKeysWith: { first, _ in first })
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("Sources/SnoozeFuseAudio/AudioLibraries.swift"), encoding: .utf8)
        let pairs = text.matches(of: try Regex(#"file: "([^"]+)", package: "([^"]+)""#))
        #expect(pairs.count >= 5)
        for pair in pairs {
            let file = String(pair.output[1].substring ?? ""), package = String(pair.output[2].substring ?? "")
            #expect(listed[file]?.hasPrefix(package) == true, "\(file): the code says \(package), the list says \(listed[file] ?? "nothing")")
        }
    }

    /// The README tells users of the tarball which Debian packages to install: all of the list's.
    @Test func theReadmeNamesEveryRuntimePackage() throws {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let debianRow = readme.split(separator: "\n").first { $0.hasPrefix("| Debian") }.map(String.init) ?? ""
        for package in Set(try Self.runtimeLibraries().map { $0.package.split(separator: " ")[0] }) where !["libc6", "libgcc-s1"].contains(package) {
            #expect(debianRow.contains(String(package)), "README's Debian row does not name \(package): \(debianRow)")
        }
    }

    /// The built-in plugins as `make build` makes them (Scripts/build-plugins.sh) need the C library
    /// and nothing else: no Swift runtime, no run path.
    @Test func theBuiltInPluginsNeedOnlyTheCLibrary() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let built = try runMergingOutput(repositoryRoot.appendingPathComponent("Scripts/build-plugins.sh").path, [folder.path])
        #expect(built.status == 0, "\(built.output)")
        for name in ["tone", "noise", "terminal", "command", "led", "rumble"] {
            try expectOnlyTheCLibrary(folder.path + "/libsnoozefuse-\(name).so")
        }
    }

    /// So does the C example of PLUGINS.md, built as it says.
    @Test func theCExampleNeedsOnlyTheCLibrary() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        try expectOnlyTheCLibrary(try folder.buildC("example-rain.so", source: repositoryRoot.appendingPathComponent("Examples/c-plugin/rain.c").path))
    }

    func expectOnlyTheCLibrary(_ path: String) throws {
        let dynamic = try runMergingOutput("/usr/bin/env", ["readelf", "--dynamic", path])
        #expect(dynamic.status == 0, "\(dynamic.output)")
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            line.split(separator: "[").last?.split(separator: "]").first.map(String.init)
        }
        #expect(!needed.isEmpty && Set(needed).isSubset(of: ["libc.so.6", "libm.so.6"]), "\(path) needs \(needed)")
        #expect(!dynamic.output.contains("(RUNPATH)") && !dynamic.output.contains("(RPATH)"), "\(dynamic.output)")
    }

    /// A plugin that needs a library the loader cannot find: `plugins check` names the library and
    /// the fix (the real loader, a real plugin linked against a library built here and then moved
    /// out of its way). One named like the Swift runtime gets the Swift fix: -static-stdlib.
    @Test(arguments: ["libsnoozefuse-test-helper.so", "libswiftFakeCore.so"])
    func aPluginWhoseLibraryIsMissingIsNamedWithTheFix(library: String) throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let helperSource = folder.path + "/helper.c"
        try "int snoozefuse_test_helper(void) { return 1; }\n".write(toFile: helperSource, atomically: true, encoding: .utf8)
        let helper = try runMergingOutput("/usr/bin/env", ["cc", "-shared", "-fPIC", "-Wl,-soname,\(library)", helperSource, "-o", folder.path + "/" + library])
        #expect(helper.status == 0, "\(helper.output)")
        let plugin = try runMergingOutput("/usr/bin/env", ["cc", "-std=c11", "-shared", "-fPIC", "-I", abiInclude, testPluginSource,
                                                           "-Wl,--no-as-needed", folder.path + "/" + library, "-lm", "-lpthread",
                                                           "-o", folder.path + "/needs-helper.so"])
        #expect(plugin.status == 0, "\(plugin.output)")
        try FileManager.default.removeItem(atPath: folder.path + "/" + library)
        let checked = try runMergingOutput(BuiltProducts.executable("snoozefuse").path, ["plugins", "check", folder.path + "/needs-helper.so"])
        #expect(checked.status != 0, "\(checked.output)")
        #expect(checked.output.contains("it needs \(library)"), "\(checked.output)")
        if library.hasPrefix("libswift") {
            #expect(checked.output.contains("-static-stdlib") && checked.output.contains("PLUGINS.md"), "\(checked.output)")
        } else {
            #expect(checked.output.contains("apt-file search \(library)"), "\(checked.output)")
        }
    }

    /// dlerror's text, as glibc writes it, read for the missing library.
    @Test func theMissingLibraryIsReadFromTheLoadersText() {
        let plugin = "/home/a/.local/lib/snoozefuse/plugins/chime.so"
        #expect(PluginError.missingLibrary(in: "libswiftCore.so: cannot open shared object file: No such file or directory", plugin: plugin) == "libswiftCore.so")
        #expect(PluginError.missingLibrary(in: "\(plugin): cannot open shared object file: No such file or directory", plugin: plugin) == nil)
        #expect(PluginError.missingLibrary(in: "\(plugin): undefined symbol: render", plugin: plugin) == nil)
        #expect(PluginError.missingLibrary(in: "libfoo.so.2: cannot open shared object file: Permission denied", plugin: plugin) == "libfoo.so.2")
    }

    /// One place holds the version: what --version prints, and what `make deb`/`make dist` read.
    @Test func theVersionHasOnePlace() throws {
        let source = try String(contentsOf: repositoryRoot.appendingPathComponent("Sources/SnoozeFuseSystem/BuildStamp.swift"), encoding: .utf8)
        let number = try #require(source.firstMatch(of: try Regex(#"static let release = "([0-9]+\.[0-9]+\.[0-9]+)""#))?.output[1].substring)
        let version = try runProcessBlocking(BuiltProducts.executable("snoozefuse"), ["--version"])
        #expect(version.status == 0)
        // A plain `swift build` stamps no commit; `make build` does (the package test checks it).
        #expect(version.standardOutput.wholeMatch(of: try Regex("snoozefuse \(number)( \\([0-9a-f]{12}(-dirty)?\\))?\n")) != nil,
                "\(version.standardOutput)")
        // The changelog's newest entry is this version.
        let changelog = try String(contentsOf: repositoryRoot.appendingPathComponent("Packaging/changelog"), encoding: .utf8)
        #expect(changelog.hasPrefix("snoozefuse (\(number))"), "Packaging/changelog does not start with \(number)")
    }

    /// Every package the shipped programs link in is named, with its license, in the copyright file
    /// (swift-property-based is the tests' alone).
    @Test func theCopyrightFileNamesEveryPackageLinkedIn() throws {
        let manifest = try String(contentsOf: repositoryRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let copyright = try String(contentsOf: repositoryRoot.appendingPathComponent("Packaging/copyright"), encoding: .utf8)
        let packages = manifest.matches(of: try Regex(#"\.package\(url: "[^"]*/([^"/]+)""#)).map { String($0.output[1].substring ?? "") }
        #expect(packages.count >= 3)
        for package in packages where package != "swift-property-based" {
            #expect(copyright.contains(package), "Packaging/copyright does not name \(package)")
        }
    }
}

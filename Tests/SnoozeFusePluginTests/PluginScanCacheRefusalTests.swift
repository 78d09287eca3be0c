import Foundation
import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

/// The scan cache keeps what lies in the file, never a refusal whose cause lies outside it (issue
/// 40, item 9): a plugin refused for a library it needs stayed refused after the library was
/// installed, until the cache was deleted or the plugin touched. Real plugins, a real scanner child,
/// a real cache file.
@Suite struct PluginScanCacheRefusalTests {
    @Test func aPluginRefusedForAMissingLibraryLoadsOnceTheLibraryIsThere() async throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let plugins = folder.path + "/plugins", libraries = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        let library = "libsnoozefuse-cache-helper.so"
        let helperSource = folder.path + "/helper.c"
        try "int snoozefuse_cache_helper(void) { return 1; }\n".write(toFile: helperSource, atomically: true, encoding: .utf8)
        let helper = try runMergingOutput("/usr/bin/env", ["cc", "-shared", "-fPIC", "-Wl,-soname,\(library)", helperSource, "-o", folder.path + "/" + library])
        #expect(helper.status == 0, "\(helper.output)")
        // The plugin finds the library in lib/ (its RUNPATH), which is empty for now.
        let plugin = try runMergingOutput("/usr/bin/env", ["cc", "-std=c11", "-shared", "-fPIC", "-I", abiInclude, testPluginSource,
                                                           "-Wl,--no-as-needed", folder.path + "/" + library, "-Wl,-rpath,\(libraries)",
                                                           "-lm", "-lpthread", "-o", plugins + "/needs-helper.so"])
        #expect(plugin.status == 0, "\(plugin.output)")
        // A file that is no plugin at all (no entry function): refused for what lies in it.
        let notAPlugin = try runMergingOutput("/usr/bin/env", ["cc", "-shared", "-fPIC", helperSource, "-o", plugins + "/no-entry.so"])
        #expect(notAPlugin.status == 0, "\(notAPlugin.output)")
        let cache = PluginScanCache(file: folder.path + "/cache/plugins.json")
        @Sendable func scan() -> PluginRegistry {
            PluginDiscovery(searchPath: [PluginSearchPath(folder: plugins, origin: .environment)], host: hostProgram, cache: cache,
                            logger: LogRecorder().logger).scan()
        }
        func problem(_ registry: PluginRegistry, _ file: String) -> PluginProblem? {
            registry.problems.first { $0.error.path == plugins + "/" + file }
        }
        // Each scan starts scanner children and waits for them: on a thread of its own, never on
        // the pool that the other tests' tasks run on.
        let moved = folder.path + "/" + library, installed = libraries + "/" + library
        let (first, second, third, kept, fourth) = try await onOwnThread { () throws -> (PluginRegistry, PluginRegistry, PluginRegistry, String, PluginRegistry) in
            let first = scan(), second = scan()
            // The library is installed: the plugin loads, the file untouched.
            try FileManager.default.moveItem(atPath: moved, toPath: installed)
            let third = scan()
            let kept = (try? String(contentsOfFile: cache.file, encoding: .utf8)) ?? ""
            return (first, second, third, kept, scan())
        }

        #expect(first.plugins.isEmpty)
        #expect(problem(first, "needs-helper.so")?.error.description.contains("it needs \(library)") == true, "\(first.problems)")
        #expect(problem(first, "needs-helper.so")?.cachedIn == nil)
        #expect(problem(first, "no-entry.so")?.cachedIn == nil)

        // Scanned again, unchanged: the file's own refusal comes from the cache, and says so; the
        // missing library's does not (scanned again).
        #expect(problem(second, "no-entry.so")?.cachedIn == cache.file, "\(second.problems)")
        #expect(problem(second, "no-entry.so")?.description.contains("as an earlier scan found it, kept in \(cache.file)") == true)
        #expect(problem(second, "needs-helper.so")?.cachedIn == nil, "\(second.problems)")

        // The library installed: the plugin loads, the file untouched.
        #expect(third.plugins.map(\.path) == [plugins + "/needs-helper.so"], "\(third.problems)")
        #expect(problem(third, "needs-helper.so") == nil)
        // And the plugin found is kept in the cache (the missing library's refusal never was).
        #expect(kept.contains("needs-helper.so") && kept.contains("no-entry.so"), "\(kept)")
        #expect(fourth.plugins.map(\.path) == [plugins + "/needs-helper.so"])
    }
}

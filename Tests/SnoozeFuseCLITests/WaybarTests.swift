import Foundation
import Glibc
import SnoozeFuseTestSupport
import Testing

/// `snoozefuse status --follow --format waybar` read by a real waybar (Debian package `waybar`) on
/// a real sway started by the test (issue 39, item 4). What the bar shows is screenshot with grim
/// (package `grim`): `.build/test-output/waybar.png`, for a person to look at; the test reads the
/// same screen as PPM and finds the module's text drawn in the bar.
@Suite("A real waybar on a real sway shows the nap", .serialized)
struct WaybarTests {
    /// Where the screenshot is kept after the test.
    static var outputFolder: URL {
        BuiltProducts.folder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("test-output")
    }

    /// The pixels of a binary PPM (P6, 8 bits): width, height and RGB bytes.
    static func ppm(_ data: Data) -> (width: Int, height: Int, rgb: [UInt8])? {
        let bytes = [UInt8](data)
        var fields: [String] = []
        var index = 0
        while fields.count < 4, index < bytes.count {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
            let start = index
            while index < bytes.count, !(bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09) { index += 1 }
            fields.append(String(decoding: bytes[start ..< index], as: UTF8.self))
        }
        index += 1
        guard fields.count == 4, fields[0] == "P6", let width = Int(fields[1]), let height = Int(fields[2]), fields[3] == "255",
              bytes.count - index >= width * height * 3 else { return nil }
        return (width, height, Array(bytes[index ..< index + width * height * 3]))
    }

    /// Bright pixels (the bar's white text on its dark background) in the bar's left part.
    static func textPixels(_ image: (width: Int, height: Int, rgb: [UInt8]), barHeight: Int) -> Int {
        var count = 0
        for y in 0 ..< min(barHeight, image.height) {
            for x in 0 ..< min(400, image.width) {
                let at = (y * image.width + x) * 3
                if image.rgb[at] > 180 && image.rgb[at + 1] > 180 && image.rgb[at + 2] > 180 { count += 1 }
            }
        }
        return count
    }

    @Test func waybarShowsTheNapsCountdownAndLogsNoErrorForItsModule() async throws {
        let sway = try PrivateSway()
        defer { sway.stop() }
        guard FileManager.default.isExecutableFile(atPath: executableInPath("waybar").path),
              FileManager.default.isExecutableFile(atPath: executableInPath("grim").path) else {
            throw ToolFailure(description: "'waybar' or 'grim' is not installed (Debian packages `waybar`, `grim`; Scripts/apt-packages.txt)")
        }
        let seen = try await script { home, seen in
            var environment = sway.clientEnvironment(home.environment)
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + home.folder.path("no-system-bus")
            let configuration = home.folder.path("waybar.json"), style = home.folder.path("waybar.css")
            let program = BuiltProducts.executable("snoozefuse").path
            try """
                {"layer": "top", "position": "top", "height": 30, "modules-left": ["custom/snoozefuse"],
                 "custom/snoozefuse": {"exec": "'\(program)' status --follow --format waybar", "return-type": "json"}}
                """.write(toFile: configuration, atomically: true, encoding: .utf8)
            try "* { font-family: monospace; font-size: 16px; } window#waybar { background: #202020; color: #ffffff; }\n"
                .write(toFile: style, atomically: true, encoding: .utf8)
            func screen(_ name: String) -> Int? {
                let path = home.folder.path(name)
                guard (try? runProcessBlocking(executableInPath("grim"), ["-t", "ppm", path], environment: environment))?.status == 0,
                      let image = FileManager.default.contents(atPath: path).flatMap(Self.ppm) else { return nil }
                return Self.textPixels(image, barHeight: 30)
            }
            let bar = try BackgroundProcess(executableInPath("waybar"), ["-c", configuration, "-s", style], environment: environment,
                                            standardOutput: home.folder.path("waybar.out"), standardError: home.folder.path("waybar.err"))
            var barEnded = false
            defer {
                if !barEnded {
                    bar.signal(SIGTERM)
                    _ = bar.wait()
                }
            }
            // Without a nap the module shows nothing.
            // Waybar logs on standard output, GTK on standard error.
            func log() -> String {
                ["waybar.out", "waybar.err"].map { (try? String(contentsOfFile: home.folder.path($0), encoding: .utf8)) ?? "" }.joined(separator: "\n")
            }
            seen.steps["bar up"] = waitFor(.seconds(10)) { log().contains("Bar configured") }
            usleep(1_000_000)
            seen.numbers["text before"] = screen("before.ppm").map(Double.init)
            let nap = try BackgroundProcess(BuiltProducts.executable("snoozefuse"), [
                "nap", "--no-hold", "--release", "0", "--nap", "2m", "--device", "null", "--dismiss", "key", "--quiet",
            ], environment: environment, standardOutput: home.folder.path("nap.out"), standardError: home.folder.path("nap.err"))
            defer {
                _ = try? home.run(["stop", "--yes"])
                if !waitFor(.seconds(10), { !nap.isRunning }) { nap.signal(SIGTERM) }
                _ = nap.wait()
            }
            seen.steps["napping"] = waitFor(.seconds(10)) { home.state()?["phase"] as? String == "napping" }
            // The module's line comes as the state changes (no polling): drawn within a second or two.
            seen.steps["drawn"] = waitFor(.seconds(10)) { (screen("during.ppm") ?? 0) > Int(seen.numbers["text before"] ?? 0) + 40 }
            seen.numbers["text during"] = screen("during.ppm").map(Double.init)
            try? FileManager.default.createDirectory(at: Self.outputFolder, withIntermediateDirectories: true)
            let shot = Self.outputFolder.appendingPathComponent("waybar.png").path
            seen.numbers["png"] = Double((try? runProcessBlocking(executableInPath("grim"), [shot], environment: environment))?.status ?? -1)
            seen.numbers["png bytes"] = Double(((try? FileManager.default.attributesOfItem(atPath: shot))?[.size] as? Int) ?? 0)
            // What the module reads: the same command, once.
            seen.texts["line"] = (try? home.run(["status", "--format", "waybar"]))?.standardOutput
            seen.texts["log"] = log()
            // The module's program (and a shell between, if any) ends with the bar, even with no
            // nap to say anything about: once the nap is over, then waybar quits.
            let module = Self.descendants(of: bar.pid)
            seen.numbers["module processes"] = Double(module.count)
            _ = try? home.run(["stop", "--yes"])
            seen.steps["nap over"] = waitFor(.seconds(10)) { !nap.isRunning }
            usleep(500_000)
            bar.signal(SIGTERM)
            _ = bar.wait()
            barEnded = true
            seen.steps["module ended"] = waitFor(.seconds(5)) { module.allSatisfy { !isRunning($0) } }
        }
        let log = seen.texts["log"] ?? ""
        #expect(seen["bar up"] && seen["napping"], "\(log) \(seen.texts["diagnosis"] ?? "")")
        #expect(seen["drawn"], "the module's text in the bar: \(seen.numbers) \(log)")
        #expect(seen.numbers["png"] == 0 && (seen.numbers["png bytes"] ?? 0) > 1000, "the screenshot for a person: \(seen.numbers)")
        let line = try #require(seen.texts["line"]?.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        #expect((object["text"] as? String)?.contains("m") == true && object["class"] as? String == "napping", "\(object)")
        // Waybar says nothing went wrong with the module (it logs "[error]" or "[warning]" lines).
        let complaints = log.split(separator: "\n").filter { $0.contains("[error]") || ($0.contains("[warning]") && $0.contains("custom")) }
        #expect(complaints.isEmpty, "\(complaints)")
        #expect((seen.numbers["module processes"] ?? 0) >= 1, "waybar started its module: \(seen.numbers)")
        #expect(seen["nap over"] && seen["module ended"], "`status --follow` outlived its bar: \(seen.numbers)")
    }

    /// Every process below `pid` (its children, theirs …), from /proc.
    static func descendants(of pid: Int32) -> [Int32] {
        var parents: [Int32: Int32] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[child] = parent }
        }
        var found: [Int32] = []
        var frontier = [pid]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }
}

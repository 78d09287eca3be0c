import Foundation
import SnoozeFusePluginHost
import SnoozeFuseTestSupport
import Testing

let uinputHelperSource = repositoryRoot.appendingPathComponent("Tests/SnoozeFusePluginTests/Fixtures/uinput_device.c").path

/// Why no virtual input device can be made here, or nil when `/dev/uinput` can be used.
let uinputUnavailable: String? = {
    var status = stat()
    guard stat("/dev/uinput", &status) == 0 else {
        return "/dev/uinput does not exist on this machine (the uinput kernel module is not loaded, or this "
            + "container was not given the device), so no virtual force-feedback device can be made for rumble"
    }
    guard access("/dev/uinput", R_OK | W_OK) == 0 else {
        return "/dev/uinput exists but this user cannot open it for reading and writing "
            + "(\(String(cString: strerror(errno)))), so no virtual force-feedback device can be made for rumble"
    }
    return nil
}()

/// `FF_RUMBLE` of linux/input.h (the effect type the plugin uploads).
let ffRumble = 0x50

/// The rumble plugin (`Plugins/rumble`), built at test time, against the kernel's force-feedback
/// path: a virtual device made through /dev/uinput by a small C helper (Fixtures/uinput_device.c)
/// that answers the kernel's upload and erase requests and logs every request and EV_FF event.
@Suite("Built-in plugin: rumble")
struct RumblePluginTests {
    let snoozefuse = BuiltProducts.executable("snoozefuse").path

    @Test(.disabled(if: uinputUnavailable != nil, Comment(rawValue: uinputUnavailable ?? "")))
    func uploadsPlaysStopsAndErasesOnAVirtualDevice() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = try folder.buildBuiltIn("rumble")
        let device = try VirtualInputDevice(kind: "rumble", folder: folder)
        defer { device.stop() }

        // Through the host, in this process: two pulses, a cancel, then destroy.
        let emitter = try PulseEmitter(plugin: try PluginLoader.load(path: path, logger: LogRecorder().logger),
                                       config: "device=\(device.path)")
        emitter.emit(intensity: 1, duration: .milliseconds(120))
        #expect(emitter.waitUntilIdle(within: .seconds(20)))
        emitter.emit(intensity: 0.5, duration: .milliseconds(90))
        #expect(emitter.waitUntilIdle(within: .seconds(20)))
        emitter.cancel()
        #expect(emitter.waitUntilIdle(within: .seconds(20)))
        #expect(emitter.reportedErrors.isEmpty, "\(emitter.reportedErrors)")
        emitter.close() // destroy runs on the emitter's thread: wait for the erase it asks for
        let records = try device.waitForRecords { $0.contains { $0.kind == "erase" } }

        let uploads = records.filter { $0.kind == "upload" }
        try #require(uploads.count == 2, "\(records)")
        let id = try #require(uploads[0]["id"])
        #expect(id >= 0 && id < 4, "the kernel assigns one of the device's 4 effect slots")
        #expect(uploads.allSatisfy { $0["id"] == id && $0["type"] == ffRumble && $0["delay"] == 0 }, "\(uploads)")
        // intensity x 65535 (strong) and x 32767 (weak), rounded half up; length = the pulse's.
        #expect(uploads.map { [$0["strong"], $0["weak"], $0["length"]] } == [[65535, 32767, 120], [32768, 16384, 90]])
        // The second pulse updates the first effect (old is the effect uploaded before, not a new one).
        #expect(uploads.map { $0["old_type"] } == [0, ffRumble])
        #expect(records.filter { $0.kind == "play" || $0.kind == "erase" }.allSatisfy { $0["id"] == id }, "\(records)")
        // Play after each upload, then stop (cancel, destroy and the kernel's own stop before an
        // erase each write value 0), then the erase: nothing is left on the device.
        #expect(Self.steps(records) == ["upload", "play 1", "upload", "play 1", "play 0", "erase"], "\(records)")

        // Through `snoozefuse plugins check` (a separate process): its two pulses (1.0 for 60 ms,
        // 0.7 for 40 ms) reach the device the same way, and the effect is erased when it ends.
        let before = records.count
        // The built one (its reserved id is refused anywhere but where snoozefuse installs it).
        let check = try runMergingOutput(snoozefuse, ["plugins", "check", builtPlugin("rumble"), "--config", "device=\(device.path)"])
        #expect(check.status == 0, "\(check.output)")
        let checked = Array(try device.waitForRecords { $0.dropFirst(before).contains { $0.kind == "erase" } }.dropFirst(before))
        let checkUploads = checked.filter { $0.kind == "upload" }
        try #require(checkUploads.count == 2, "\(checked)")
        #expect(checkUploads.map { [$0["strong"], $0["weak"], $0["length"]] }[0] == [65535, 32767, 60])
        let strong = try #require(checkUploads[1]["strong"]), weak = try #require(checkUploads[1]["weak"])
        #expect(abs(strong - 45875) <= 1 && abs(weak - 22937) <= 1, "0.7 x 65535 and 0.7 x 32767: \(checkUploads[1])")
        #expect(checkUploads[1]["length"] == 40)
        #expect(Self.steps(checked) == ["upload", "play 1", "upload", "play 1", "play 0", "erase"], "\(checked)")
    }

    @Test(.disabled(if: uinputUnavailable != nil, Comment(rawValue: uinputUnavailable ?? "")))
    func refusesAVirtualDeviceWithoutForceFeedbackNamingIt() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let keys = try VirtualInputDevice(kind: "keys", folder: folder)
        defer { keys.stop() }
        #expect(try Self.refusal(config: "device=\(keys.path)", in: folder) == .callFailed(
            call: "create_pulse_emitter", status: 2,
            message: "device=\(keys.path) has no FF_RUMBLE force feedback; choose another /dev/input/eventN"))
    }

    /// The helper of the two tests above is built and run here too, so it cannot rot where they are skipped.
    @Test func uinputHelperBuildsAndChecksItsArguments() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let helper = try folder.buildProgram("uinput_device", source: uinputHelperSource)
        let result = try runMergingOutput(helper, ["vibrate", folder.path + "/log", folder.path])
        #expect(result.status == 64)
        #expect(result.output.contains("usage: uinput_device rumble|keys LOG NODE_FOLDER"))
    }

    @Test func reportsAMissingDeviceByName() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let missing = folder.path + "/no-such-event"
        #expect(try Self.refusal(config: "device=\(missing)", in: folder) == .callFailed(
            call: "create_pulse_emitter", status: 3,
            message: "cannot open device=\(missing): No such file or directory (it must exist and be readable and writable by this user)"))
    }

    @Test(arguments: ["regular file", "/dev/null"])
    func refusesAFileThatIsNotAnInputDevice(_ kind: String) throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let path = kind == "/dev/null" ? kind : folder.path + "/not-an-input-device"
        if kind != "/dev/null" { try "".write(toFile: path, atomically: false, encoding: .utf8) }
        #expect(try Self.refusal(config: "device=\(path)", in: folder) == .callFailed(
            call: "create_pulse_emitter", status: 1,
            message: "device=\(path) is not an input event device (EVIOCGBIT: Inappropriate ioctl for device); choose a /dev/input/eventN"))
    }

    @Test func rejectsAnUnknownKeyNamingTheAcceptedOnes() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        #expect(try Self.refusal(config: "devcie=/dev/input/event0", in: folder) == .callFailed(
            call: "create_pulse_emitter", status: 1, message: "unknown key \"devcie\" (rumble accepts device)"))
    }

    /// Why the rumble plugin (built into `folder`) refuses to create an emitter with `config`,
    /// or nil when it creates one.
    static func refusal(config: String, in folder: PluginFolder) throws -> PluginError.Reason? {
        let plugin = try PluginLoader.load(path: try folder.buildBuiltIn("rumble"), logger: LogRecorder().logger)
        do {
            try PulseEmitter(plugin: plugin, config: config).close()
            return nil
        } catch {
            return error.reason
        }
    }

    /// The records as steps: `upload`, `play V`, `erase`, with repeats of one step merged.
    static func steps(_ records: [VirtualInputDevice.Record]) -> [String] {
        var steps: [String] = []
        for record in records {
            let step = record.kind == "play" ? "play \(record["value"] ?? -1)" : record.kind
            if steps.last != step { steps.append(step) }
        }
        return steps
    }
}

/// A virtual input device made through /dev/uinput by the helper (Fixtures/uinput_device.c),
/// running in a process of its own until `stop`.
final class VirtualInputDevice {
    /// One line of the helper's log: `upload id=0 type=80 …` as kind `upload` and its numbers.
    struct Record: CustomStringConvertible {
        var kind: String
        var fields: [String: Int]
        subscript(key: String) -> Int? { fields[key] }
        var description: String { "\(kind) \(fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process: Process
    let input: Pipe
    let log: String
    /// The device's event node (`/dev/input/eventN`, or one the helper made in the test's folder).
    let path: String

    init(kind: String, folder: PluginFolder) throws {
        let helper = try folder.buildProgram("uinput_device", source: uinputHelperSource)
        log = folder.path + "/uinput-\(kind).log"
        let errors = folder.path + "/uinput-\(kind).err"
        guard FileManager.default.createFile(atPath: errors, contents: nil),
              let errorHandle = FileHandle(forWritingAtPath: errors) else { throw CocoaError(.fileWriteUnknown) }
        process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = [kind, log, folder.path]
        input = Pipe() // the helper runs until this pipe is closed
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errorHandle
        try process.run()
        try errorHandle.close()
        let deadline = Date(timeIntervalSinceNow: 20)
        var ready: String?
        while ready == nil {
            ready = Self.lines(of: log).first { $0.hasPrefix("ready ") }.map { String($0.dropFirst(6)) }
            if ready == nil && (!process.isRunning || Date() > deadline) {
                try? input.fileHandleForWriting.close()
                process.waitUntilExit()
                let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw Failure(description: "the uinput helper made no \(kind) device (exit \(process.terminationStatus)): \(said)")
            }
            usleep(10_000)
        }
        path = ready ?? ""
    }

    static func lines(of log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The log's records after the `ready` line.
    var records: [Record] {
        Self.lines(of: log).filter { !$0.hasPrefix("ready ") }.map { line in
            let words = line.split(separator: " ")
            var fields: [String: Int] = [:]
            for word in words.dropFirst() {
                let pair = word.split(separator: "=", maxSplits: 1)
                if pair.count == 2, let value = Int(pair[1]) { fields[String(pair[0])] = value }
            }
            return Record(kind: words.first.map(String.init) ?? "", fields: fields)
        }
    }

    /// Waits (up to 20 s) until `done` holds for the records; returns them.
    func waitForRecords(until done: ([Record]) -> Bool) throws -> [Record] {
        let deadline = Date(timeIntervalSinceNow: 20)
        while true {
            let now = records
            if done(now) { return now }
            guard Date() < deadline, process.isRunning else {
                throw Failure(description: "the device never saw what was expected; it saw: \(now)")
            }
            usleep(10_000)
        }
    }

    /// A `keys` device: presses KEY_A (`down`) or lets it go, and waits until the helper has
    /// written it to the kernel.
    func key(down: Bool) throws {
        let before = records.count
        input.fileHandleForWriting.write(Data((down ? "d" : "u").utf8))
        _ = try waitForRecords { $0.count > before }
    }

    /// Closes the helper's input: it destroys the device and exits.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

import SnoozeFuseSystem
import CALSA
import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport
import Testing

/// Collects the audio thread's events (delivered on the audio thread).
final class EventLog: Sendable {
    private let events = Locked<[PCMPlaybackThread.Event]>([])

    func append(_ event: PCMPlaybackThread.Event) {
        events.withLock { $0.append(event) }
    }

    var all: [PCMPlaybackThread.Event] { events.withLock { $0 } }
}

/// Serialized: some tests redirect the process's stderr while they run.
@Suite("ALSA output", .serialized)
struct ALSAOutputTests {
    @Test("alsa-lib reports a 1.x version")
    func alsaVersion() {
        #expect(AudioLibraryVersions.alsa.hasPrefix("1."))
    }

    @Test("the null PCM opens, negotiates float32 at the requested rate and accepts writes")
    func nullPCMAcceptsWrites() throws {
        let output = try PCMOutput(device: "null", configuration: PCMConfiguration(sampleRate: 44_100, channels: 2))
        #expect(output.device == "null")
        #expect(output.format.sampleFormat == .float32LE)
        #expect(output.format.sampleRate == 44_100)
        #expect(output.format.channels == 2)
        #expect(output.format.periodFrames > 0)
        #expect(output.format.bufferFrames >= output.format.periodFrames)

        let samples = [Float](repeating: 0.25, count: 44_100 * 2)
        try samples.withUnsafeBufferPointer { try output.write($0) }
        try output.drain()
        try samples.withUnsafeBufferPointer { try output.write($0) }
        try output.drop()
        #expect(try output.availableFrames() >= 0)
        #expect(output.isOpen)
        output.close()
        #expect(!output.isOpen)

        // Writing to a closed output is a typed error, not a crash.
        let error = #expect(throws: ALSAError.self) {
            try samples.withUnsafeBufferPointer { try output.write($0) }
        }
        #expect(error?.device == "null")
        #expect(error?.operation == .write)
    }

    @Test("the null PCM negotiates S16 when only S16 is asked for; float input is converted")
    func nullPCMInt16() throws {
        let output = try PCMOutput(device: "null", configuration: PCMConfiguration(channels: 1, formats: [.int16LE]))
        #expect(output.format.sampleFormat == .int16LE)
        #expect(output.format.channels == 1)
        let floats = [Float](repeating: -0.5, count: 10_000)
        try floats.withUnsafeBufferPointer { try output.write($0) }
        let ints = [Int16](repeating: 1_000, count: 10_000)
        try ints.withUnsafeBufferPointer { try output.write($0) }
        try output.drain()
    }

    @Test("the configured buffer is about 500 ms in 2 periods")
    func bufferSizing() throws {
        let output = try PCMOutput(device: "null")
        let format = output.format
        let bufferMilliseconds = format.bufferFrames * 1000 / format.sampleRate
        #expect((400 ... 600).contains(bufferMilliseconds), "buffer \(format.bufferFrames) frames")
        #expect(format.bufferFrames / format.periodFrames == 2, "\(format)")
    }

    @Test("a 1 s 440 Hz sine written as S16 through the audio thread is recorded exactly by the file PCM",
          arguments: [false, true])
    func filePCMRecordsInt16Exactly(rendersInt16: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("out.wav")
        let device = "file:FILE=\(file.path),FORMAT=wav"

        let output = try PCMOutput(device: device,
                                   configuration: PCMConfiguration(sampleRate: 48_000, channels: 2, formats: [.int16LE]))
        #expect(output.format.sampleFormat == .int16LE)
        #expect(output.format.sampleRate == 48_000)
        #expect(output.format.channels == 2)

        let log = EventLog()
        // Float samples converted by the output, or Int16 samples written as they are.
        let player = rendersInt16
            ? PCMPlaybackThread(output: output, source: Int16Rendering(SineSource(frames: 48_000)),
                                onEvent: { log.append($0) })
            : PCMPlaybackThread(output: output, source: SineSource(frames: 48_000), onEvent: { log.append($0) })
        try player.start()
        #expect(await player.outcome() == .finished)
        #expect(log.all.first.map { if case .firstWrite = $0 { true } else { false } } == true)
        #expect(log.all.last == .ended(.finished))

        let wav = try ALSATestSupport.readWAV(file)
        #expect(wav.formatTag == 1)
        #expect(wav.channels == 2)
        #expect(wav.sampleRate == 48_000)
        #expect(wav.bitsPerSample == 16)
        #expect(wav.data.count == 48_000 * 2 * 2)
        let recorded = wav.data.withUnsafeBytes { raw in
            (0 ..< raw.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
        let expected = SineSource.expectedInt16(frames: 48_000, channels: 2, sampleRate: 48_000)
        #expect(recorded.count == expected.count)
        let firstMismatch = zip(recorded, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstMismatch == nil, "first differing sample: \(String(describing: firstMismatch))")
        #expect(recorded.max() == 16_384) // the sine's peak (0.5 × 32767, rounded) was reached
    }

    @Test("float32 samples written through the audio thread are recorded bit for bit by the file PCM",
          arguments: ["file:FILE=%@,FORMAT=wav", "file:'%@',wav"])
    func filePCMRecordsFloatExactly(_ pattern: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("float.wav")
        let output = try PCMOutput(device: pattern.replacingOccurrences(of: "%@", with: file.path),
                                   configuration: PCMConfiguration(sampleRate: 44_100, channels: 1))
        #expect(output.format.sampleFormat == .float32LE)
        let player = PCMPlaybackThread(output: output, source: SineSource(frames: 44_100))
        try player.start()
        #expect(await player.outcome() == .finished)

        let wav = try ALSATestSupport.readWAV(file)
        // alsa-lib's file PCM writes format tag 1 (integer PCM) even for float data; the output
        // labels it IEEE float (3) when it closes, so the file decodes as what it holds.
        #expect(wav.formatTag == 3)
        #expect(wav.channels == 1)
        #expect(wav.sampleRate == 44_100)
        #expect(wav.bitsPerSample == 32)
        #expect(wav.data.count == 44_100 * 4)
        let recorded = rawFloats(in: wav.data)
        let expected = SineSource.expectedInt16(frames: 44_100, channels: 1, sampleRate: 44_100).map { Float($0) / 32768 }
        #expect(recorded == expected)
    }

    @Test("stopping an endless stream drops it and reports .stopped; the thread closes the PCM")
    func stopEndlessStream() async throws {
        let log = EventLog()
        let player = PCMPlaybackThread(output: try PCMOutput(device: "null"), source: EndlessSilence(),
                                       onEvent: { log.append($0) })
        try player.start()
        try player.start() // a second start does nothing
        #expect(await player.stop() == .stopped)
        #expect(await player.outcome() == .stopped)
        #expect(log.all.last == .ended(.stopped))
        #expect(log.all.filter { if case .ended = $0 { true } else { false } }.count == 1)
    }

    @Test("stopping before start releases the PCM and never starts the thread")
    func stopBeforeStart() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("never.wav")
        let log = EventLog()
        let player = PCMPlaybackThread(output: try PCMOutput(device: "file:FILE=\(file.path),FORMAT=wav"),
                                       source: SineSource(frames: 48_000), onEvent: { log.append($0) })
        player.requestStop()
        try player.start()
        #expect(await player.outcome() == .stopped)
        #expect(log.all == [.ended(.stopped)])
        // The PCM was closed: the file holds a header and no samples.
        #expect(try ALSATestSupport.readWAV(file).data.isEmpty)
    }

    @Test("`default` fails to open with a typed error naming it, and alsa-lib prints nothing",
          .enabled(if: ALSATestSupport.machineHasNoSoundOutput, "needs a machine with no sound card and no sound server"))
    func defaultFailsWithoutSoundCard() throws {
        let (error, stderrText) = try ALSATestSupport.capturingStderr { () -> ALSAError? in
            ALSATestSupport.writeToStderr("stderr-capture-marker\n") // proves the capture sees stderr
            return #expect(throws: ALSAError.self) { try PCMOutput(device: "default") }
        }
        #expect(stderrText == "stderr-capture-marker\n")
        let failure = try #require(error)
        #expect(failure.device == "default")
        #expect(failure.operation == .open)
        #expect(failure.code == .noSuchEntry)
        #expect(failure.code.returnValue == -ENOENT)
        #expect(failure.kind == .noSuchDevice)
        #expect(failure.messages.contains { $0.text.contains("cannot find card") })
        #expect(failure.description.contains("'default'"))
        #expect(failure.description.contains("no sound card or sound server"))
        #expect(failure.description.contains("file:FILE="))
    }

    @Test("hw:0 fails to open with a typed error naming it, and alsa-lib prints nothing",
          .enabled(if: ALSATestSupport.machineHasNoSoundOutput, "needs a machine with no sound card"))
    func hw0FailsWithoutCard() throws {
        try expectOpenFailsForMissingCard("hw:0")
    }

    @Test("a card number past alsa-lib's limit fails to open with a typed error naming it (EINVAL)")
    func hw99Fails() throws {
        try expectOpenFailsForMissingCard("hw:99", code: .invalidArgument)
    }

    @Test("a card name that does not exist fails to open with a typed error naming it (ENODEV)")
    func hwCardNameFails() throws {
        try expectOpenFailsForMissingCard("hw:CARD=snoozefuse_no_such_card", code: .noDevice)
    }

    private func expectOpenFailsForMissingCard(_ device: String, code: ALSAErrno = .noSuchEntry) throws {
        let (error, stderrText) = try ALSATestSupport.capturingStderr { () -> ALSAError? in
            ALSATestSupport.writeToStderr("marker\n")
            return #expect(throws: ALSAError.self) { try PCMOutput(device: device) }
        }
        #expect(stderrText == "marker\n")
        let failure = try #require(error)
        #expect(failure.device == device)
        #expect(failure.operation == .open)
        #expect(failure.code == code)
        #expect(failure.kind == .noSuchDevice)
        #expect(!failure.messages.isEmpty)
        #expect(failure.description.contains("'\(device)'"))
        #expect(failure.description.contains("no sound card"))
    }

    @Test("an unknown PCM name fails with the name in the error and alsa-lib's 'Unknown PCM' message")
    func unknownNameFails() throws {
        let (error, stderrText) = try ALSATestSupport.capturingStderr { () -> ALSAError? in
            ALSATestSupport.writeToStderr("marker\n")
            return #expect(throws: ALSAError.self) { try PCMOutput(device: "nonexistent") }
        }
        #expect(stderrText == "marker\n")
        let failure = try #require(error)
        #expect(failure.device == "nonexistent")
        #expect(failure.kind == .noSuchDevice)
        #expect(failure.messages.map(\.text).contains("Unknown PCM nonexistent"))
        #expect(failure.description.contains("'nonexistent'"))
        #expect(failure.description.contains("snoozefuse devices"))
    }

    @Test("alsa-lib's messages are attributed to the thread that made the call")
    func messagesStayWithTheirThread() async throws {
        let names = (0 ..< 16).map { "nonexistent-\($0)" }
        let errors = await withTaskGroup(of: (String, ALSAError?).self) { group in
            for name in names {
                group.addTask {
                    do {
                        _ = try PCMOutput(device: name)
                        return (name, nil)
                    } catch {
                        return (name, error as? ALSAError)
                    }
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for name in names {
            let error = try #require(errors[name] ?? nil, "\(name) opened")
            #expect(error.messages.map(\.text) == ["Unknown PCM \(name)"])
        }
    }

    @Test("the device list has `null`, which opens for playback")
    func deviceListing() throws {
        // Probing plugins whose own libraries print (libjack) would clutter the test output.
        let (devices, _) = try ALSATestSupport.capturingStderr { try ALSADeviceList.pcmDevices() }
        let null = try #require(devices.first { $0.name == "null" })
        #expect(null.probe == .opens)
        #expect(null.description?.isEmpty == false)
        for device in devices where device.canPlay {
            #expect(device.probe != .notProbed, "\(device.name) was not probed")
            if case .fails(let error) = device.probe {
                #expect(error.device == device.name)
                #expect(error.operation == .open)
                #expect(error.messages.allSatisfy { $0.text.last?.isWhitespace != true }, "\(error.messages)")
            }
        }
        let unprobed = try ALSADeviceList.pcmDevices(probe: false)
        #expect(unprobed.map(\.name) == devices.map(\.name))
        #expect(unprobed.allSatisfy { $0.probe == .notProbed })
    }
}

@Suite("ALSA errors")
struct ALSAErrorTests {
    @Test("errno values map from alsa-lib's negative returns")
    func errnoMapping() {
        #expect(ALSAErrno(returnValue: -ENOENT) == .noSuchEntry)
        #expect(ALSAErrno(returnValue: Int(-EPIPE)) == .xrun)
        #expect(ALSAErrno.suspended.rawValue == ESTRPIPE)
        #expect(ALSAErrno.noSuchEntry.symbol == "ENOENT")
        #expect(ALSAErrno.noSuchEntry.message == "No such file or directory")
        #expect(ALSAErrno.xrun.description == "Broken pipe (EPIPE)")
    }

    @Test("EIO, ENODEV and EBADFD while streaming mean device lost; at open they do not",
          arguments: [ALSAErrno.ioError, .noDevice, .badState])
    func deviceLost(code: ALSAErrno) {
        let streaming = ALSAError(device: "pulse", operation: .write, code: code)
        #expect(streaming.kind == .deviceLost)
        #expect(streaming.isDeviceLost)
        #expect(streaming.description.contains("'pulse'"))
        #expect(streaming.description.contains("reopen"))
        #expect(!ALSAError(device: "pulse", operation: .open, code: code).isDeviceLost)
    }

    @Test("other errors are classified by code")
    func classification() {
        #expect(ALSAError(device: "hw:0", operation: .open, code: .busy).kind == .busy)
        #expect(ALSAError(device: "pulse", operation: .open, code: .connectionRefused).kind == .noSoundServer)
        #expect(ALSAError(device: "hw:0", operation: .hwParams, code: .invalidArgument).kind == .unsupportedConfiguration)
        #expect(ALSAError(device: "hw:0", operation: .write, code: .xrun).kind == .other)
    }
}

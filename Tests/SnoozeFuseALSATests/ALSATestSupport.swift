import CALSA
import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport

/// Helpers for the ALSA tests: capturing the process's stderr, reading WAV files.
enum ALSATestSupport {
    /// `true` when alsa-lib sees no sound card (`snd_card_next` finds none) and no PulseAudio server
    /// answers: then `default` and `hw:0` cannot open.
    static var machineHasNoSoundOutput: Bool {
        var card: Int32 = -1
        guard snd_card_next(&card) == 0, card < 0 else { return false }
        return !ALSADeviceList.probePlayback("pulse").opens
    }

    struct StderrCaptureError: Error {}

    /// Writes `text` straight to file descriptor 2.
    static func writeToStderr(_ text: String) {
        var text = text
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// Runs `body` with file descriptor 2 redirected to a temporary file; returns what was written
    /// to it. The ALSA suite is serialized, so no other ALSA test writes meanwhile.
    static func capturingStderr<R>(_ body: () throws -> R) throws -> (R, String) {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("stderr.txt").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw StderrCaptureError() }
        fflush(nil)
        let saved = dup(2)
        guard saved >= 0, dup2(fd, 2) >= 0 else {
            close(fd)
            throw StderrCaptureError()
        }
        close(fd)
        let result: Result<R, any Error> = Result { try body() }
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return (try result.get(), text)
    }

    /// Kept so that the assertions read as they did: the shared WAV reader.
    static func readWAV(_ url: URL) throws -> WAVFile {
        try WAVFile(contentsOf: url)
    }
}

// These sources stay in this target: they are SnoozeFuseAudio `PCMRenderSource`s, which SnoozeFuseTestSupport must not import.

/// A test signal: a sine of `frequency` Hz, `frames` frames long, the same value on every channel,
/// quantised to multiples of 1/32768 so that S16 output is exact. Records what it rendered.
struct SineSource: PCMRenderSource {
    let frequency: Double
    let frames: Int
    let amplitude: Double
    private(set) var position = 0

    init(frequency: Double = 440, frames: Int, amplitude: Double = 0.5) {
        self.frequency = frequency
        self.frames = frames
        self.amplitude = amplitude
    }

    /// Sample value at frame `index` for a stream at `sampleRate`, as an S16 integer.
    static func int16Value(frame index: Int, sampleRate: Int, frequency: Double, amplitude: Double) -> Int16 {
        Int16((sin(2 * Double.pi * frequency * Double(index) / Double(sampleRate)) * amplitude * 32767).rounded())
    }

    /// The whole signal, interleaved, as S16 values.
    static func expectedInt16(frames: Int, channels: Int, sampleRate: Int, frequency: Double = 440,
                              amplitude: Double = 0.5) -> [Int16] {
        var samples: [Int16] = []
        samples.reserveCapacity(frames * channels)
        for frame in 0 ..< frames {
            let value = int16Value(frame: frame, sampleRate: sampleRate, frequency: frequency, amplitude: amplitude)
            for _ in 0 ..< channels { samples.append(value) }
        }
        return samples
    }

    mutating func render(into buffer: UnsafeMutableBufferPointer<Float>, format: PCMStreamFormat) -> Int {
        let count = min(buffer.count / format.channels, frames - position)
        for frame in 0 ..< count {
            let value = Float(Self.int16Value(frame: position + frame, sampleRate: format.sampleRate,
                                              frequency: frequency, amplitude: amplitude)) / 32768
            for channel in 0 ..< format.channels {
                buffer[frame * format.channels + channel] = value
            }
        }
        position += count
        return count
    }
}

/// Renders a float source whose samples are multiples of 1/32768 (like `SineSource`) as exact S16
/// values, for the audio thread's `Int16` path.
struct Int16Rendering<Source: PCMRenderSource>: PCMRenderSource where Source.Sample == Float {
    var source: Source

    init(_ source: Source) {
        self.source = source
    }

    mutating func render(into buffer: UnsafeMutableBufferPointer<Int16>, format: PCMStreamFormat) -> Int {
        var floats = [Float](repeating: 0, count: buffer.count)
        let frames = floats.withUnsafeMutableBufferPointer { source.render(into: $0, format: format) }
        for index in 0 ..< frames * format.channels {
            buffer[index] = Int16(floats[index] * 32768)
        }
        return frames
    }
}

/// A source that never ends (silence), for stopping tests.
struct EndlessSilence: PCMRenderSource {
    func render(into buffer: UnsafeMutableBufferPointer<Float>, format: PCMStreamFormat) -> Int {
        for index in buffer.indices { buffer[index] = 0 }
        return buffer.count / format.channels
    }
}

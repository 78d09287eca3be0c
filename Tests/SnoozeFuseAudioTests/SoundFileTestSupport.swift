import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport

/// Little-endian 32-bit float samples from a raw file.
func rawFloats(atPath path: String) throws -> [Float] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.withUnsafeBytes { bytes in
        stride(from: 0, to: bytes.count - 3, by: 4).map { offset in
            Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
    }
}

/// A reference decode of `path` to interleaved floats, by sox.
func soxReference(_ path: String, in folder: TemporaryFolder) throws -> [Float] {
    let output = folder.path(URL(fileURLWithPath: path).lastPathComponent + ".sox.f32")
    try runTool("sox", [path, "-t", "f32", "-e", "floating-point", output])
    return try rawFloats(atPath: output)
}

/// A reference decode of `path` to interleaved floats, by ffmpeg.
func ffmpegReference(_ path: String, in folder: TemporaryFolder) throws -> [Float] {
    let output = folder.path(URL(fileURLWithPath: path).lastPathComponent + ".ffmpeg.f32")
    try runTool("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path, "-f", "f32le", "-c:a", "pcm_f32le", output])
    return try rawFloats(atPath: output)
}

/// Reads every frame, a small buffer at a time (the way playback streams).
func readAll(_ file: inout SoundFile, framesPerRead: Int = 1000) throws -> [Float] {
    var samples: [Float] = []
    var buffer = [Float](repeating: 0, count: framesPerRead * file.info.channels)
    while true {
        let frames = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
        if frames == 0 { break }
        samples.append(contentsOf: buffer[0..<(frames * file.info.channels)])
    }
    return samples
}

func readAll(atPath path: String) throws -> (info: SoundFileInfo, samples: [Float]) {
    var file = try SoundFile(readingAtPath: path)
    let samples = try readAll(&file)
    return (file.info, samples)
}

/// `nil` when the two are identical, else where they first differ: a short text for a failing
/// expectation instead of tens of thousands of printed samples.
func firstDifference(_ a: some Collection<Float>, _ b: some Collection<Float>) -> String? {
    guard a.count == b.count else { return "\(a.count) samples against \(b.count)" }
    for (index, (x, y)) in zip(a, b).enumerated() where x != y {
        return "sample \(index): \(x) against \(y)"
    }
    return nil
}

func maxAbsoluteDifference(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(0) { Swift.max($0, abs($1.0 - $1.1)) }
}

func rmsDifference(_ a: [Float], _ b: [Float]) -> Double {
    let count = min(a.count, b.count)
    guard count > 0 else { return .infinity }
    let sum = zip(a, b).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
    return (sum / Double(count)).squareRoot()
}

func rms(_ a: [Float]) -> Double {
    guard !a.isEmpty else { return 0 }
    return (a.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(a.count)).squareRoot()
}

/// Makes the two-channel source everything else is converted from: a chirp on the left, a steady
/// tone on the right, 0.5 s at 44.1 kHz, 16-bit.
func makeSourceWAV(in folder: TemporaryFolder) throws -> String {
    let path = folder.path("source.wav")
    try runTool("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path,
                        "synth", "0.5", "sine", "300-3000", "sine", "440", "gain", "-3"])
    return path
}

import Foundation
import SnoozeFuseAudio
import SnoozeFuseTestSupport

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

// The readers stay in this target: they read through SnoozeFuseAudio's SoundFile.

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

/// Makes the two-channel source everything else is converted from: a chirp on the left, a steady
/// tone on the right, 0.5 s at 44.1 kHz, 16-bit.
func makeSourceWAV(in folder: TemporaryFolder) throws -> String {
    let path = folder.path("source.wav")
    try runTool("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path,
                        "synth", "0.5", "sine", "300-3000", "sine", "440", "gain", "-3"])
    return path
}

public import Foundation

// Comparing sample streams (RMS, differences) and reading raw sample files: headerless
// little-endian float32 or S16 (what sox, ffmpeg and pacat write) and RIFF/WAVE files.

/// The root mean square of `samples`; 0 for none.
public func rms<Samples: Collection>(_ samples: Samples) -> Double where Samples.Element == Float {
    guard !samples.isEmpty else { return 0 }
    let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    return (sum / Double(samples.count)).squareRoot()
}

/// The root mean square of the difference of `a` and `b` over the frames both have; infinite when
/// either is empty.
public func rmsDifference(_ a: [Float], _ b: [Float]) -> Double {
    let count = min(a.count, b.count)
    guard count > 0 else { return .infinity }
    let sum = zip(a, b).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
    return (sum / Double(count)).squareRoot()
}

/// The largest absolute difference between `a` and `b`, sample by sample.
public func maxAbsoluteDifference(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(0) { Swift.max($0, abs($1.0 - $1.1)) }
}

/// `nil` when the two are identical, else where they first differ: a short text for a failing
/// expectation instead of tens of thousands of printed samples.
public func firstDifference<A: Collection, B: Collection>(_ a: A, _ b: B) -> String?
where A.Element == B.Element, A.Element: Equatable {
    guard a.count == b.count else { return "\(a.count) samples against \(b.count)" }
    for (index, (x, y)) in zip(a, b).enumerated() where x != y {
        return "sample \(index): \(x) against \(y)"
    }
    return nil
}

/// Little-endian 32-bit float samples from a raw file (sox's `-t f32`, ffmpeg's `-f f32le`).
public func rawFloats(atPath path: String) throws -> [Float] {
    rawFloats(in: try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Little-endian 32-bit float samples from raw bytes (a trailing partial sample is ignored).
public func rawFloats(in data: Data) -> [Float] {
    data.withUnsafeBytes { bytes in
        (0 ..< bytes.count / 4).map { index in
            Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
        }
    }
}

/// Little-endian signed 16-bit samples from raw bytes, as floats (the value / 32768, exact).
public func rawS16AsFloats(in data: Data) -> [Float] {
    data.withUnsafeBytes { bytes in
        (0 ..< bytes.count / 2).map { index in
            Float(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))) / 32768
        }
    }
}

/// The parts of a RIFF/WAVE file that tests check, found by walking its chunks.
public struct WAVFile: Sendable {
    /// The `fmt ` chunk's format tag (1: integer PCM, 3: IEEE float; alsa-lib's file PCM writes 1
    /// for float too, which `PCMOutput` puts right when it closes).
    public var formatTag: UInt16
    public var channels: Int
    public var sampleRate: Int
    public var bitsPerSample: Int
    /// The `data` chunk's bytes. When its size was never written (0 or 0xFFFF_FFFF, as a writer
    /// that was stopped leaves it) or runs past the end of the file, everything after its header.
    public var data: Data

    public struct ParseError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads the file at `url`; throws `ParseError` when it is not RIFF/WAVE or has no `data` chunk
    /// after a `fmt ` chunk.
    public init(contentsOf url: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: url))
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func tag(_ at: Int) -> String { String(decoding: bytes[at ..< at + 4], as: UTF8.self) }
        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw ParseError(description: "not a RIFF/WAVE file (\(bytes.count) bytes)")
        }
        var offset = 12
        var format: (tag: UInt16, channels: Int, rate: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "data" {
                guard let format else { throw ParseError(description: "data before fmt") }
                let unpatched = size == 0 || size == 0xFFFF_FFFF
                let end = unpatched ? bytes.count : min(bytes.count, body + size)
                (formatTag, channels, sampleRate, bitsPerSample) = format
                data = Data(bytes[body ..< end])
                return
            }
            guard body + size <= bytes.count else {
                throw ParseError(description: "chunk \(id) at \(offset) overruns the file")
            }
            if id == "fmt ", size >= 16 {
                format = (UInt16(u16(body)), u16(body + 2), u32(body + 4), u16(body + 14))
            }
            offset = body + size + (size & 1)
        }
        throw ParseError(description: "no data chunk")
    }
}

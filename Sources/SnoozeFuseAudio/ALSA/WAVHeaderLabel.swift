#if canImport(Glibc)
import Glibc
#endif

/// The format tag of a WAV file that ALSA's `file` PCM wrote. alsa-lib writes the tag of integer
/// PCM (1) whatever the samples are, so a recording of 32-bit floats reads back as noise; this puts
/// the tag of IEEE float (3) in its place. It changes nothing unless the file starts with the
/// canonical header alsa-lib writes (`RIFF`, `WAVE`, `fmt ` of 16 bytes, tag 1, 32 bits).
enum WAVHeaderLabel {
    static func markFloat(atPath path: String) {
        let file = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard file >= 0 else { return }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return }
        var header = [UInt8](repeating: 0, count: 36)
        guard header.withUnsafeMutableBytes({ pread(file, $0.baseAddress, 36, 0) }) == 36 else { return }
        func text(_ offset: Int) -> String { String(decoding: header[offset ..< offset + 4], as: UTF8.self) }
        func number(_ offset: Int, _ size: Int) -> Int {
            (0 ..< size).reduce(0) { $0 | Int(header[offset + $1]) << (8 * $1) }
        }
        guard text(0) == "RIFF", text(8) == "WAVE", text(12) == "fmt ", number(16, 4) == 16,
              number(20, 2) == 1, number(34, 2) == 32 else { return }
        var float: [UInt8] = [3, 0]
        _ = float.withUnsafeMutableBytes { pwrite(file, $0.baseAddress, 2, 20) }
    }
}

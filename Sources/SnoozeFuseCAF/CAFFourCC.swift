/// A Core Audio Format four-character code (`caff`, `desc`, `lpcm`, `ima4` …), stored big-endian
/// as it appears in the file.
public struct CAFFourCC: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `code` must be four ASCII characters.
    public init(_ code: StaticString) {
        precondition(code.utf8CodeUnitCount == 4, "a four-character code has four characters")
        var value: UInt32 = 0
        code.withUTF8Buffer { for byte in $0 { value = value << 8 | UInt32(byte) } }
        rawValue = value
    }

    /// The code as text; bytes outside printable ASCII are shown as `\xNN`.
    public var description: String {
        var text = ""
        for shift in stride(from: 24, through: 0, by: -8) {
            let byte = UInt8(truncatingIfNeeded: rawValue >> UInt32(shift))
            if byte >= 0x20 && byte < 0x7F {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }
}

extension CAFFourCC {
    // File and chunk types.
    public static let caff = CAFFourCC("caff")
    public static let desc = CAFFourCC("desc")
    public static let data = CAFFourCC("data")
    public static let pakt = CAFFourCC("pakt")
    public static let kuki = CAFFourCC("kuki")
    public static let chan = CAFFourCC("chan")
    public static let free = CAFFourCC("free")
    public static let info = CAFFourCC("info")

    // Format IDs.
    public static let linearPCM = CAFFourCC("lpcm")
    public static let appleIMA4 = CAFFourCC("ima4")
    public static let uLaw = CAFFourCC("ulaw")
    public static let aLaw = CAFFourCC("alaw")
    public static let appleLossless = CAFFourCC("alac")
    public static let mpeg4AAC = CAFFourCC("aac ")
    public static let mpegLayer3 = CAFFourCC(".mp3")
    public static let opus = CAFFourCC("opus")
    public static let flac = CAFFourCC("flac")
}

import CSndFile

/// A libsndfile container ("major format"), one of the `SF_FORMAT_*` values under
/// `SF_FORMAT_TYPEMASK`.
public struct SoundFileMajorFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue & Int32(SF_FORMAT_TYPEMASK) }

    init(_ value: Int) { self.init(rawValue: Int32(truncatingIfNeeded: value)) }

    /// `SF_FORMAT_WAV`: Microsoft WAV.
    public static var wav: Self { Self(SF_FORMAT_WAV) }
    /// `SF_FORMAT_WAVEX`: WAV with WAVEFORMATEXTENSIBLE.
    public static var wavex: Self { Self(SF_FORMAT_WAVEX) }
    /// `SF_FORMAT_AIFF`: Apple/SGI AIFF and AIFF-C.
    public static var aiff: Self { Self(SF_FORMAT_AIFF) }
    /// `SF_FORMAT_CAF`: Apple Core Audio Format.
    public static var caf: Self { Self(SF_FORMAT_CAF) }
    /// `SF_FORMAT_FLAC`: FLAC.
    public static var flac: Self { Self(SF_FORMAT_FLAC) }
    /// `SF_FORMAT_OGG`: the Ogg container (Vorbis or Opus).
    public static var ogg: Self { Self(SF_FORMAT_OGG) }
    /// `SF_FORMAT_MPEG`: an MPEG-1/2 audio stream (MP3).
    public static var mpeg: Self { Self(SF_FORMAT_MPEG) }
    /// `SF_FORMAT_AU`: Sun/NeXT AU.
    public static var au: Self { Self(SF_FORMAT_AU) }
    /// `SF_FORMAT_RAW`: headerless data.
    public static var raw: Self { Self(SF_FORMAT_RAW) }
    /// `SF_FORMAT_W64`: Sonic Foundry Wave64.
    public static var w64: Self { Self(SF_FORMAT_W64) }
    /// `SF_FORMAT_RF64`: RF64 WAV.
    public static var rf64: Self { Self(SF_FORMAT_RF64) }

    /// libsndfile's name for the container, e.g. `AIFF (Apple/SGI)`.
    public var name: String { SoundFileFormatNames.name(of: rawValue) ?? "format 0x\(String(rawValue, radix: 16))" }

    public var description: String { name }
}

/// A libsndfile encoding ("subtype"), one of the `SF_FORMAT_*` values under `SF_FORMAT_SUBMASK`.
public struct SoundFileSubtype: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue & Int32(SF_FORMAT_SUBMASK) }

    init(_ value: Int) { self.init(rawValue: Int32(truncatingIfNeeded: value)) }

    /// `SF_FORMAT_PCM_S8`: signed 8-bit PCM.
    public static var pcmS8: Self { Self(SF_FORMAT_PCM_S8) }
    /// `SF_FORMAT_PCM_U8`: unsigned 8-bit PCM (WAV and RAW only).
    public static var pcmU8: Self { Self(SF_FORMAT_PCM_U8) }
    /// `SF_FORMAT_PCM_16`: signed 16-bit PCM.
    public static var pcm16: Self { Self(SF_FORMAT_PCM_16) }
    /// `SF_FORMAT_PCM_24`: signed 24-bit PCM.
    public static var pcm24: Self { Self(SF_FORMAT_PCM_24) }
    /// `SF_FORMAT_PCM_32`: signed 32-bit PCM.
    public static var pcm32: Self { Self(SF_FORMAT_PCM_32) }
    /// `SF_FORMAT_FLOAT`: 32-bit IEEE float.
    public static var float: Self { Self(SF_FORMAT_FLOAT) }
    /// `SF_FORMAT_DOUBLE`: 64-bit IEEE float.
    public static var double: Self { Self(SF_FORMAT_DOUBLE) }
    /// `SF_FORMAT_ULAW`: µ-law.
    public static var ulaw: Self { Self(SF_FORMAT_ULAW) }
    /// `SF_FORMAT_ALAW`: a-law.
    public static var alaw: Self { Self(SF_FORMAT_ALAW) }
    /// `SF_FORMAT_IMA_ADPCM`: IMA ADPCM (as in WAV and AIFF-C; not CAF's `ima4`).
    public static var imaADPCM: Self { Self(SF_FORMAT_IMA_ADPCM) }
    /// `SF_FORMAT_MS_ADPCM`: Microsoft ADPCM.
    public static var msADPCM: Self { Self(SF_FORMAT_MS_ADPCM) }
    /// `SF_FORMAT_VORBIS`: Xiph Vorbis.
    public static var vorbis: Self { Self(SF_FORMAT_VORBIS) }
    /// `SF_FORMAT_OPUS`: Xiph Opus.
    public static var opus: Self { Self(SF_FORMAT_OPUS) }
    /// `SF_FORMAT_ALAC_16`: Apple Lossless, 16-bit.
    public static var alac16: Self { Self(SF_FORMAT_ALAC_16) }
    /// `SF_FORMAT_ALAC_20`: Apple Lossless, 20-bit.
    public static var alac20: Self { Self(SF_FORMAT_ALAC_20) }
    /// `SF_FORMAT_ALAC_24`: Apple Lossless, 24-bit.
    public static var alac24: Self { Self(SF_FORMAT_ALAC_24) }
    /// `SF_FORMAT_ALAC_32`: Apple Lossless, 32-bit.
    public static var alac32: Self { Self(SF_FORMAT_ALAC_32) }
    /// `SF_FORMAT_MPEG_LAYER_I`: MPEG-1 Audio Layer I.
    public static var mpegLayerI: Self { Self(SF_FORMAT_MPEG_LAYER_I) }
    /// `SF_FORMAT_MPEG_LAYER_II`: MPEG-1 Audio Layer II.
    public static var mpegLayerII: Self { Self(SF_FORMAT_MPEG_LAYER_II) }
    /// `SF_FORMAT_MPEG_LAYER_III`: MPEG Audio Layer III (MP3).
    public static var mpegLayerIII: Self { Self(SF_FORMAT_MPEG_LAYER_III) }

    /// libsndfile's name for the encoding, e.g. `Signed 16 bit PCM`.
    public var name: String { SoundFileFormatNames.name(of: rawValue) ?? "encoding 0x\(String(rawValue, radix: 16))" }

    public var description: String { name }
}

/// A complete libsndfile format value: container, encoding and byte order (`SF_INFO.format`).
public struct SoundFileFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// A container with an encoding, in the container's default byte order.
    public init(_ major: SoundFileMajorFormat, _ subtype: SoundFileSubtype) {
        self.rawValue = major.rawValue | subtype.rawValue
    }

    /// The container.
    public var major: SoundFileMajorFormat { SoundFileMajorFormat(rawValue: rawValue) }
    /// The encoding.
    public var subtype: SoundFileSubtype { SoundFileSubtype(rawValue: rawValue) }

    /// For example `CAF (Apple Core Audio File), Signed 16 bit PCM`.
    public var description: String { "\(major.name), \(subtype.name)" }
}

/// What libsndfile says about an open sound file (`SF_INFO`).
public struct SoundFileInfo: Hashable, Sendable, CustomStringConvertible {
    /// Frames (one sample per channel) in the file. For a few sources (pipes, some streams)
    /// libsndfile does not know and reports `Int64.max`.
    public var frames: Int64
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channels: Int
    /// Container and encoding.
    public var format: SoundFileFormat
    /// Whether ``SoundFile/seek(toFrame:)`` can work.
    public var isSeekable: Bool

    public init(frames: Int64, sampleRate: Int, channels: Int, format: SoundFileFormat, isSeekable: Bool) {
        self.frames = frames
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        self.isSeekable = isSeekable
    }

    init(_ info: SF_INFO) {
        self.init(
            frames: Int64(info.frames),
            sampleRate: Int(info.samplerate),
            channels: Int(info.channels),
            format: SoundFileFormat(rawValue: info.format),
            isSeekable: info.seekable != 0
        )
    }

    /// ``frames`` at ``sampleRate``, to the nanosecond (zero if the rate is unknown).
    public var duration: Duration {
        guard frames != .max else { return .zero }
        return durationOf(frames: frames, rate: sampleRate)
    }

    public var description: String {
        "\(format), \(sampleRate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), \(frames) frames"
    }
}

/// Looks up libsndfile's names for formats (`SFC_GET_FORMAT_INFO`).
enum SoundFileFormatNames {
    static func name(of format: Int32) -> String? {
        var info = SF_FORMAT_INFO()
        info.format = format
        let status = SoundFileGlobalState.withLock {
            sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
        }
        guard status == 0, let name = info.name else { return nil }
        return String(cString: name)
    }
}

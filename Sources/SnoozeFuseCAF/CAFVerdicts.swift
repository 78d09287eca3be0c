/// Decisions derived from a parsed file: can libsndfile decode it, can it be repaired, may it be an
/// iOS notification sound.
public struct CAFVerdicts: Sendable, Equatable {
    public var libsndfile: CAFSndfileVerdict
    /// Repairs that would make the file decodable; empty when none is needed or none applies.
    public var repairs: [CAFRepairHint]
    public var iOSNotification: CAFNotificationVerdict

    /// libsndfile cannot decode the file as it is, but every reason is covered by a repair.
    public var repairable: Bool {
        !libsndfile.canDecode && libsndfile.blockers.allSatisfy { blocker in
            repairs.contains { $0.resolves(blocker) }
        }
    }
}

/// Why libsndfile (1.2) would not decode a file.
public enum CAFDecodeBlocker: Sendable, Equatable {
    /// The file has a structural error (the first one's code); libsndfile rejects or misreads it.
    case malformed(CAFIssueCode)
    /// An encoding libsndfile has no CAF decoder for (`ima4`, `aac `, `.mp3`, `opus`, `flac` …).
    case unsupportedEncoding(CAFFourCC)
    /// Linear PCM with a sample size libsndfile does not read (integer 8/16/24/32, float 32/64 only).
    case unsupportedSampleSize(bits: UInt32, isFloat: Bool)
    /// ALAC whose format flags are not 1–4 (ffmpeg writes 0).
    case alacFormatFlags(UInt32)
    /// More channels than libsndfile accepts (1024).
    case tooManyChannels(UInt32)
    /// The `data` size is -1; libsndfile reports the file as malformed.
    case dataSizeUnknown
}

public struct CAFSndfileVerdict: Sendable, Equatable {
    /// Every reason, most fundamental first; empty when libsndfile can decode the file.
    public var blockers: [CAFDecodeBlocker]
    /// One sentence for people.
    public var reason: String

    public var canDecode: Bool { blockers.isEmpty }
}

/// A repair that import can apply.
public struct CAFRepairHint: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Copy the IMA4 packets losslessly into an AIFF-C (`ima4`) file, which libsndfile decodes.
        case rewrapIMA4AsAIFFC
        /// Rewrite the ALAC format flags; `bitDepth` came from bits/channel or the magic cookie.
        case setALACFormatFlags(UInt32, bitDepth: UInt32)
        /// Write the measured audio size (including the 4-byte edit count) into the `data` header.
        case setDataChunkSize(Int64)
    }

    public var kind: Kind
    public var message: String

    func resolves(_ blocker: CAFDecodeBlocker) -> Bool {
        switch (kind, blocker) {
        case (.rewrapIMA4AsAIFFC, .unsupportedEncoding(let id)): return id == .appleIMA4
        case (.setALACFormatFlags, .alacFormatFlags): return true
        case (.setDataChunkSize, .dataSizeUnknown): return true
        default: return false
        }
    }
}

/// Why a file may not be used as an iOS notification sound.
public enum CAFNotificationProblem: Sendable, Equatable {
    case malformed(CAFIssueCode)
    /// Only linear PCM, IMA4, µ-law and a-law are allowed.
    case encoding(CAFFourCC)
    case durationUnknown
    /// It must be shorter than 30 seconds.
    case tooLong(seconds: Double)
}

public struct CAFNotificationVerdict: Sendable, Equatable {
    public var problems: [CAFNotificationProblem]
    public var reason: String

    public var isCompatible: Bool { problems.isEmpty }
}

/// iOS plays notification sounds shorter than this many seconds.
public let iOSNotificationSoundLimitSeconds: Double = 30

extension CAFVerdicts {
    static let alacFlagsForBitDepth: [UInt32: UInt32] = [16: 1, 20: 2, 24: 3, 32: 4]

    /// Derives the verdicts from the parsed structure. `issues` must be complete.
    static func compute(
        description: CAFAudioDescription?, data: CAFAudioData?, cookie: CAFMagicCookie?,
        duration: CAFDuration?, issues: [CAFIssue]
    ) -> CAFVerdicts {
        let firstError = issues.first { $0.severity == .error }
        var blockers: [CAFDecodeBlocker] = []
        if let firstError { blockers.append(.malformed(firstError.code)) }
        if let description, firstError == nil {
            let id = description.formatID
            if description.channelsPerFrame > 1024 {
                blockers.append(.tooManyChannels(description.channelsPerFrame))
            }
            if id == .linearPCM {
                let isFloat = description.formatFlags & CAFAudioDescription.linearPCMIsFloat != 0
                let allowed: Set<UInt32> = isFloat ? [32, 64] : [8, 16, 24, 32]
                if !allowed.contains(description.bitsPerChannel) {
                    blockers.append(.unsupportedSampleSize(bits: description.bitsPerChannel, isFloat: isFloat))
                }
            } else if id == .uLaw || id == .aLaw {
                // Decodable as is.
            } else if id == .appleLossless {
                if !(1...4).contains(description.formatFlags) {
                    blockers.append(.alacFormatFlags(description.formatFlags))
                }
            } else {
                blockers.append(.unsupportedEncoding(id))
            }
            if data?.sizeWasUnknown == true { blockers.append(.dataSizeUnknown) }
        }

        var repairs: [CAFRepairHint] = []
        if firstError == nil, let description {
            if description.formatID == .appleIMA4 {
                repairs.append(CAFRepairHint(
                    kind: .rewrapIMA4AsAIFFC,
                    message: "IMA4 packets can be copied losslessly into an AIFF-C file, which libsndfile decodes"))
            }
            if description.formatID == .appleLossless, !(1...4).contains(description.formatFlags) {
                if let flags = alacFlagsForBitDepth[description.bitsPerChannel] {
                    repairs.append(CAFRepairHint(
                        kind: .setALACFormatFlags(flags, bitDepth: description.bitsPerChannel),
                        message: "set the ALAC format flags to \(flags) (\(description.bitsPerChannel)-bit source, from bits/channel)"))
                } else if let depth = cookie?.alac.map({ UInt32($0.bitDepth) }),
                          let flags = alacFlagsForBitDepth[depth] {
                    repairs.append(CAFRepairHint(
                        kind: .setALACFormatFlags(flags, bitDepth: depth),
                        message: "set the ALAC format flags to \(flags) (\(depth)-bit source, from the magic cookie)"))
                }
            }
            if let data, data.sizeWasUnknown {
                let size = data.audioByteCount + 4
                repairs.append(CAFRepairHint(
                    kind: .setDataChunkSize(size),
                    message: "write the measured size \(size) into the data chunk header at byte \(data.chunkOffset + 4)"))
            }
        }

        let sndfile = CAFSndfileVerdict(
            blockers: blockers,
            reason: blockers.first.map { reason(for: $0, issue: firstError) }
                ?? "libsndfile can decode this file")

        var problems: [CAFNotificationProblem] = []
        if let firstError { problems.append(.malformed(firstError.code)) }
        if let description, ![.linearPCM, .appleIMA4, .uLaw, .aLaw].contains(description.formatID) {
            problems.append(.encoding(description.formatID))
        }
        if let duration {
            if duration.seconds >= iOSNotificationSoundLimitSeconds {
                problems.append(.tooLong(seconds: duration.seconds))
            }
        } else if firstError == nil {
            problems.append(.durationUnknown)
        }
        let notification = CAFNotificationVerdict(
            problems: problems,
            reason: problems.first.map { reason(for: $0, issue: firstError) }
                ?? "usable as an iOS notification sound")
        return CAFVerdicts(libsndfile: sndfile, repairs: repairs, iOSNotification: notification)
    }

    static func reason(for blocker: CAFDecodeBlocker, issue: CAFIssue?) -> String {
        switch blocker {
        case .malformed:
            return "the file is malformed: " + (issue?.message ?? "structural error")
        case .unsupportedEncoding(let id):
            return "libsndfile has no decoder for '\(id)' in CAF"
        case .unsupportedSampleSize(let bits, let isFloat):
            return isFloat
                ? "libsndfile reads 32- and 64-bit float, not \(bits)-bit"
                : "libsndfile reads 8-, 16-, 24- and 32-bit integer PCM, not \(bits)-bit"
        case .alacFormatFlags(let flags):
            return "ALAC format flags are \(flags); libsndfile needs 1-4 (the source bit depth)"
        case .tooManyChannels(let count):
            return "\(count) channels; libsndfile accepts at most 1024"
        case .dataSizeUnknown:
            return "the data chunk size is -1 (written while streaming); libsndfile rejects it as malformed"
        }
    }

    static func reason(for problem: CAFNotificationProblem, issue: CAFIssue?) -> String {
        switch problem {
        case .malformed:
            return "the file is malformed: " + (issue?.message ?? "structural error")
        case .encoding(let id):
            return "iOS notification sounds must be linear PCM, IMA4, µ-law or a-law, not '\(id)'"
        case .durationUnknown:
            return "the duration cannot be determined"
        case .tooLong(let seconds):
            return "iOS notification sounds must be shorter than 30 s; this one lasts \(seconds) s"
        }
    }
}

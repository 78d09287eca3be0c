import Foundation
import SnoozeFuseCore
import SnoozeFuseSoundLibrary

/// One `sounds list --json` entry.
struct SoundJSON: Encodable {
    var name: String
    var builtIn: Bool
    var path: String
    var durationSeconds: Double?
    var sampleRate: Int?
    var channels: Int?
    var format: String?
    var originalFileName: String?
    var sha256: String?
    var importedAt: String?
    /// EBU R 128: LUFS, dBTP, and the gain (dB) that brings it to the alarm's loudness.
    var loudnessLufs: Double?
    var truePeakDbtp: Double?
    var alarmGainDb: Double?

    init(_ sound: LibrarySound) {
        name = sound.name
        builtIn = sound.isBuiltIn
        path = sound.path
        loudnessLufs = sound.loudness.map(rounded)
        truePeakDbtp = sound.truePeak.flatMap { $0.isFinite ? rounded($0) : nil }
        if let truePeak = sound.truePeak, sound.loudness != nil {
            alarmGainDb = rounded(AlarmLoudness.gain(integrated: sound.loudness, truePeak: truePeak).decibels)
        }
        if let stored = sound.stored {
            durationSeconds = stored.durationSeconds
            sampleRate = stored.sampleRate
            channels = stored.channels
            format = stored.format
            originalFileName = stored.originalFileName
            sha256 = stored.sha256
            importedAt = stored.importedAt.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        } else if let info = sound.info {
            durationSeconds = Double(info.frames) / Double(max(info.sampleRate, 1))
            sampleRate = info.sampleRate
            channels = info.channels
            format = info.format.description
        }
    }
}

/// A decibel value to the tenth, for JSON.
private func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }

/// A sound's loudness for `sounds list`: `-8.0 LUFS, peak -3.1 dBTP` (what the alarm does with it
/// is `sounds validate`'s to say).
func loudnessColumn(_ loudness: Double?, _ truePeak: Double?) -> String {
    guard let truePeak else { return "loudness not measured" }
    let peak = truePeak.isFinite ? AlarmLoudness.tenths(truePeak) : "-inf"
    return (loudness.map { "\(AlarmLoudness.tenths($0)) LUFS" } ?? "silent") + ", peak \(peak) dBTP"
}

/// `sounds validate --json`.
struct ValidationJSON: Encodable {
    struct Info: Encodable {
        var format: String
        var sampleRate: Int
        var channels: Int
        var frames: Int64
        var durationSeconds: Double
    }

    struct Chunk: Encodable {
        var type: String
        var offset: Int64
        var declaredSize: Int64
        var bodySize: Int64
    }

    struct Issue: Encodable {
        var severity: String
        var code: String
        var offset: Int64
        var message: String
    }

    struct Description: Encodable {
        var sampleRate: Double?
        var formatID: String
        var formatFlags: UInt32
        var bytesPerPacket: UInt32
        var framesPerPacket: UInt32
        var channelsPerFrame: UInt32
        var bitsPerChannel: UInt32
    }

    struct CAF: Encodable {
        var fileSize: Int64
        var version: UInt16?
        var description: Description?
        var chunks: [Chunk]
        var durationFrames: Int64?
        var durationSeconds: Double?
        var dataSizeUnknown: Bool?
        var issues: [Issue]
        var valid: Bool
        var libsndfileCanDecode: Bool
        var libsndfileReason: String
        var repairable: Bool
        var repairs: [String]
        var notificationCompatible: Bool
        var notificationReason: String
    }

    struct Truncation: Encodable {
        var framesRead: Int64
        var framesDeclared: Int64
        var decoderMessage: String?
        var message: String
    }

    var path: String
    var container: String
    var valid: Bool
    var importable: Bool
    var problem: String?
    var libsndfile: Info?
    /// Frames that decoded, reading the whole file.
    var framesDecoded: Int64?
    var truncated: Bool
    var truncation: Truncation?
    var repairs: [String]
    var notification: Bool
    var notificationProblems: [String]
    var caf: CAF?
    /// EBU R 128 of what decoded, and what an alarm does with it.
    var loudnessLufs: Double?
    var truePeakDbtp: Double?
    var alarmGainDb: Double?
    var alarmLoudnessLimit: String?
    var loudnessProblem: String?

    init(_ validation: SoundValidation, notification: Bool, passes: Bool) {
        path = validation.path
        container = validation.cafReport != nil ? "CAF" : validation.info?.format.major.name ?? "unknown"
        valid = passes
        importable = validation.importable
        problem = validation.problem
        libsndfile = validation.info.map {
            Info(format: $0.format.description, sampleRate: $0.sampleRate, channels: $0.channels, frames: $0.frames,
                 durationSeconds: Double($0.frames) / Double(max($0.sampleRate, 1)))
        }
        framesDecoded = validation.framesDecoded
        truncated = validation.truncation != nil
        truncation = validation.truncation.map {
            Truncation(framesRead: $0.framesRead, framesDeclared: $0.framesDeclared, decoderMessage: $0.decoderMessage, message: $0.description)
        }
        repairs = validation.repairs
        loudnessLufs = validation.loudness.map(rounded)
        truePeakDbtp = validation.truePeak.flatMap { $0.isFinite ? rounded($0) : nil }
        if let truePeak = validation.truePeak {
            let (decibels, limit) = AlarmLoudness.gain(integrated: validation.loudness, truePeak: truePeak)
            alarmGainDb = rounded(decibels)
            alarmLoudnessLimit = limit?.rawValue
        }
        loudnessProblem = validation.loudnessFailure
        self.notification = notification
        notificationProblems = validation.notificationProblems
        caf = validation.cafReport.map { report in
            CAF(
                fileSize: report.fileSize, version: report.header?.version,
                description: report.audioDescription.map {
                    Description(sampleRate: $0.sampleRate.isFinite ? $0.sampleRate : nil, formatID: $0.formatID.description,
                                formatFlags: $0.formatFlags, bytesPerPacket: $0.bytesPerPacket,
                                framesPerPacket: $0.framesPerPacket, channelsPerFrame: $0.channelsPerFrame,
                                bitsPerChannel: $0.bitsPerChannel)
                },
                chunks: report.chunks.map { Chunk(type: $0.type.description, offset: $0.offset, declaredSize: $0.declaredSize, bodySize: $0.bodySize) },
                durationFrames: report.duration?.frames, durationSeconds: report.duration?.seconds,
                dataSizeUnknown: report.audioData?.sizeWasUnknown,
                issues: report.issues.map { Issue(severity: $0.severity.rawValue, code: $0.code.rawValue, offset: $0.offset, message: $0.message) },
                valid: report.isValid, libsndfileCanDecode: report.libsndfileCanDecode,
                libsndfileReason: report.verdicts.libsndfile.reason, repairable: report.verdicts.repairable,
                repairs: report.verdicts.repairs.map(\.message),
                notificationCompatible: report.verdicts.iOSNotification.isCompatible,
                notificationReason: report.verdicts.iOSNotification.reason)
        }
    }
}

/// `sounds validate` for people.
func validationText(_ validation: SoundValidation) -> [String] {
    var lines = ["\(validation.path):"]
    if let report = validation.cafReport {
        lines.append("  CAF, \(report.fileSize) bytes" + (report.header.map { ", version \($0.version)" } ?? ""))
        if let d = report.audioDescription {
            lines.append("  desc: \(d.sampleRate) Hz, '\(d.formatID)', flags \(d.formatFlags), \(d.bytesPerPacket) bytes/packet, \(d.framesPerPacket) frames/packet, \(d.channelsPerFrame) channel(s), \(d.bitsPerChannel) bits/channel")
        }
        for chunk in report.chunks {
            lines.append("  chunk '\(chunk.type)' at byte \(chunk.offset): size \(chunk.declaredSize)" + (chunk.bodySize != chunk.declaredSize ? " (\(chunk.bodySize) bytes present)" : ""))
        }
        if let duration = report.duration {
            lines.append("  duration: \(duration.frames) frames, \(String(format: "%.3f", duration.seconds)) s (from \(duration.source.rawValue))")
        }
        for issue in report.issues { lines.append("  \(issue)") }
        lines.append("  libsndfile: \(report.verdicts.libsndfile.reason)")
        for repair in report.verdicts.repairs { lines.append("  repair: \(repair.message)") }
        lines.append("  iOS notification: \(report.verdicts.iOSNotification.reason)")
    }
    if let info = validation.info {
        lines.append("  libsndfile sees: \(info)")
        if let truncation = validation.truncation {
            lines.append("  \(truncation)")
        } else if let decoded = validation.framesDecoded {
            lines.append("  decoded: all \(decoded) frames")
        }
    } else if validation.cafReport == nil, !validation.notificationProblems.isEmpty {
        lines.append("  iOS notification: \(validation.notificationProblems.joined(separator: "; "))")
    }
    if validation.cafReport == nil, validation.info != nil {
        lines.append("  iOS notification: " + (validation.notificationProblems.isEmpty ? "usable as an iOS notification sound" : validation.notificationProblems.joined(separator: "; ")))
    }
    if let failure = validation.loudnessFailure {
        lines.append("  loudness: not measured (\(failure))")
    } else if let truePeak = validation.truePeak {
        lines.append("  loudness: " + (AlarmLoudness.describe(integrated: validation.loudness, truePeak: truePeak)
            ?? "silent (below -70 LUFS): an alarm cannot play it louder"))
    }
    lines.append(validation.importable ? "  importable: yes" : "  importable: no (\(validation.problem ?? "unknown reason"))")
    return lines
}

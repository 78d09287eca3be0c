public import SnoozeFuseAudio
public import SnoozeFuseCAF

/// What `sounds validate` found.
public struct SoundValidation: Sendable {
    public var path: String
    /// The full report, for CAF files.
    public var cafReport: CAFReport?
    /// What libsndfile sees (after repairs, for CAF files that need them); nil if it cannot open it.
    public var info: SoundFileInfo?
    /// Whether `sounds import` can import the file.
    public var importable: Bool
    /// Why not, when it cannot.
    public var problem: String?
    /// Repairs import would apply.
    public var repairs: [String]
    /// Why iOS would refuse it as a notification sound (empty: it would accept it).
    public var notificationProblems: [String]
    /// Frames that decoded, reading the whole file (nil when it does not open).
    public var framesDecoded: Int64?
    /// Set when fewer frames decoded than the file declares.
    public var truncation: Truncation?
    /// EBU R 128 integrated loudness (LUFS; nil for silence) and true peak (dBTP) of what decoded;
    /// both nil, with `loudnessFailure` saying why, when libebur128 cannot measure it.
    public var loudness: Double?
    public var truePeak: Double?
    public var loudnessFailure: String?

    /// Validates the file at `path`. Throws only when the file is missing or unreadable (66).
    public static func validate(path: String) throws(SoundLibraryError) -> SoundValidation {
        var validation = SoundValidation(path: path, importable: false, repairs: [], notificationProblems: [])
        do {
            var input = try SoundInput(path: path)
            let info = input.file.info
            validation.cafReport = input.report
            validation.info = info
            validation.repairs = input.repairs
            // Decode it all: a header can promise frames the file no longer holds. Its loudness is
            // measured on the way.
            var meter: LoudnessMeter?
            do throws(LoudnessError) {
                meter = try LoudnessMeter(channels: info.channels, sampleRate: info.sampleRate)
            } catch {
                validation.loudnessFailure = error.description
            }
            let decoded = try decodeAll(&input.file, measuring: meter)
            if let result = meter?.result {
                validation.loudness = result.integrated
                validation.truePeak = result.truePeak
            }
            validation.framesDecoded = decoded.frames
            validation.truncation = Truncation.check(read: decoded.frames, declared: info.frames, format: info.format,
                                                     sampleRate: info.sampleRate, stoppedBy: decoded.stoppedBy)
            validation.importable = info.frames > 0 && decoded.frames > 0 && validation.truncation == nil
            if let truncation = validation.truncation {
                validation.problem = "\(truncation)" + (decoded.frames > 0 ? "; `sounds import --accept-truncated` imports the part that decodes" : "")
            } else if !validation.importable {
                validation.problem = "libsndfile finds no audio frames in it"
            }
        } catch where error.kind == .badData {
            validation.problem = error.message
            // A CAF file that failed still gets its report.
            let file = try OpenInputFile(path: path)
            if try file.read(at: 0, count: 4) == Array("caff".utf8) {
                validation.cafReport = CAFInspector().inspect(FileCAFSource(file: file))
            }
        }
        if let report = validation.cafReport {
            validation.notificationProblems = report.verdicts.iOSNotification.isCompatible ? [] : [report.verdicts.iOSNotification.reason]
        } else if let info = validation.info {
            validation.notificationProblems = notificationProblems(info)
        } else {
            validation.notificationProblems = ["libsndfile cannot decode it"]
        }
        return validation
    }

    /// Reads every frame; a decoding error after the first frames ends the count (and is returned).
    static func decodeAll(_ file: inout SoundFile, measuring meter: LoudnessMeter? = nil) throws(SoundLibraryError)
        -> (frames: Int64, stoppedBy: SoundFileError?) {
        let channels = max(file.info.channels, 1)
        let limit = Int64(SoundLoudness.window.components.seconds) * Int64(max(file.info.sampleRate, 1))
        var buffer = [Float](repeating: 0, count: 16_384 * channels)
        var frames: Int64 = 0
        while true {
            do {
                let count = try buffer.withUnsafeMutableBufferPointer { pointer throws(SoundFileError) in try file.read(into: pointer) }
                if count == 0 { return (frames, nil) }
                // Its loudness over the first minute, as import and a nap measure it.
                let measured = min(Int64(count), max(limit - frames, 0))
                if let meter, measured > 0 {
                    buffer.withUnsafeBufferPointer { meter.add(UnsafeBufferPointer(rebasing: $0[0 ..< Int(measured) * channels])) }
                }
                frames += Int64(count)
            } catch {
                if frames > 0 { return (frames, error) }
                throw SoundLibraryError(error)
            }
        }
    }

    /// iOS plays notification sounds in CAF, AIFF or WAV holding linear PCM, IMA4, µ-law or a-law,
    /// shorter than 30 s.
    static func notificationProblems(_ info: SoundFileInfo) -> [String] {
        var problems: [String] = []
        if ![.wav, .wavex, .aiff, .caf].contains(info.format.major) {
            problems.append("iOS notification sounds must be CAF, AIFF or WAV, not \(info.format.major)")
        }
        let allowed: [SoundFileSubtype] = [.pcmS8, .pcmU8, .pcm16, .pcm24, .pcm32, .float, .double, .ulaw, .alaw, .imaADPCM]
        if !allowed.contains(info.format.subtype) {
            problems.append("iOS notification sounds must be linear PCM, IMA4, µ-law or a-law, not \(info.format.subtype)")
        }
        let seconds = Double(info.frames) / Double(max(info.sampleRate, 1))
        if seconds >= iOSNotificationSoundLimitSeconds {
            problems.append("iOS notification sounds must be shorter than 30 s; this one lasts \(seconds) s")
        }
        return problems
    }
}

import CSndFile
import Foundation
import SnoozeFuseAudio
import Testing

func readBytes(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}

/// What libsndfile does with a file: 0 (`SF_ERR_NO_ERROR`) when it opens, otherwise the `SF_ERR_*`
/// code. Opened through SnoozeFuseAudio's wrapper, which holds the one lock over libsndfile's global
/// error state (a direct `sf_open` here, failing at the same moment as another test's open in this
/// process, would hand that test this file's log).
func sndfileOpenResult(_ url: URL) -> Int32 {
    do throws(SoundFileError) {
        _ = try SoundFile(readingAtPath: url.path)
        return 0
    } catch {
        return error.code.rawValue
    }
}

/// `SF_ERR_*` values used in expectations.
enum SndfileResult {
    static let opens = Int32(SF_ERR_NO_ERROR)
    static let unrecognised = Int32(SF_ERR_UNRECOGNISED_FORMAT)
    static let malformed = Int32(SF_ERR_MALFORMED_FILE)
    static let unsupportedEncoding = Int32(SF_ERR_UNSUPPORTED_ENCODING)
}

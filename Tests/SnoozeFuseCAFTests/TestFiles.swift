import CSndFile
import Foundation
import Synchronization
import Testing

func readBytes(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}

/// libsndfile's error state for failed opens is global, so opens are serialised.
private let sndfileLock = Mutex(())

/// What `sf_open` does with a file: 0 (`SF_ERR_NO_ERROR`) when it opens, otherwise the `SF_ERR_*` code.
func sndfileOpenResult(_ url: URL) -> Int32 {
    sndfileLock.withLock { _ in
        var info = SF_INFO()
        guard let handle = sf_open(url.path, Int32(SFM_READ), &info) else { return sf_error(nil) }
        sf_close(handle)
        return 0
    }
}

/// `SF_ERR_*` values used in expectations.
enum SndfileResult {
    static let opens = Int32(SF_ERR_NO_ERROR)
    static let unrecognised = Int32(SF_ERR_UNRECOGNISED_FORMAT)
    static let malformed = Int32(SF_ERR_MALFORMED_FILE)
    static let unsupportedEncoding = Int32(SF_ERR_UNSUPPORTED_ENCODING)
}

import CALSA

/// The one place where raw alsa-lib return values become `ALSAError`s, where `-EINTR` is retried and
/// where a streaming error is either recovered (`snd_pcm_recover`) or surfaced as device-lost.
///
/// alsa-lib's messages are captured on the calling thread around every call, so an error carries
/// what alsa-lib said about it and nothing reaches stderr.
enum ALSACall {
    /// Calls `body` (an alsa-lib function returning a count or `-errno`), retrying on `-EINTR`.
    /// Returns the non-negative result or throws with the device, operation and alsa-lib's messages.
    @discardableResult
    static func check<T: BinaryInteger>(
        device: String, _ operation: ALSAError.Operation, detail: @autoclosure () -> String? = nil,
        _ body: () -> T
    ) throws(ALSAError) -> T {
        ALSAMessageCapture.begin()
        defer { ALSAMessageCapture.end() }
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = ALSAErrno(returnValue: result)
            if code == .interrupted { continue }
            throw ALSAError(device: device, operation: operation, code: code,
                            messages: ALSAMessageCapture.collect(), detail: detail())
        }
    }

    /// What a streaming call should do after it returned `code`.
    enum StreamAction {
        /// Call again (the call was interrupted, or the stream was recovered with `snd_pcm_recover`).
        case retry(recovered: Bool)
    }

    /// Decides what to do after `snd_pcm_writei` (or another streaming call) returned `-code`:
    /// `EINTR` → retry; `EPIPE` (xrun) and `ESTRPIPE` (suspend) → `snd_pcm_recover`, then retry;
    /// anything else (notably `EIO`, `ENODEV`, `EBADFD`: device lost) → throw.
    ///
    /// Must be called on the thread that made the failing call, with the message capture still open,
    /// so alsa-lib's messages about the failure are attached.
    static func handleStreamError(
        _ code: ALSAErrno, pcm: OpaquePointer, device: String, operation: ALSAError.Operation
    ) throws(ALSAError) -> StreamAction {
        switch code {
        case .interrupted:
            return .retry(recovered: false)
        case .xrun, .suspended:
            // silent = 1: alsa-lib would otherwise report "underrun occurred" through the error handler.
            var status = snd_pcm_recover(pcm, -code.rawValue, 1)
            while status == -EINTR {
                status = snd_pcm_recover(pcm, -code.rawValue, 1)
            }
            if status < 0 {
                throw ALSAError(device: device, operation: .recover, code: ALSAErrno(returnValue: status),
                                messages: ALSAMessageCapture.collect(),
                                detail: "while recovering from \(code.symbol) in \(operation)")
            }
            return .retry(recovered: true)
        default:
            throw ALSAError(device: device, operation: operation, code: code,
                            messages: ALSAMessageCapture.collect())
        }
    }
}

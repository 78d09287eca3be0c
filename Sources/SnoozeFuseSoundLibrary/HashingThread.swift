import CLinux
import Foundation
import SnoozeFuseAudio

/// Hashes blocks of samples on a thread of its own, in the order they are handed over.
///
/// The producer fills one block of a ring of ``SoundCopy/slots`` while the thread hashes the others:
/// it calls ``waitForFreeSlot()`` before filling a block and ``hash(_:)`` after, so a block is never
/// overwritten before it is hashed.
final class HashingThread {
    private let digester: AudioDigest
    private let condition = NSCondition()
    /// Guarded by `condition`: blocks handed over and not yet hashed, in order.
    private var queue: [UnsafeRawBufferPointer] = []
    /// Guarded by `condition`: blocks handed over whose hashing has not finished.
    private var pending = 0
    private var closed = false
    private var running = false
    private var result: String?
    /// The loudness, measured from the same blocks on the same thread (nil when libebur128 cannot),
    /// over the first ``SoundLoudness/window`` only: what a nap measures and plays first (a longer
    /// file is a recording, and measuring all of it would cost more than the import).
    private let meter: LoudnessMeter?
    private let sampleType: String
    /// Bytes of audio still to measure.
    private var toMeasure: Int
    /// Why the loudness is not measured, when it is not.
    let loudnessFailure: LoudnessError?

    init(sampleType: String, sampleRate: Int, channels: Int) throws(SoundLibraryError) {
        digester = try AudioDigest(sampleType: sampleType, sampleRate: sampleRate, channels: channels)
        self.sampleType = sampleType
        let bytesPerSample = ["s16": 2, "f64": 8][sampleType] ?? 4
        toMeasure = Int(SoundLoudness.window.components.seconds) * sampleRate * max(channels, 1) * bytesPerSample
        do throws(LoudnessError) {
            meter = try LoudnessMeter(channels: channels, sampleRate: sampleRate)
            loudnessFailure = nil
        } catch {
            meter = nil
            loudnessFailure = error
        }
    }

    /// The loudness of every block hashed (after ``finish()``).
    var loudness: SoundLoudness? { meter?.result }

    func start() {
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "snoozefuse-sha256"
        thread.start()
    }

    /// Blocks until the block the producer is about to fill has been hashed.
    func waitForFreeSlot() {
        condition.lock()
        while pending >= SoundCopy.slots - 1 { condition.wait() }
        condition.unlock()
    }

    func hash(_ bytes: UnsafeRawBufferPointer) {
        condition.lock()
        queue.append(bytes)
        pending += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the stream and waits until everything handed over is hashed and the thread is gone.
    func finish() {
        condition.lock()
        closed = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    /// The digest of everything hashed; call after ``finish()``.
    func digest() -> String {
        if let result { return result }
        let text = digester.finish()
        result = text
        return text
    }

    private func run() {
        condition.lock()
        while true {
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty { break }
            let bytes = queue.removeFirst()
            condition.unlock()
            digester.update(bytes)
            if toMeasure > 0 {
                let part = UnsafeRawBufferPointer(rebasing: bytes[0 ..< min(bytes.count, toMeasure)])
                meter?.add(raw: part, sampleType: sampleType)
                toMeasure -= part.count
            }
            condition.lock()
            pending -= 1
            condition.broadcast()
        }
        running = false
        condition.broadcast()
        condition.unlock()
    }
}

// The digest's EVP context and the loudness meter are used only by the hashing thread between `start()` and `finish()`, and by the
// owner before and after; `finish()` waits (under `condition`) until the thread is done, which
// orders the two. `queue`, `pending`, `closed` and `running` are only touched with `condition` held.
extension HashingThread: @unchecked Sendable {}

/// Starts writing back the file's dirty pages without waiting (`sync_file_range`, SYNC_FILE_RANGE_WRITE).
func startWriteback(_ fileDescriptor: Int32) {
    _ = snoozefuse_start_writeback(fileDescriptor)
}

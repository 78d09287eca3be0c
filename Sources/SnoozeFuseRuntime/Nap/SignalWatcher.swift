import Dispatch
import Glibc

/// Turns SIGINT, SIGTERM and SIGHUP into calls of a handler on a dispatch queue, so a signal
/// cancels the session through the normal path (alarm stopped, terminal restored).
///
/// `@unchecked Sendable`: `sources` is set once in `init` and only cancelled in `deinit`; dispatch
/// sources are themselves thread-safe.
public final class SignalWatcher: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    /// Watches SIGINT, SIGTERM and SIGHUP.
    public convenience init(handler: @escaping @Sendable (Int32) -> Void) {
        self.init(signals: [SIGINT, SIGTERM, SIGHUP], handler: handler)
    }

    /// Watches `signals`; each one calls `handler` with its number.
    public init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "snoozefuse.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

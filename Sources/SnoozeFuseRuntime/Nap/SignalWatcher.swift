import Dispatch
import Glibc

/// Turns signals (SIGINT, SIGTERM and SIGHUP by default) into calls of a handler on a dispatch
/// queue, so a signal cancels the session through the normal path (alarm stopped, terminal
/// restored).
///
/// On Linux libdispatch receives a signal through a handler of its own, installed when the source
/// is registered (moments after `resume`), which passes it to a signalfd; that handler runs on
/// whichever thread the kernel picks, and interrupts its blocking call (EINTR). Until it is
/// installed the signal is ignored here rather than left to its default action (ending the
/// process). Once a handler is in place (an earlier watcher of the same signal), it is left alone:
/// ignoring the signal again would take it from libdispatch, which does not install its handler
/// twice, and every later one would be lost.
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
            if Self.hasDefaultAction(number) { signal(number, SIG_IGN) }
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Whether `number` has its default action (no handler, not ignored).
    static func hasDefaultAction(_ number: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(number, nil, &current) == 0 else { return false }
        return current.__sigaction_handler.sa_handler == nil
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

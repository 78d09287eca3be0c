import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseSystem

/// Puts back the mute and volume an alarm changed when nobody who played it is left to: the nap
/// and its guardian both died mid-alarm, and the live state still holds what to restore. Whoever
/// finds that state next (a new `nap`, `resume` with nothing to ring, `stop` forgetting it) calls
/// this before the state goes.
enum LeftoverSinkFixes {
    /// How long putting them back may take (a frozen server must not hold a command up).
    static let limit = Duration.seconds(3)

    /// Restores `fixes` on the sound server; returns one line per sink for people (what was put
    /// back, or why it could not be).
    static func putBack(_ fixes: [SinkLevelFix]) -> [String] {
        let pending = fixes.filter(\.changedSomething)
        guard !pending.isEmpty else { return [] }
        let call = BoundedCall.start(named: "sf-sink-restore") { () -> [String] in
            let connection: PulseConnection
            do throws(PulseError) {
                connection = try PulseConnection()
            } catch {
                return ["the mute and volume an interrupted alarm changed on \(pending.map { "'\($0.sink)'" }.joined(separator: ", ")) could not be put back: \(error)"]
            }
            return pending.map { fix in restore(fix, on: connection) }
        }
        return call.wait(atMost: limit)
            ?? ["the sound server did not answer within \(limit.compactDescription): the mute and volume an interrupted alarm changed on \(pending.map { "'\($0.sink)'" }.joined(separator: ", ")) stay as it left them"]
    }

    private static func restore(_ fix: SinkLevelFix, on connection: PulseConnection) -> String {
        do throws(PulseError) {
            guard let sink = try connection.sink(named: fix.sink) else {
                return "sink '\(fix.sink)', whose mute and volume an interrupted alarm changed, is gone: nothing to put back"
            }
            switch try connection.putBack(fix, channels: sink.channels) {
            case .restored(let what):
                return "sink '\(fix.sink)': \(what), as it was before an interrupted alarm changed it"
            case .leftAlone(let why):
                return "sink '\(fix.sink)' is left as it is: \(why), so it was changed since an interrupted alarm changed it; its level from before that alarm is not put back"
            }
        } catch {
            return "sink '\(fix.sink)' could not be put back as it was before an interrupted alarm: \(error)"
        }
    }
}

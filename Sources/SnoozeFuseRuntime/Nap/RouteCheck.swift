import SnoozeFuseAudio
import SnoozeFuseCore
import SnoozeFuseSystem

/// `--route SINK[,SINK]` checked against the sound server as the nap starts (and in `--dry-run`):
/// a name no sink has is said then, with the sinks there are, not only when the alarm rings.
enum RouteCheck {
    /// How long the sound server may take to list its sinks.
    static let limit = Duration.seconds(2)

    /// What to say of `route`: the names it gives that no sink of the server has, and the sinks
    /// it has; nil when every name is a sink, the route names none, or no server answers (the
    /// alarm then plays as the chain of outputs decides, and says so).
    static func warning(for route: AlarmRoute) -> String? {
        guard case .sinks(let names) = route else { return nil }
        let call = BoundedCall.start(named: "sf-route-check") { () -> [String]? in
            guard let connection = try? PulseConnection(application: "snoozefuse"), let sinks = try? connection.sinks() else { return nil }
            return sinks.map(\.name)
        }
        guard let listed = call.wait(atMost: limit).flatMap({ $0 }) else { return nil }
        let missing = names.filter { !listed.contains($0) }
        guard !missing.isEmpty else { return nil }
        let instead = missing.count == names.count ? "the alarm plays on the default sink instead" : "the alarm plays on the others"
        return "--route names no sink of the sound server: \(missing.map { "'\($0)'" }.joined(separator: ", ")); \(instead). "
            + "Its sinks: \(listed.isEmpty ? "none" : listed.joined(separator: ", ")) (`pactl list short sinks`)"
    }
}

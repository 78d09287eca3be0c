/// Which sinks the alarm plays on: a pure decision over the server's description of its sinks
/// (SPEC §3 "Routing"), table-tested.
public enum SinkRouting {
    /// The decision: the sinks to play on, in order, and why, one line per choice.
    public struct Decision: Sendable, Hashable {
        public var sinks: [String]
        public var reasons: [String]
        /// Named sinks (`--route a,b`) the server does not have.
        public var missing: [String]

        public init(sinks: [String], reasons: [String], missing: [String] = []) {
            self.sinks = sinks
            self.reasons = reasons
            self.missing = missing
        }
    }

    /// - Parameters:
    ///   - sinks: every sink the server has, as it lists them.
    ///   - defaultSink: the server's default sink's name (nil when it has none).
    ///   - route: what the person asked for.
    public static func route(_ sinks: [SinkDescription], defaultSink: String?, route: AlarmRoute) -> Decision {
        let byName = Dictionary(sinks.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // The default sink, or the first one when the server names none (or names one it lacks).
        let first = defaultSink.flatMap { byName[$0] } ?? sinks.first
        switch route {
        case .defaultSink:
            guard let first else { return Decision(sinks: [], reasons: ["the server has no sink"]) }
            return Decision(sinks: [first.name], reasons: ["\(first.name): the default sink"])
        case .all:
            let playable = sinks.filter { !$0.isUnplugged }
            let chosen = playable.isEmpty ? sinks : playable
            return Decision(sinks: chosen.map(\.name), reasons: chosen.map { "\($0.name): --route all" })
        case .sinks(let names):
            var chosen: [String] = [], missing: [String] = []
            for name in names where !chosen.contains(name) {
                if byName[name] != nil { chosen.append(name) } else { missing.append(name) }
            }
            var reasons = chosen.map { "\($0): named by --route" }
            if chosen.isEmpty, let first {
                // Never silent: none of the named sinks exists, so the default plays.
                chosen = [first.name]
                reasons = ["\(first.name): the default sink, since the server has none of \(names.joined(separator: ", "))"]
            }
            return Decision(sinks: chosen, reasons: reasons, missing: missing)
        case .wake:
            guard let first else { return Decision(sinks: [], reasons: ["the server has no sink"]) }
            var chosen = [first.name]
            var reasons = ["\(first.name): the default sink"]
            let unheard = first.isPersonal || first.isUnplugged || first.isDisplay
            guard unheard else { return Decision(sinks: chosen, reasons: reasons) }
            let why = first.isUnplugged ? "has nothing plugged in"
                : first.isDisplay ? "is a \(first.kind), which may be off, muted on its own or without speakers"
                : "is a \(first.kind), worn by one person"
            let others = sinks.filter { $0.name != first.name && !$0.isPersonal && !$0.isUnplugged }
            // The machine's speakers; where no sink says it is one, every other sink nobody wears
            // (another display among them).
            let speakers = others.filter(\.isSpeaker)
            for sink in speakers.isEmpty ? others : speakers {
                chosen.append(sink.name)
                reasons.append("\(sink.name): the default sink \(why)")
            }
            return Decision(sinks: chosen, reasons: reasons)
        }
    }
}

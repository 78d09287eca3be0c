/// What the alarm does to a sink's mute and volume while it rings, and what it puts back after
/// (SPEC §3: no mute and no volume below the alarm's floor while it rings).
public struct SinkLevelFix: Sendable, Hashable, Codable {
    /// The sink's name.
    public var sink: String
    /// The person's own mute, to put back; nil when the alarm did not change it.
    public var mutedBefore: Bool?
    /// The person's own volume in percent, to put back; nil when the alarm did not change it.
    public var volumeBefore: Int?
    /// The volume the alarm set, in percent (nil when it set none, or in a state written before
    /// it was kept): a sink found at another volume was changed since, by the person.
    public var volumeSet: Int?

    public init(sink: String, mutedBefore: Bool? = nil, volumeBefore: Int? = nil, volumeSet: Int? = nil) {
        self.sink = sink
        self.mutedBefore = mutedBefore
        self.volumeBefore = volumeBefore
        self.volumeSet = volumeSet
    }

    /// Why `sink` as it is now is not what the alarm left: the person changed it since (another
    /// volume than the one the alarm set, give or take the server's rounding; muted again after
    /// the alarm unmuted it). Nil when it is still as the alarm left it, and may be put back.
    /// A sink the person changed is theirs: putting back the level from before the alarm would
    /// undo their newer choice.
    public func changedSince(_ sink: SinkDescription) -> String? {
        if let set = volumeSet, abs(sink.volumePercent - set) > 1 {
            return "its volume is \(sink.volumePercent) %, not the \(set) % the alarm set"
        }
        if mutedBefore != nil, sink.muted { return "it was muted again after the alarm unmuted it" }
        return nil
    }

    /// Whether anything is to be put back.
    public var changedSomething: Bool { mutedBefore != nil || volumeBefore != nil }

    /// The default floor: the alarm is never played on a sink below this volume.
    public static let defaultFloorPercent = 60

    /// What to do to `sink` so the alarm is heard: unmute it, raise it to `floor`. `original` is
    /// the sink as the alarm first found it, `earlier` what the alarm already changed on it: the
    /// values to put back are always the person's own from before the alarm, so a mute made while
    /// it rings is undone now and not brought back when it stops.
    /// Returns the new record, and the actions (nil each when nothing is to be done).
    public static func plan(for sink: SinkDescription, original: SinkDescription, floor: Int, earlier: SinkLevelFix?)
        -> (fix: SinkLevelFix, unmute: Bool, raiseTo: Int?) {
        var fix = earlier ?? SinkLevelFix(sink: sink.name)
        let unmute = sink.muted
        if unmute, fix.mutedBefore == nil { fix.mutedBefore = original.muted }
        var raiseTo: Int?
        if sink.volumePercent < floor {
            raiseTo = floor
            fix.volumeSet = floor
            if fix.volumeBefore == nil { fix.volumeBefore = original.volumePercent }
        }
        return (fix, unmute, raiseTo)
    }

    /// One line for people: what was found and what was done.
    public static func describe(_ sink: SinkDescription, unmute: Bool, raiseTo: Int?) -> String? {
        var found: [String] = [], done: [String] = []
        if unmute {
            found.append("muted")
            done.append("unmuted it")
        }
        if let raiseTo {
            found.append("at \(sink.volumePercent) %")
            done.append("raised it to \(raiseTo) %")
        }
        guard !found.isEmpty else { return nil }
        return "sink '\(sink.name)' was \(found.joined(separator: " and ")) for the alarm: \(done.joined(separator: " and ")) until it stops"
    }
}

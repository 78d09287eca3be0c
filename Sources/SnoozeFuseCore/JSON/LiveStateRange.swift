/// The ranges of the numbers of a nap's live state (SPEC §9): what a nap can write, with room to
/// spare. A number beyond them (a state edited, damaged, or from a tool of its own) makes the state
/// damaged, with the member named, before anything turns it into a time, a duration or a process
/// to signal. Here, over the document, so that the JSON fuzz target checks the same table the
/// runtime's reader uses (`make fuzz`), whatever the bytes.
public enum LiveStateRange {
    /// Seconds since 1970: up to 2100-01-01.
    public static let wallSeconds: ClosedRange<Double> = 0 ... 4_102_444_800
    /// Seconds since boot, up to 31 years either way: an instant before this boot (an alarm that
    /// was due before a reboot, resumed after it) is negative.
    public static let bootSeconds: ClosedRange<Double> = -1e9 ... 1e9
    /// A timer's length: up to a week (a nap lasts at most 24 h; a snooze or ring limit less).
    public static let timerSeconds: ClosedRange<Double> = 0 ... 604_800
    /// A process: 1 up to the kernel's largest pid_max (2^22). Never 0 or negative, which `kill`
    /// reads as a process group or every process.
    public static let pid: ClosedRange<Double> = 1 ... 4_194_304
    public static let percent: ClosedRange<Double> = 0 ... 100
    /// A sink's volume before a fix, in percent (a server may go beyond 100 %).
    public static let sinkPercent: ClosedRange<Double> = 0 ... 1_000
    public static let count: ClosedRange<Double> = 0 ... 1_000_000
    /// A lateness in milliseconds, either way: up to 31 years.
    public static let latenessMs: ClosedRange<Double> = -1e12 ... 1e12

    /// Every number of a live state by its path (`[]` stands for each element of an array), and
    /// its range. A test checks that every number of a state with every member is here.
    public static let members: [(path: String, range: ClosedRange<Double>)] = {
        // Not `version` (any integer: compared, never computed with) nor `history.origin` (never read).
        var members: [(String, ClosedRange<Double>)] = [("pid", pid), ("guardianPid", pid)]
        for instant in ["started", "alarm.due", "phaseEnds", "maxDeadline", "ringingSince", "updated"] {
            members += [(instant + ".wallSeconds", wallSeconds), (instant + ".bootSeconds", bootSeconds)]
        }
        members += [("phaseSeconds", timerSeconds), ("snoozes", count), ("setup.volume", percent), ("setup.systemVolume", percent)]
        for timer in ["fadeInSeconds", "ringLimitSeconds", "snoozeSeconds", "releaseSeconds", "napSeconds", "maxSeconds"] {
            members.append(("setup." + timer, timerSeconds))
        }
        members.append(("history.idleAfter", timerSeconds))
        for wall in ["created", "started", "fellAsleep", "napping", "firstRing", "ended", "lastRelease"] {
            members.append(("history." + wall, wallSeconds))
        }
        members += [("history.latenessMs", latenessMs), ("history.snoozes", count),
                    ("sinkFixes[].volumeBefore", sinkPercent), ("sinkFixes[].volumeSet", sinkPercent)]
        return members
    }()

    /// Throws for the first number of `document` (a live state) at one of ``members`` that is
    /// beyond its range, naming it (`sinkFixes[1].volumeSet`). Members absent, null or of another
    /// kind are the typed reader's to refuse; every number here is read as a `Double`.
    public static func check(document: JSONValue) throws(JSONFieldError) {
        for (path, range) in members {
            try check(document, steps: path.split(separator: ".")[...], named: "", range)
        }
    }

    private static func check(_ value: JSONValue, steps: ArraySlice<Substring>, named: String,
                              _ range: ClosedRange<Double>) throws(JSONFieldError) {
        guard let step = steps.first else {
            guard case .number(let text) = value else { return }
            // Beyond a Double (1e400) is the typed reader's: it refuses it as not a number.
            guard let number = Double(text), number.isFinite, !range.contains(number) else { return }
            throw JSONFieldError(path: named, problem: "\(text) is out of its range (\(written(range.lowerBound))…\(written(range.upperBound)))")
        }
        let each = step.hasSuffix("[]")
        let key = each ? String(step.dropLast(2)) : String(step)
        guard case .object(let members) = value, let member = members.first(where: { $0.key == key }) else { return }
        let path = named.isEmpty ? key : named + "." + key
        guard each else { return try check(member.value, steps: steps.dropFirst(), named: path, range) }
        guard case .array(let elements) = member.value else { return }
        for (index, element) in elements.enumerated() {
            try check(element, steps: steps.dropFirst(), named: "\(path)[\(index)]", range)
        }
    }

    /// A bound as a person reads it: `604800`, not `604800.0`.
    private static func written(_ bound: Double) -> String {
        Int64(exactly: bound).map(String.init) ?? "\(bound)"
    }
}

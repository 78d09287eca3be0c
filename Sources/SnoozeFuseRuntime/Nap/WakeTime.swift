public import Foundation
public import SnoozeFuseCore

/// `nap --until 14:30`: the alarm at a time of day rather than after a nap's length.
public enum WakeTime {
    /// The next moment after `now` at which `time` shows on a clock of `calendar`'s time zone:
    /// today if it is still to come, else tomorrow. A time a clock change skips (02:30 on the
    /// night the clocks go forward) is the first moment after the gap; a time that shows twice
    /// (the night they go back) is its first showing.
    public static func next(_ time: ClockTime, after now: Date, calendar: Calendar) -> Date {
        var wanted = DateComponents()
        wanted.hour = time.hour
        wanted.minute = time.minute
        wanted.second = time.second
        if let date = calendar.nextDate(after: now, matching: wanted, matchingPolicy: .nextTime, repeatedTimePolicy: .first) {
            return date
        }
        // A calendar that finds no such moment (none known): the same time of day, counted in
        // seconds from midnight.
        let midnight = calendar.startOfDay(for: now)
        let today = midnight.addingTimeInterval(Double(time.hour * 3600 + time.minute * 60 + time.second))
        return today > now ? today : today.addingTimeInterval(86_400)
    }
}

extension ResolvedNapSettings {
    /// Makes this nap ring at `time` (typed as `text`), its next showing after `now`, counting
    /// the release in: the alarm is that moment from the start (it rings then even if no hold
    /// comes), the failsafe from the first hold on, and the nap is what it leaves after the
    /// release (how long the hold lasts does not move it). Refused (exit 64) when the moment
    /// falls within the release: the alarm would ring before the nap began.
    public mutating func wake(at time: ClockTime, as text: String, now: Date, calendar: Calendar = .current) throws(NapSetupError) {
        let date = WakeTime.next(time, after: now, calendar: calendar)
        let seconds = Int64(date.timeIntervalSince(now).rounded(.down))
        let release = timers.release
        guard Duration.seconds(seconds) > release else {
            let away = seconds < 1 ? "less than a second" : Duration.seconds(seconds).compactDescription
            throw NapSetupError(.usage, [
                "--until \(text) is \(away) from now, within the \(release.compactDescription) release: the alarm would ring before the nap begins. Name a later time, or a shorter --release."
            ])
        }
        // The night the clocks go back, a time an hour behind now is 24 h 59 m away: past the
        // longest any nap may wait (a move, a guardian's bound), so it is refused.
        guard seconds <= DurationParser.maximumSeconds else {
            throw NapSetupError(.usage, [
                "--until \(text) is \(Duration.seconds(seconds).compactDescription) from now (the clocks go back before then), more than the 24h a nap may last. Name a time within 24 hours."
            ])
        }
        let napLeft = Duration.seconds(seconds) - release
        for (key, value) in [(NapSettingKey.nap, napLeft), (.max, Duration.seconds(seconds))] {
            if let index = settings.firstIndex(where: { $0.key == key }) {
                settings[index] = Setting(key: key, value: .duration(value), source: .until(text))
            }
        }
        wakeAt = date
    }
}

import Foundation
import SnoozeFuseCore
import SnoozeFuseRuntime
import Testing

/// `nap --until`: the next showing of a time of day on a clock of a time zone, and the nap it
/// makes of the settings.
@Suite("Waking at a time of day: the moment it names, and the nap it makes")
struct WakeTimeTests {
    /// A calendar of a zone with clock changes (Berlin: forward on 2027-03-28 at 02:00, back on
    /// 2027-10-31 at 03:00).
    static let berlin: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }()

    /// The moment `text` (ISO 8601 with its offset) names.
    static func moment(_ text: String) throws -> Date {
        try Date.ISO8601FormatStyle().parse(text)
    }

    @Test("today while it is to come, else tomorrow, on the zone's clock", arguments: [
        ("2026-11-29T14:00:00+01:00", "14:30", "2026-11-29T14:30:00+01:00"),
        ("2026-11-29T15:00:00+01:00", "14:30", "2026-11-30T14:30:00+01:00"),
        // Exactly now is tomorrow: the moment has come.
        ("2026-11-29T14:30:00+01:00", "14:30", "2026-11-30T14:30:00+01:00"),
        ("2026-11-29T23:59:30+01:00", "0:00", "2026-11-30T00:00:00+01:00"),
        ("2026-12-31T23:00:00+01:00", "7am", "2027-01-01T07:00:00+01:00"),
        // The night the clocks go forward: 02:30 does not show; the first moment after the gap.
        ("2027-03-28T00:00:00+01:00", "2:30", "2027-03-28T03:00:00+02:00"),
        // A morning alarm set before a clock change is at the new clock's 7:00, 5 h later, not 6.
        ("2027-03-28T01:00:00+01:00", "7:00", "2027-03-28T07:00:00+02:00"),
        // The night they go back: 02:30 shows twice; its first showing.
        ("2027-10-31T00:00:00+02:00", "2:30", "2027-10-31T02:30:00+02:00"),
    ])
    func nextShowing(_ now: String, _ time: String, _ expected: String) throws {
        let next = WakeTime.next(try ClockTime(parsing: time), after: try Self.moment(now), calendar: Self.berlin)
        #expect(next == (try Self.moment(expected)), "\(next)")
    }

    /// The settings' nap and failsafe become what the time leaves (the release counted in), from
    /// `--until`, and the configuration carries the moment.
    @Test func theNapAndTheFailsafeFollowFromTheTime() throws {
        var resolved = try NapSettingsResolver.resolve(NapSettingLayers(flags: [.release: ["1m"]]))
        let now = try Self.moment("2026-11-29T14:00:00+01:00")
        try resolved.wake(at: try ClockTime(parsing: "15:30"), as: "15:30", now: now, calendar: Self.berlin)
        #expect(resolved[.nap].value == .duration(.seconds(89 * 60)))
        #expect(resolved[.max].value == .duration(.seconds(90 * 60)))
        #expect(resolved[.nap].source == .until("15:30") && resolved[.max].source.description(of: .max) == "--until 15:30")
        #expect(resolved[.release].value == .duration(.seconds(60)), "the release is the person's")
        #expect(resolved.warnings.isEmpty, "no failsafe-shorter-than-the-nap warning: \(resolved.warnings)")
        let configuration = resolved.configuration(showsCountdown: false, usesColour: false)
        #expect(configuration.wakeAt == (try Self.moment("2026-11-29T15:30:00+01:00")))
        #expect(configuration.timers.nap == .seconds(89 * 60))
    }

    /// A time within the release would ring before the nap began: refused as a usage error,
    /// saying how far off it is and what to change.
    @Test(arguments: [("14:00:20", "20s"), ("14:00:30", "30s"), ("14:00", "less than a second")])
    func aTimeWithinTheReleaseIsRefused(_ time: String, _ away: String) throws {
        var resolved = try NapSettingsResolver.resolve(NapSettingLayers())
        let now = try Self.moment("2026-11-29T14:00:00.000+01:00").addingTimeInterval(-0.5)
        #expect(throws: NapSetupError(.usage, [
            "--until \(time) is \(away) from now, within the 30s release: the alarm would ring before the nap begins. Name a later time, or a shorter --release.",
        ])) {
            try resolved.wake(at: try ClockTime(parsing: time), as: time, now: now, calendar: Self.berlin)
        }
        #expect(resolved.wakeAt == nil)
    }

    /// The night the clocks go back, 14:30 at 14:31 is 24 h 59 m away: more than a nap may wait.
    @Test func aTimeMoreThanADayAwayIsRefused() throws {
        var resolved = try NapSettingsResolver.resolve(NapSettingLayers())
        let now = try Self.moment("2027-10-30T14:31:00+02:00")
        #expect(WakeTime.next(try ClockTime(parsing: "14:30"), after: now, calendar: Self.berlin) == (try Self.moment("2027-10-31T14:30:00+01:00")))
        #expect(throws: NapSetupError.self) {
            try resolved.wake(at: try ClockTime(parsing: "14:30"), as: "14:30", now: now, calendar: Self.berlin)
        }
        #expect(resolved.wakeAt == nil)
    }
}

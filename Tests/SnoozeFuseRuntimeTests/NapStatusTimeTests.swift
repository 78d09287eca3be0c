import Foundation
import SnoozeFuseRuntime
import Testing

/// `status` says when the alarm rings on this machine's clock: a time today, and with its date on
/// any other day (a state from a clock that jumped, a nap found long after it was left).
@Suite("status times: a clock time today, the date on another day")
struct NapStatusTimeTests {
    /// Local noon of today, in seconds since 1970.
    static func todayNoon() -> Double {
        var now = time_t(Date().timeIntervalSince1970)
        var parts = tm()
        localtime_r(&now, &parts)
        parts.tm_hour = 12
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_isdst = -1
        return Double(mktime(&parts))
    }

    /// What the local clock shows at `seconds`, as `yyyy-mm-dd hh:mm`.
    static func dated(_ seconds: Double) -> String {
        var time = time_t(seconds)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%04d-%02d-%02d %02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min)
    }

    @Test func todayIsAClockTimeAndAnyOtherDayHasItsDate() {
        let noon = Self.todayNoon()
        for sameDay in [noon + 3 * 3_600 + 1_800, noon - 11 * 3_600] {
            #expect(NapStatus.localTime(sameDay, now: noon) == String(Self.dated(sameDay).suffix(5)))
        }
        for other in [noon + 13 * 3_600, noon - 86_400, noon + 400 * 86_400, noon - 3 * 365 * 86_400] {
            let text = NapStatus.localTime(other, now: noon)
            #expect(text == Self.dated(other), "\(other - noon) s from noon")
            #expect(text.count == 16)
        }
    }
}

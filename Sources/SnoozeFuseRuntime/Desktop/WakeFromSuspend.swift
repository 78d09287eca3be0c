import Foundation
import SnoozeFuseCore
public import SnoozeFuseSystem

/// Wakes a suspended machine for a nap's alarm (SPEC §7): while the nap waits for its alarm, a
/// ``WakeAlarmTimer`` is armed for the alarm's deadline less a head start (the machine and its
/// audio device take a moment to resume), moved whenever the deadline moves (snooze, `add`, `+`
/// and `-`), and disarmed while the alarm rings and once the nap has ended.
///
/// Each arming is a `wake_alarm` record with the instant the kernel holds, read back. Without
/// CAP_WAKE_ALARM (or without alarm timers) it says once what is missing and what that means, and
/// the nap goes on: the keep-awake inhibitor still stops a suspend where it can. Called on the
/// nap's loop: timerfd calls never block.
final class WakeFromSuspend: Sendable {
    /// How long before the alarm the machine wakes.
    let headStart: Duration
    private let report: @Sendable (SessionNote) -> Void
    private let state = Locked(State())

    private struct State {
        var timer: WakeAlarmTimer?
        /// The instant the timer is armed for.
        var target: BootInstant?
        /// No wake alarm can be had (and the warning was given).
        var unavailable = false
    }

    /// - Parameter report: told a ``SessionNote/wakeAlarm(_:)`` at each arming and a warning when
    ///   there can be no wake alarm.
    init(headStart: Duration = .seconds(5), report: @escaping @Sendable (SessionNote) -> Void) {
        self.headStart = headStart
        self.report = report
    }

    /// Follows `session`: armed for the alarm that rings if the sleeper sleeps on (releasing: after
    /// the rest of the release and the nap; napping: the nap's end or the failsafe; holding: the
    /// failsafe; snoozed: the end of the snooze; waiting for the first hold: the time named with
    /// `--until`, if any), disarmed in any other phase.
    func update(_ session: Session<BootInstant>) {
        let deadline = session.undisturbedAlarm ?? session.expectedAlarm ?? (session.phase == .snoozed ? session.snoozeDeadline : nil)
        let target = deadline.flatMap { WakeAlarmSchedule.instant(for: $0, now: BootInstant.now, headStart: headStart) }
        let note = state.withLock { state -> SessionNote? in
            guard target != state.target, !state.unavailable else { return nil }
            state.target = target
            guard let target, let deadline else {
                state.timer?.disarm()
                return nil
            }
            do throws(WakeAlarmError) {
                let timer: WakeAlarmTimer
                if let existing = state.timer {
                    timer = existing
                } else {
                    timer = try WakeAlarmTimer()
                    state.timer = timer
                }
                let armed = try timer.arm(at: target)
                return .wakeAlarm(WakeAlarmArmed(firesIn: BootInstant.now.duration(to: armed), bootSeconds: armed.sinceBoot.secondsValue,
                                                 message: WakeAlarmSchedule.message(armed: armed, deadline: deadline, headStart: headStart)))
            } catch {
                state.unavailable = true
                state.timer = nil
                return .warning(Self.warning(error))
            }
        }
        if let note { report(note) }
    }

    /// Disarms and closes the timer (the nap has ended).
    func stop() {
        state.withLock { state in
            state.timer?.disarm()
            state.timer = nil
            state.target = nil
        }
    }

    /// What a missing wake alarm means, and the fix.
    static func warning(_ error: WakeAlarmError) -> String {
        var message: String
        if error.isMissingCapability {
            message = "this process lacks CAP_WAKE_ALARM, so it cannot wake a suspended machine: a suspend will delay the alarm until the machine resumes (the nap still keeps the machine awake where it can); run as root or on a local session with systemd 254 or later, or give the program the capability (`setcap cap_wake_alarm+ep`)"
        } else {
            message = "no wake alarm (\(error)): a suspend will delay the alarm until the machine resumes (the nap still keeps the machine awake where it can)"
        }
        if !WakeAlarmTimer.hasRealTimeClock {
            message += "; this machine also has no real-time clock (\(WakeAlarmTimer.realTimeClockPath)), which waking needs"
        }
        return message
    }
}

/// When a wake alarm fires for an alarm, and what that is called (pure: see ``WakeFromSuspend``).
public enum WakeAlarmSchedule {
    /// When to wake a suspended machine for an alarm at `deadline`: `headStart` before it, or, when
    /// that has passed (a resumed nap, a short nap), the alarm itself, so the wake alarm never fires
    /// after the alarm it is for, nor at once for nothing; `nil` when the alarm is due already (it
    /// rings now: there is nothing to wake for).
    public static func instant(for deadline: BootInstant, now: BootInstant, headStart: Duration) -> BootInstant? {
        let ahead = deadline.advanced(by: .zero - headStart)
        if now < ahead { return ahead }
        return now < deadline ? deadline : nil
    }

    /// Says when the machine wakes, and how long before the alarm that is, from the instant the
    /// kernel holds (less than `headStart` when the alarm was nearer than that).
    public static func message(armed: BootInstant, deadline: BootInstant, headStart: Duration) -> String {
        let lead = armed.duration(to: deadline)
        let when: String
        if lead >= headStart - .milliseconds(1) {
            when = "\(headStart.compactDescription) before the alarm"
        } else if lead > .milliseconds(1) {
            when = "\(String(format: "%.1f", lead.secondsValue)) s before the alarm (it was less than \(headStart.compactDescription) away when armed)"
        } else {
            when = "with the alarm (it was less than \(headStart.compactDescription) away when armed)"
        }
        var message = "a suspended machine wakes at boot+\(armed.sinceBoot.secondsValue.threeDecimals) s (CLOCK_BOOTTIME_ALARM), \(when) at boot+\(deadline.sinceBoot.secondsValue.threeDecimals) s"
        if !WakeAlarmTimer.hasRealTimeClock {
            message += "; but this machine has no real-time clock (\(WakeAlarmTimer.realTimeClockPath)) to wake it: a suspend here delays the alarm until the machine resumes"
        }
        return message
    }
}

/// A wake alarm armed (see ``WakeFromSuspend``), for its `wake_alarm` record.
public struct WakeAlarmArmed: Sendable, Hashable {
    /// How long from when it was read back until it fires.
    public var firesIn: Duration
    /// When it fires, in seconds of CLOCK_BOOTTIME, as the kernel holds it.
    public var bootSeconds: Double
    /// What it means, for people.
    public var message: String

    public init(firesIn: Duration, bootSeconds: Double, message: String) {
        self.firesIn = firesIn
        self.bootSeconds = bootSeconds
        self.message = message
    }
}

extension Double {
    /// `1234.500`.
    fileprivate var threeDecimals: String { String(format: "%.3f", self) }
}

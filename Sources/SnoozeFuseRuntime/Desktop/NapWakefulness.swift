import SnoozeFuseCore
import SnoozeFuseSystem

/// What a nap does beyond its own outputs so that its alarm is heard (SPEC §7, issue 15): it keeps
/// the machine awake from setup until it ends (``KeepAwake``, reason `nap`), arms a wake alarm that
/// resumes a suspended machine for the alarm (``WakeFromSuspend``), and shows the ringing alarm on
/// the desktop (``AlarmNotification``).
///
/// A ``LiveNap`` makes one and feeds it the session's changes and records from its loop; nothing
/// here blocks that loop. Whatever it has to say (a warning once, a `wake_alarm` record) goes to
/// `note`.
final class NapWakefulness: Sendable {
    private let keepAwake: KeepAwake
    private let napHold: KeepAwake.Hold
    private let wake: WakeFromSuspend
    private let notification: AlarmNotification
    private let clock: BootClock

    /// Takes the `nap` hold at once.
    /// - Parameters:
    ///   - snooze, dismissal: the nap's, for the notification's actions.
    ///   - act: what the notification's actions ask (snooze, stop).
    ///   - note: where warnings and `wake_alarm` records go (the nap's notes).
    init(clock: BootClock, snooze: Duration, dismissal: DismissMode, inhibitor: any SleepInhibitor = LogindInhibitor(),
         act: @escaping @Sendable (NotificationAction) -> Void, note: @escaping @Sendable (SessionNote) -> Void) {
        self.clock = clock
        keepAwake = KeepAwake(inhibitor: inhibitor) { note(.warning($0)) }
        napHold = keepAwake.hold(.nap)
        wake = WakeFromSuspend(report: note)
        notification = AlarmNotification(snooze: snooze, dismissal: dismissal, act: act) { note(.warning($0)) }
    }

    /// The session changed (``NapPorts/onChange``): the wake alarm follows its deadline.
    func changed(_ session: Session<BootInstant>) {
        wake.update(session)
    }

    /// A record of the nap (``NapPorts/onRecord``): the notification follows the alarm.
    func follow(_ record: SessionRecord) {
        notification.follow(record)
    }

    /// The nap has ended: the wake alarm goes, the machine may sleep again, and the notification is
    /// closed. Waits for the bus calls this takes, a few seconds at most.
    func finish() async {
        wake.stop()
        napHold.release()
        async let released: Bool = keepAwake.settled(waitingAtMost: .seconds(4), on: clock)
        await notification.finish(on: clock)
        _ = await released
    }
}

public import SnoozeFuseCore
import Foundation
import SnoozeFuseAudio
import Synchronization

/// Wraps an alarm output and sets the system's playback volume (ALSA mixer: `Master`, else `PCM`,
/// else `Speaker`) while it sounds, restoring the old volume when it stops.
///
/// The mixer never holds up the alarm or its end: it is opened and set on a thread of its own after
/// the sound has started, and nothing waits for that. A mixer behind a sound server that does not
/// answer (a stopped PulseAudio) can hang in alsa-lib for ever; then, after ``answerLimit``, a note
/// says the alarm sounds at the volume it has, and if the mixer answers after the alarm has
/// stopped, the thread puts the old volume straight back. Restoring waits at most
/// ``restoreLimit``. When the mixer cannot be opened (no sound card, no server) a note says so and
/// the alarm sounds anyway. Each note is said once. With `percent == nil` it only forwards.
public actor SystemVolumeDuringAlarm: AlarmOutput {
    public static let answerLimit = Duration.seconds(1)
    public static let restoreLimit = Duration.milliseconds(500)

    private let percent: Int?
    /// The mixer it attaches to: the default card's (on a desktop, the sound server's).
    private let card = "default"
    private let base: any AlarmOutput
    private let notes: OnceNotes
    private var change: MixerChange?
    private let scheduling: AlarmScheduling

    /// `scheduling`: where its tasks run and what its waits are timed on (pass the nap's).
    public init(percent: Int?, base: any AlarmOutput,
                scheduling: AlarmScheduling = AlarmScheduling(), note: @escaping @Sendable (String) -> Void) {
        self.percent = percent
        self.scheduling = scheduling
        self.base = base
        notes = OnceNotes(note)
    }

    public func arm(reason: AlarmReason, after delay: Duration) async {
        await base.arm(reason: reason, after: delay)
    }

    public func start(reason: AlarmReason) async -> AlarmStartReport {
        // Sound first: the mixer must never delay the alarm.
        let report = await base.start(reason: reason)
        if let percent, change == nil {
            let started = MixerChange.start(percent: percent, card: card, notes: notes)
            change = started
            let card = card, notes = notes, clock = scheduling.clock
            scheduling.task {
                try? await clock.sleep(for: Self.answerLimit)
                if started.isPending {
                    notes.say("--system-volume waits: the mixer '\(card)' has not answered within \(Self.answerLimit.compactDescription) (its sound server may be stopped or hung); the alarm sounds at the volume it has")
                }
            }
        }
        return report
    }

    public func stop() async {
        await base.stop()
        guard let change else { return }
        self.change = nil
        let restoring = onItsOwnThread(named: "snoozefuse-mixer", scheduling: scheduling) { change.restore() }
        if await value(of: restoring, waitingAtMost: Self.restoreLimit, scheduling: scheduling) == nil {
            notes.say("--system-volume: the mixer '\(card)' did not answer within \(Self.restoreLimit.compactDescription) when the alarm stopped; the volume is restored if it answers later, and is otherwise left at \(percent ?? 0) %")
        }
    }
}

/// One setting of the system volume, from its own thread: pending until the mixer answers, then
/// applied (or failed); restored once.
private final class MixerChange: Sendable {
    private enum State {
        case pending
        /// Stopped before the mixer answered: the thread restores as soon as it has set the volume.
        case abandoned
        case applied(MixerHandle)
        case done
    }

    private let state = Mutex(State.pending)

    var isPending: Bool { state.withLock { if case .pending = $0 { true } else { false } } }

    static func start(percent: Int, card: String, notes: OnceNotes) -> MixerChange {
        let change = MixerChange()
        let thread = Thread {
            let mixer: MixerHandle
            do throws(ALSAError) {
                let opened = try SystemMixerVolume(card: card)
                try opened.set(percent: percent)
                mixer = MixerHandle(opened)
            } catch {
                change.state.withLock { $0 = .done }
                notes.say("--system-volume skipped: the ALSA mixer is not available (\(error.code)\(error.detail.map { ", \($0)" } ?? ""))")
                return
            }
            let restoreNow = change.state.withLock { state -> Bool in
                if case .abandoned = state { state = .done; return true }
                state = .applied(mixer)
                return false
            }
            if restoreNow { mixer.restore() }
        }
        thread.name = "snoozefuse-mixer"
        thread.start()
        return change
    }

    /// Puts the old volume back now if it was set, or as soon as it is if the mixer has not answered.
    /// Blocks while the mixer's calls do.
    func restore() {
        let mixer = state.withLock { state -> MixerHandle? in
            switch state {
            case .pending: state = .abandoned; return nil
            case .applied(let mixer): state = .done; return mixer
            case .abandoned, .done: return nil
            }
        }
        mixer?.restore()
    }
}

/// The mixer, handed from the thread that opened it to the one that restores it: only one of them
/// touches it at a time (the hand-over goes through `MixerChange`'s lock).
private final class MixerHandle: @unchecked Sendable {
    private let mixer: SystemMixerVolume
    init(_ mixer: SystemMixerVolume) { self.mixer = mixer }
    func restore() { mixer.restore() }
}

/// Passes each distinct note on once.
private final class OnceNotes: Sendable {
    private let said = Mutex(Set<String>())
    private let note: @Sendable (String) -> Void
    init(_ note: @escaping @Sendable (String) -> Void) { self.note = note }

    func say(_ text: String) {
        if said.withLock({ $0.insert(text).inserted }) { note(text) }
    }
}

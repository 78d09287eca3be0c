import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
public import SnoozeFuseSystem

/// `sounds play`: a sound played as the alarm would be (the same device chain, volume and fade),
/// for a set length, on the command's event loop. Its records (the alarm with its lateness, output
/// changes) come out of ``records``, stamped from the start of the preview.
public final class SoundPreview: Sendable {
    /// What plays, for messages: the name asked for and its file, a path, or the built-in tone.
    public let soundDescription: String
    /// How long it plays.
    public let length: Duration
    public let records: AsyncStream<SessionRecord>
    private let feed: AsyncStream<SessionRecord>.Continuation
    private let output: AudioAlarmOutput
    /// The PCM asked for.
    private let device: String
    private let loop: EventLoop

    /// - Parameters:
    ///   - sound: a built-in's or imported sound's name, or a path; nil for the synthesized tone.
    ///   - duration: how long to play (default: one pass of the file, at most 30 s; 3 s for the tone).
    public init(sound: String?, volume: Int, fadeIn: Duration, device: String, duration: Duration?,
                loop: EventLoop, message: @escaping @Sendable (String) -> Void) throws(NapSetupError) {
        let chosen: AlarmSound = try sound.map { (name: String) throws(NapSetupError) -> AlarmSound in
            try AlarmSoundChoice.resolve(name, notice: message)
        } ?? .builtInTone
        try AlarmSoundChoice.check(chosen)
        var length = Duration.seconds(3)
        if let path = chosen.readablePath, let info = try? SoundFile(readingAtPath: path).info {
            length = min(info.duration, .seconds(30))
        }
        self.length = duration ?? length
        // The name the person gave ("my bell"), then the file it is (a hashed name in the library).
        soundDescription = sound.map { name in name == "\(chosen)" ? name : "\"\(name)\" (\(chosen))" } ?? "\(chosen)"
        self.loop = loop
        let settings = AlarmPlaybackSettings(sound: chosen, gain: AlarmGain(percent: volume, fadeIn: fadeIn))
        let bell = TerminalBellAlarm(isTerminal: isatty(STDERR_FILENO) == 1, usesColour: false, hint: "(preview)", loop: loop)
        output = AudioAlarmOutput(device: device, settings: settings, fallback: bell, loop: loop)
        self.device = device
        (records, feed) = AsyncStream.makeStream(of: SessionRecord.self, bufferingPolicy: .unbounded)
    }

    /// Plays for ``length`` once the output has started, then stops; ``records`` ends when it has.
    public func run() async {
        let clock = loop.clock
        let origin = clock.now
        let feed = feed, output = output
        func stamped(_ kind: SessionRecord.Kind, message: String? = nil) -> SessionRecord {
            SessionRecord(kind, elapsed: origin.duration(to: clock.now), wall: Date(), message: message)
        }
        let changes = Task(executorPreference: loop) {
            for await change in output.outputChanges {
                var record = stamped(.output, message: change.message)
                record.output = change.output
                feed.yield(record)
            }
        }
        // As a nap does once asleep: what the set-up touched (the command, the checks) goes back
        // before the sound starts, and a long preview holds only what playing runs (issue 23).
        // Then alsa-lib's hooks for the device run (see ALSAConfiguration), and what they loaded
        // goes back too: after the set-up's pages, so that the two never add up. A hook that
        // blocks holds the preview up for a second at most, and the device's open then meets it
        // as it would have; its libraries are left alone then (a give-back must not race a
        // library being loaded or unloaded).
        SetUpMemory.giveBack()
        let device = device
        let prepared = await BoundedCall.start(named: "snoozefuse-alsa-conf") { ALSAConfiguration.prepare(device: device) }
            .value(waitingAtMost: .seconds(1), on: clock)
        if prepared != nil { SetUpMemory.giveBack() }
        let report = await output.start(reason: .nap)
        for fallback in report.fallbacks {
            var record = stamped(.output, message: fallback)
            record.output = report.output
            feed.yield(record)
        }
        var started = stamped(.alarm)
        started.output = report.output
        started.latenessMs = report.lateness.map(SessionRecord.milliseconds)
        feed.yield(started)
        // The length is heard from the first frame on: opening the device and preparing the sound
        // (a built-in one is synthesised) come before it and are not counted.
        try? await clock.sleep(until: clock.now.advanced(by: length))
        await output.stop()
        await output.finish()
        await changes.value
        feed.finish()
    }
}

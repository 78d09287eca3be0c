import ArgumentParser
import SnoozeFuseRuntime

/// `nap --source ID[:key=value,...]` and repeatable `--emitter ID[:key=value,...]`.
struct PluginNapOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Play the alarm from a sound-source plugin (`snoozefuse plugins list`); the built-in tone takes over if it fails or crashes.", valueName: "id[:key=value,...]"))
    var source: String?

    @Option(name: .customLong("emitter"), help: ArgumentHelp("Send the heartbeat (while you hold) and the alarm pattern (while it rings) to a pulse-emitter plugin (repeatable).", valueName: "id[:key=value,...]"))
    var emitters: [String] = []

    @Option(help: ArgumentHelp("Heartbeat for emitters while you hold, in beats per minute (40–120).", valueName: "n"))
    var bpm: Int = 60

    @Option(name: .customLong("sleep-sound"), help: ArgumentHelp("Play a sound-source plugin while you drift off and nap, e.g. noise or noise:color=brown; it fades out and falls silent 3 s before the alarm. If it fails you nap in silence.", valueName: "id[:key=value,...]"))
    var sleepSound: String?

    @Option(name: .customLong("sleep-volume"), help: ArgumentHelp("Sleep sound volume, 0–100, applied on top of the plugin's own level (noise: volume=0.3).", valueName: "percent"))
    var sleepVolume: Int = 60

    @Option(name: .customLong("sleep-device"), help: ArgumentHelp("ALSA PCM for the sleep sound (default: the alarm's --device).", valueName: "pcm"))
    var sleepDevice: String?

    func validate() throws {
        guard (40...120).contains(bpm) else {
            throw ValidationError("--bpm \(bpm) is out of range: use 40 to 120 beats per minute.")
        }
        guard (0 ... 100).contains(sleepVolume) else {
            throw ValidationError("--sleep-volume must be 0–100, not \(sleepVolume).")
        }
        if sleepDevice?.isEmpty == true {
            throw ValidationError("--sleep-device needs a PCM name (`snoozefuse devices` lists them).")
        }
        for text in (source.map { [$0] } ?? []) + (sleepSound.map { [$0] } ?? []) + emitters where !PluginCatalog.isSpec(text) {
            throw ValidationError("\"\(text)\" is not a plugin: expected ID or ID:key=value,...")
        }
    }
}

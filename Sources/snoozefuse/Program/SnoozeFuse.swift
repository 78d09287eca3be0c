import ArgumentParser
import SnoozeFuseRuntime

struct SnoozeFuse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snoozefuse",
        abstract: "A nap timer and alarm engine that cannot fail silently.",
        discussion: """
        Start a nap, let the release timer run out as you fall asleep, and wake to an alarm. \
        The alarm rings when the nap ends or, at the latest, when the max failsafe passes, and it \
        keeps ringing until you stop it or the ring limit passes.

        Examples:
          snoozefuse nap --no-hold                  (30s release, 20m nap, 30m max)
          snoozefuse nap --no-hold --nap 25m --max 40m
          snoozefuse nap --preset quick-test --no-hold --ring-limit 3s --events jsonl

        Exit codes: 0 alarm dismissed or ring limit reached, 1 cancelled (for stop, snooze and add: \
        nothing changed), 64 usage error, \
        65 bad sound data, 66 missing input, 69 no usable output (or, for import, no libcrypto), \
        70 internal error, 75 another nap is running, 78 bad configuration, 130 interrupted (Ctrl-C).
        """,
        version: ProgramVersion.text,
        subcommands: [Nap.self, Status.self, Stop.self, Snooze.self, Add.self, Resume.self, Presets.self, Config.self, History.self,
                      Sounds.self, Plugins.self, Devices.self, Doctor.self, GuardianCommand.self]
    )
}

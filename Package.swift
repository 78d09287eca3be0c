// swift-tools-version: 6.0
import PackageDescription

/// Settings every first-party Swift target shares: Swift 6 language mode (strict concurrency) is the
/// package default; these add existential spelling and explicit `Sendable` decisions on public types.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .unsafeFlags(["-require-explicit-sendable"]),
]

/// The settings of the code the small programs (the guardian, the plugin host) link: no implicit
/// `_StringProcessing` (regular expressions), whose type metadata the linker must keep whole once
/// any of it is used (1.4 MB of code and the Unicode name tables in each program). A use of its
/// `contains`/`split` on strings then fails to compile; the core has its own.
let smallProgramSettings: [SwiftSetting] = strictSettings + [
    .unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import"]),
]

/// The lazily linked C libraries' trampolines (see the C libraries below).
let lazyLinkSettings: [CSetting] = [.unsafeFlags(["-gdwarf-4"])]

let package = Package(
    name: "snoozefuse",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "snoozefuse", targets: ["snoozefuse"]),
        // The only program that loads plugins: each plugin instance of a nap runs in a child of it.
        .executable(name: "snoozefuse-plugin-host", targets: ["snoozefuse-plugin-host"]),
        .executable(name: "snoozefuse-guardian", targets: ["snoozefuse-guardian"]),
        .library(name: "SnoozeFuseCore", targets: ["SnoozeFuseCore"]),
        // MARK: Built-in plugins: dynamic libraries that see only the plugin ABI header
        .library(name: "snoozefuse-tone", type: .dynamic, targets: ["SnoozeFuseTonePlugin"]),
        .library(name: "snoozefuse-noise", type: .dynamic, targets: ["SnoozeFuseNoisePlugin"]),
        .library(name: "snoozefuse-terminal", type: .dynamic, targets: ["SnoozeFuseTerminalPlugin"]),
        .library(name: "snoozefuse-command", type: .dynamic, targets: ["SnoozeFuseCommandPlugin"]),
        .library(name: "snoozefuse-led", type: .dynamic, targets: ["SnoozeFuseLEDPlugin"]),
        .library(name: "snoozefuse-rumble", type: .dynamic, targets: ["SnoozeFuseRumblePlugin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // MARK: C libraries, each linked on first use instead of at start-up (issue 23): a C target
        // of hidden trampolines (lazy.c, from CLazyLink's template) that load the library (dlopen)
        // at its first call; its headers (the Debian -dev packages of Scripts/apt-packages.txt) at
        // build time, the library itself when a command first needs it. `status`, `stop` or
        // `--version` load none of them.
        // (DWARF 4: valgrind 3.19, which the benchmarks' profiles use, cannot read clang's DWARF 5
        // line tables of the trampolines' assembly and refuses the whole program.)
        .target(name: "CLazyLink", cSettings: lazyLinkSettings),
        // libsndfile: reading, checking and writing sound files.
        .target(name: "CSndFile", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        // alsa-lib: the PCM the alarm is written to, card mixers, device lists.
        .target(name: "CALSA", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        .systemLibrary(name: "CLinux"),
        // libsamplerate: the alarm renderer's resampler.
        .target(name: "CSampleRate", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        // libebur128: a sound's loudness (EBU R 128), which every alarm sound is brought to.
        .target(name: "CEbur128", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        // libpulse: the alarm's own streams on the sound server (PulseAudio, or PipeWire through
        // pipewire-pulse), its sinks' mute and volume, and their monitors.
        .target(name: "CPulse", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        // sd-bus: logind's inhibitor (keep-awake) and the desktop's notifications.
        .target(name: "CSystemd", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        // libwayland-client: the desktop's idleness from a Wayland compositor (--hold desktop), with
        // the protocols' code (protocols/, Scripts/wayland-protocols.sh).
        .target(name: "CWayland", dependencies: ["CLazyLink"], cSettings: lazyLinkSettings),
        // SQLite, under GRDB: the store's database. GRDB's own module asks the linker for sqlite3;
        // link/libsqlite3.so, a linker script found first, makes that "as needed", and nothing
        // needs it once every function GRDB calls is a trampoline here.
        .target(name: "CSQLite", dependencies: ["CLazyLink"], exclude: ["link"], cSettings: lazyLinkSettings,
                linkerSettings: [.unsafeFlags(["-L\(Context.packageDirectory)/Sources/CSQLite/link"])]),

        // MARK: Plugin ABI (header only; its one .c file holds layout checks) and built-in plugins
        .target(name: "SnoozeFusePluginABI"),
        .target(name: "SnoozeFuseTonePlugin", dependencies: ["SnoozeFusePluginABI"], path: "Plugins/tone", publicHeadersPath: ".",
                linkerSettings: [.linkedLibrary("m")]),
        .target(name: "SnoozeFuseNoisePlugin", dependencies: ["SnoozeFusePluginABI"], path: "Plugins/noise", publicHeadersPath: "."),
        .target(name: "SnoozeFuseTerminalPlugin", dependencies: ["SnoozeFusePluginABI"], path: "Plugins/terminal", publicHeadersPath: "."),
        .target(name: "SnoozeFuseCommandPlugin", dependencies: ["SnoozeFusePluginABI"], path: "Plugins/command", publicHeadersPath: ".",
                linkerSettings: [.linkedLibrary("pthread")]),
        .target(name: "SnoozeFuseLEDPlugin", dependencies: ["SnoozeFusePluginABI"], path: "Plugins/led", publicHeadersPath: "."),
        .target(name: "SnoozeFuseRumblePlugin", dependencies: ["SnoozeFusePluginABI"], path: "Plugins/rumble", publicHeadersPath: "."),

        // MARK: Pure core: no C, no I/O
        .target(
            name: "SnoozeFuseCore",
            swiftSettings: smallProgramSettings
        ),

        // MARK: The process's machinery: one event loop (executor + boot-time clock), one bounded
        // call, threads, file descriptors, D-Bus calls, the wake alarm, a Wayland compositor's idle
        // notification
        .target(
            name: "SnoozeFuseSystem",
            dependencies: ["CLinux", "CSystemd", "CWayland"],
            swiftSettings: smallProgramSettings
        ),

        // MARK: Edges
        .target(
            name: "SnoozeFuseCAF",
            swiftSettings: strictSettings
        ),
        .target(
            name: "SnoozeFuseAudio",
            dependencies: ["SnoozeFuseCore", "SnoozeFuseSystem", "CSndFile", "CALSA", "CSampleRate", "CPulse", "CEbur128"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SnoozeFusePluginHost",
            dependencies: [
                "SnoozeFusePluginABI", "SnoozeFuseSystem", "SnoozeFuseCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: smallProgramSettings
        ),
        // The idle half of a nap's guardian: waits with nothing but the Swift runtime and the pure
        // core, then becomes `snoozefuse guardian` (no Foundation, no other package: issue 23).
        .executableTarget(
            name: "snoozefuse-guardian",
            dependencies: ["SnoozeFuseCore"],
            swiftSettings: smallProgramSettings
        ),
        .executableTarget(
            name: "snoozefuse-plugin-host",
            dependencies: ["SnoozeFusePluginHost", "CPluginProbe", .product(name: "Logging", package: "swift-log")],
            swiftSettings: smallProgramSettings
        ),
        // The validator's watch on a plugin's render (a seccomp filter that traps and counts system
        // calls, and a malloc that counts): linked into snoozefuse-plugin-host only, since it replaces
        // malloc for the whole process.
        .target(name: "CPluginProbe"),
        .target(
            name: "SnoozeFuseStore",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"), "CSQLite"],
            swiftSettings: strictSettings
        ),
        // Sound library: validation, repair, import into the store, export (between the CLI and Audio/Store).
        .target(
            name: "SnoozeFuseSoundLibrary",
            dependencies: ["SnoozeFuseAudio", "SnoozeFuseCAF", "SnoozeFuseStore", "CLinux"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SnoozeFuseRuntime",
            dependencies: [
                "SnoozeFuseCore", "SnoozeFuseSystem", "SnoozeFuseAudio", "SnoozeFusePluginHost",
                "SnoozeFuseSoundLibrary", "SnoozeFuseStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: CLI (thin: parse, call, print)
        .executableTarget(
            name: "snoozefuse",
            dependencies: [
                "SnoozeFuseCore", "SnoozeFuseRuntime", "SnoozeFuseSoundLibrary",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // Renders the built-in alarm sounds into Sounds/ (`make sounds`).
        .executableTarget(
            name: "snoozefuse-make-sounds",
            dependencies: ["SnoozeFuseAudio"],
            path: "Tools/MakeSounds",
            swiftSettings: strictSettings
        ),

        // MARK: Test support (controllable doubles, like NIOEmbedded) and tests
        .target(
            name: "SnoozeFuseTestSupport",
            dependencies: ["SnoozeFuseSystem"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseCoreTests",
            dependencies: [
                "SnoozeFuseCore", "SnoozeFuseTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseRuntimeTests",
            dependencies: ["SnoozeFuseRuntime", "SnoozeFuseCore", "SnoozeFuseAudio", "SnoozeFuseSystem", "SnoozeFuseTestSupport", "snoozefuse"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseSystemTests",
            dependencies: ["SnoozeFuseSystem", "SnoozeFuseTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseAudioTests",
            dependencies: ["SnoozeFuseAudio", "SnoozeFuseSystem", "SnoozeFuseTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseALSATests",
            dependencies: ["SnoozeFuseAudio", "CALSA", "SnoozeFuseSystem", "SnoozeFuseTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseCAFTests",
            dependencies: ["SnoozeFuseCAF", "SnoozeFuseAudio", "CSndFile", "SnoozeFuseTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFusePluginTests",
            dependencies: [
                "SnoozeFusePluginHost", "SnoozeFuseCore", "SnoozeFuseRuntime", "SnoozeFuseAudio", "SnoozeFuseSystem", "SnoozeFuseTestSupport",
                "snoozefuse", "snoozefuse-plugin-host",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseSoundLibraryTests",
            dependencies: [
                "SnoozeFuseSoundLibrary", "SnoozeFuseStore", "SnoozeFuseAudio", "SnoozeFuseCAF", "SnoozeFuseCore",
                "SnoozeFuseTestSupport", "snoozefuse",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseStoreTests",
            dependencies: ["SnoozeFuseStore", "SnoozeFuseTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SnoozeFuseCLITests",
            dependencies: ["snoozefuse", "snoozefuse-plugin-host", "snoozefuse-guardian", "SnoozeFuseSystem", "SnoozeFuseTestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)

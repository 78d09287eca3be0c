import SnoozeFuseCore
import SnoozeFuseSystem

/// `--hold key` with a true key-up: the keyboards among `/dev/input/event*` that this user may read
/// (the `input` group, or root), asked which keys are down (`EVIOCGKEY`) while a hold lasts, every
/// 20 ms on a thread of its own; the held key's going up is sent to the nap as ``KeyInput/released``
/// (see ``KeyRelease``). The devices are opened read-only and never grabbed, and no event is read
/// from them: a key's state is all that is asked, and only the held key's is used.
/// Once the nap has started no hold can come again: the devices are closed then.
final class EvdevKeyRelease: Sendable {
    /// Each keyboard's path and name (`/dev/input/event3`, `AT Translated Set 2 keyboard`).
    let keyboards: [(path: String, name: String)]
    private let state: Locked<Running>

    private struct Running {
        /// Bumped at every hold: a thread of an earlier hold sees it changed and ends.
        var generation = 0
        var holding = false
        /// Open until the nap starts.
        var devices: [InputDevice]
    }

    private init(keyboards: [InputDevice]) {
        self.keyboards = keyboards.map { ($0.path, $0.name) }
        state = Locked(Running(devices: keyboards))
    }

    /// `KEY_A` of linux/input-event-codes.h: a device with it is a keyboard.
    static let keyA = 30

    /// The readable keyboards among `paths` (every `/dev/input/event*` when nil), or why none.
    static func open(paths: [String]? = nil) -> Result<EvdevKeyRelease, KeyReleaseUnavailable> {
        let candidates = paths ?? InputDevice.eventNodes()
        guard !candidates.isEmpty else {
            return .failure(KeyReleaseUnavailable(reason: "no input devices in /dev/input (a container or a remote session)"))
        }
        var keyboards: [InputDevice] = []
        var refused = 0
        for path in candidates {
            do throws(InputDevice.OpenFailure) {
                let device = try InputDevice(path: path)
                if device.has(key: keyA) { keyboards.append(device) }
            } catch {
                if error == .refused { refused += 1 }
            }
        }
        guard !keyboards.isEmpty else {
            let reason = refused == 0
                ? "no keyboard among \(candidates.count) input device(s)"
                : "\(refused) input device(s) in /dev/input may not be read by this user (add yourself to the input group: `sudo adduser $USER input`, then log in again)"
            return .failure(KeyReleaseUnavailable(reason: reason))
        }
        return .success(EvdevKeyRelease(keyboards: keyboards))
    }

    /// For the `hold` event and `doctor`: where the key's release is read.
    var description: String {
        "the key's release is read from \(keyboards.map { "\($0.path) (\($0.name))" }.joined(separator: ", ")) (evdev)"
    }

    /// The keys down now on any of the keyboards (none once they are closed).
    func keysDown() -> Set<UInt16> {
        let devices = state.withLock { $0.devices }
        return devices.reduce(into: Set<UInt16>()) { $0.formUnion($1.keysDown()) }
    }

    /// Follows the nap's phases: a hold (phase `holding`) starts watching its key, any other phase
    /// stops it. `send` gets ``KeyInput/released`` when the held key comes up; `note` a `hold` note
    /// when a hold is left to the terminal's release gap, and why.
    func follow(_ record: SessionRecord, send: @escaping @Sendable (NapCommand) -> Void, note: @escaping @Sendable (SessionNote) -> Void) {
        guard record.event == .phase, let phase = record.phase else { return }
        let generation: Int? = state.withLock { running in
            guard phase == .holding else {
                running.holding = false
                running.generation += 1
                if ![.ready, .releasing].contains(phase) { running.devices = [] }
                return nil
            }
            guard !running.holding else { return nil }
            running.holding = true
            running.generation += 1
            return running.generation
        }
        guard let generation else { return }
        SystemThread.start(named: "snoozefuse-keyup") { [self] in
            var release = KeyRelease<BootInstant>()
            var next: BootInstant? = release.holdBegan(at: BootInstant.now)
            let current = { self.state.withLock { $0.generation == generation } }
            while let due = next {
                guard SystemThread.sleep(until: due, unless: { !current() }) else { return }
                let step = release.sample(keysDown: keysDown(), at: BootInstant.now)
                if step.released, current() { send(.key(.released)) }
                if let gap = step.leftToTheGap, current() { note(.hold(what: .key, message: Self.gapMessage(gap))) }
                next = step.next
            }
        }
    }
}

extension EvdevKeyRelease {
    /// What a hold left to the terminal's release gap says (shown with `--verbose`).
    static func gapMessage(_ gap: KeyRelease<BootInstant>.Gap) -> String {
        let why = switch gap {
        case .noKeyDown: "no key was down on the keyboards read (typed over SSH, or on a keyboard this user may not read)"
        case .severalKeysDown: "several keys were down (a stuck key, or another keyboard): which one is held is not known"
        }
        return "this hold's release is taken 0.75 s after the key's autorepeat stops: \(why)"
    }
}

/// Why a key's true release cannot be read here (the terminal's release gap is used instead).
struct KeyReleaseUnavailable: Error, Sendable, Hashable {
    var reason: String
}

import CLinux
import Glibc
import SnoozeFuseCore
import SnoozeFuseSystem

/// `--hold key` with a true key-up: the keyboards among `/dev/input/event*` that this user may read
/// (the `input` group, or root), asked which keys are down (`EVIOCGKEY`) while a hold lasts, every
/// 20 ms on a thread of its own; the held key's going up is sent to the nap as ``KeyInput/released``
/// (see ``KeyRelease``). The devices are opened read-only and never grabbed, and no event is read
/// from them: a key's state is all that is asked, and only the held key's is used.
final class EvdevKeyRelease: Sendable {
    struct Keyboard: Sendable {
        let fd: Int32
        let path: String
        let name: String
    }

    let keyboards: [Keyboard]
    private let state = Locked(Running())

    private struct Running {
        /// Bumped at every hold: a thread of an earlier hold sees it changed and ends.
        var generation = 0
        var holding = false
    }

    private init(keyboards: [Keyboard]) {
        self.keyboards = keyboards
    }

    deinit {
        for keyboard in keyboards { close(keyboard.fd) }
    }

    /// `KEY_A` of linux/input-event-codes.h: a device with it is a keyboard.
    static let keyA = 30
    /// Bytes of a key bitmap (`KEY_CNT` = 0x300 bits).
    static let keyBytes = 0x300 / 8

    /// The readable keyboards among `paths` (every `/dev/input/event*` when nil), or why none.
    static func open(paths: [String]? = nil) -> Result<EvdevKeyRelease, KeyReleaseUnavailable> {
        let candidates = paths ?? eventNodes()
        guard !candidates.isEmpty else {
            return .failure(KeyReleaseUnavailable(reason: "no input devices in /dev/input (a container or a remote session)"))
        }
        var keyboards: [Keyboard] = []
        var refused: [String] = []
        for path in candidates {
            let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else {
                if errno == EACCES || errno == EPERM { refused.append(path) }
                continue
            }
            var capabilities = [UInt8](repeating: 0, count: keyBytes)
            let answered = snoozefuse_evdev_key_capabilities(fd, &capabilities, Int32(keyBytes))
            guard answered > keyA / 8, capabilities[keyA / 8] & UInt8(1 << (keyA % 8)) != 0 else {
                close(fd)
                continue
            }
            var name = [CChar](repeating: 0, count: 128)
            _ = snoozefuse_evdev_name(fd, &name, Int32(name.count - 1))
            let bytes = name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            keyboards.append(Keyboard(fd: fd, path: path, name: String(decoding: bytes, as: UTF8.self)))
        }
        guard !keyboards.isEmpty else {
            let reason = refused.isEmpty
                ? "no keyboard among \(candidates.count) input device(s)"
                : "\(refused.count) input device(s) in /dev/input may not be read by this user (add yourself to the input group: `sudo adduser $USER input`, then log in again)"
            return .failure(KeyReleaseUnavailable(reason: reason))
        }
        return .success(EvdevKeyRelease(keyboards: keyboards))
    }

    /// `/dev/input/event0` … in order.
    private static func eventNodes() -> [String] {
        guard let folder = opendir("/dev/input") else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("event") { names.append(name) }
        }
        return names.sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }.map { "/dev/input/\($0)" }
    }

    /// For the `hold` event and `doctor`: where the key's release is read.
    var description: String {
        "the key's release is read from \(keyboards.map { "\($0.path) (\($0.name))" }.joined(separator: ", ")) (evdev)"
    }

    /// The keys down now on any of the keyboards (a keyboard that stops answering counts none).
    func keysDown() -> Set<UInt16> {
        var down: Set<UInt16> = []
        var bits = [UInt8](repeating: 0, count: Self.keyBytes)
        for keyboard in keyboards {
            for index in bits.indices { bits[index] = 0 }
            let answered = Int(snoozefuse_evdev_keys_down(keyboard.fd, &bits, Int32(Self.keyBytes)))
            guard answered > 0 else { continue }
            for byte in 0 ..< min(answered, Self.keyBytes) where bits[byte] != 0 {
                for bit in 0 ..< 8 where bits[byte] & UInt8(1 << bit) != 0 { down.insert(UInt16(byte * 8 + bit)) }
            }
        }
        return down
    }

    /// Follows the nap's phases: a hold (phase `holding`) starts watching its key, any other phase
    /// stops it. `send` gets ``KeyInput/released`` when the held key comes up.
    func follow(_ record: SessionRecord, send: @escaping @Sendable (NapCommand) -> Void) {
        guard record.event == .phase, let phase = record.phase else { return }
        let generation: Int? = state.withLock { running in
            guard phase == .holding else {
                running.holding = false
                running.generation += 1
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
                next = step.next
            }
        }
    }
}

/// Why a key's true release cannot be read here (the terminal's release gap is used instead).
struct KeyReleaseUnavailable: Error, Sendable, Hashable {
    var reason: String
}

import CLinux
import Glibc

/// An evdev input device (`/dev/input/eventN`), opened read-only and never grabbed, for what a
/// held key's true release needs: whether it has a key, its name, and which keys are down now
/// (`EVIOCGKEY`). No event is ever read from it. Closed when the value goes away.
public final class InputDevice: Sendable {
    public let path: String
    /// The device's own name (`AT Translated Set 2 keyboard`).
    public let name: String
    private let descriptor: Int32

    /// Bytes of a key bitmap (`KEY_CNT` = 0x300 bits).
    private static let keyBytes = 0x300 / 8

    /// Why a device could not be opened.
    public enum OpenFailure: Error, Sendable, Hashable {
        /// This user may not read it (the `input` group, or root, may).
        case refused
        /// Missing, or not an input device (its ioctls fail).
        case unusable
    }

    /// Opens `path` (non-blocking, close-on-exec: nothing the nap starts inherits it).
    public init(path: String) throws(OpenFailure) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw errno == EACCES || errno == EPERM ? .refused : .unusable }
        var name = [CChar](repeating: 0, count: 128)
        guard snoozefuse_evdev_name(descriptor, &name, Int32(name.count - 1)) >= 0 else {
            close(descriptor)
            throw .unusable
        }
        self.path = path
        self.descriptor = descriptor
        self.name = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        close(descriptor)
    }

    /// Whether the device has `key` (a keyboard has KEY_A, 30).
    public func has(key: Int) -> Bool {
        var bits = [UInt8](repeating: 0, count: Self.keyBytes)
        let answered = Int(snoozefuse_evdev_key_capabilities(descriptor, &bits, Int32(Self.keyBytes)))
        return key >= 0 && answered > key / 8 && bits[key / 8] & UInt8(1 << (key % 8)) != 0
    }

    /// The keys down now (none when the device stops answering: unplugged).
    public func keysDown() -> Set<UInt16> {
        var bits = [UInt8](repeating: 0, count: Self.keyBytes)
        let answered = Int(snoozefuse_evdev_keys_down(descriptor, &bits, Int32(Self.keyBytes)))
        var down: Set<UInt16> = []
        for byte in 0 ..< max(0, min(answered, Self.keyBytes)) where bits[byte] != 0 {
            for bit in 0 ..< 8 where bits[byte] & UInt8(1 << bit) != 0 { down.insert(UInt16(byte * 8 + bit)) }
        }
        return down
    }

    /// `/dev/input/event0`, `event1` … in numeric order.
    public static func eventNodes(in folder: String = "/dev/input") -> [String] {
        let names = (FolderEntries.names(in: folder) ?? []).filter { $0.hasPrefix("event") }
        return names.sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }.map { "\(folder)/\($0)" }
    }
}

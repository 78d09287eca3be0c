import Foundation
import Glibc
import Testing
import SnoozeFuseTestSupport
@testable import SnoozeFuseRuntime

/// `--hold key`'s true release against the kernel's evdev: a virtual keyboard made through
/// /dev/uinput (Fixtures/uinput_device.c, `keys`), whose KEY_A the test presses and lets go.
@Suite("A held key's release read from a keyboard device (evdev)")
struct KeyReleaseDeviceTests {
    static let unavailable: String? = uinputUnavailable.map { _ in
        "no virtual keyboard can be made here: /dev/uinput is missing or cannot be opened for reading and writing, so the key-up of a real input device cannot be read"
    }

    @Test(.disabled(if: unavailable != nil, Comment(rawValue: unavailable ?? "")))
    func theKeyStateOfAVirtualKeyboardShowsItsKeyDownAndThenUp() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        let keyboard = try VirtualInputDevice(kind: "keys", folder: folder)
        defer { keyboard.stop() }
        let reader = try EvdevKeyRelease.open(paths: [keyboard.path]).get()
        #expect(reader.keyboards.map { $0.name } == ["snoozefuse test keys"])
        #expect(!reader.keysDown().contains(30))
        try keyboard.key(down: true)
        #expect(reader.keysDown() == [30], "KEY_A is down")
        try keyboard.key(down: false)
        #expect(reader.keysDown().isEmpty, "and up again")
    }

    @Test func withoutAKeyboardItSaysWhy() throws {
        let folder = try PluginFolder()
        defer { folder.cleanUp() }
        // A file is no input device: its ioctl fails (ENOTTY).
        let file = folder.path + "/not-a-device"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        guard case .failure(let notKeyboard) = EvdevKeyRelease.open(paths: [file]) else {
            Issue.record("a plain file was taken for a keyboard")
            return
        }
        #expect(notKeyboard.reason == "no keyboard among 1 input device(s)")
        guard case .failure(let none) = EvdevKeyRelease.open(paths: []) else {
            Issue.record("no devices was taken for a keyboard")
            return
        }
        #expect(none.reason.hasPrefix("no input devices in /dev/input"))
    }
}

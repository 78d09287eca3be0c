import SnoozeFuseSystem
import Testing

/// The socket file read from a D-Bus address, so that a bus that is not there is said without
/// loading sd-bus; anything it cannot read exactly is left to sd-bus (nil).
@Suite struct BusAddressTests {
    @Test func onePlainUnixPathIsItsFile() {
        #expect(BusKind.socketPath(inAddress: "unix:path=/run/user/1000/bus") == "/run/user/1000/bus")
        #expect(BusKind.socketPath(inAddress: "unix:path=/run/dbus/system_bus_socket;") == "/run/dbus/system_bus_socket")
        #expect(BusKind.socketPath(inAddress: "unix:path=/tmp/b,guid=0123456789abcdef0123456789abcdef") == "/tmp/b")
        #expect(BusKind.socketPath(inAddress: "unix:guid=0123,path=/tmp/b") == "/tmp/b")
    }

    @Test func escapesAreUndone() {
        #expect(BusKind.socketPath(inAddress: "unix:path=/tmp/with%20space/bus") == "/tmp/with space/bus")
        #expect(BusKind.socketPath(inAddress: "unix:path=%2ftmp%2Fb") == "/tmp/b")
        #expect(BusKind.socketPath(inAddress: "unix:path=/tmp/caf%c3%a9") == "/tmp/café")
    }

    @Test(arguments: [
        "", ";", "unix:abstract=/tmp/dbus-x", "unix:runtime=yes", "unix:tmpdir=/tmp", "tcp:host=localhost,port=1",
        "unix:path=/a;unix:path=/b", "unix:path=", "unix:path=/a,path=/b", "unix:path=/bad%2", "unix:path=/bad%zz",
        "unix:path=/a,", "unix:", "path=/a", "unixpath=/a", "unix:path=/a,abstract=x", "autolaunch:",
    ])
    func anythingElseIsLeftToSdBus(_ address: String) {
        #expect(BusKind.socketPath(inAddress: address) == nil, "\(address)")
    }
}

import SnoozeFuseAudio
import Testing

/// alsa-lib's configuration read ahead of a device's first open (the hooks it runs then are
/// crossed in the CLI's tests: a nap's set-up runs Debian's PulseAudio hook).
@Suite struct ALSAConfigurationTests {
    // Not `default`: without a sound card or a sound server, alsa-lib defines none.
    @Test(arguments: ["null", "file:FILE=/dev/null,FORMAT=raw", "plug:null", "hw:0"])
    func aDeviceAlsaLibDefinesIsPrepared(_ device: String) {
        #expect(ALSAConfiguration.prepare(device: device), "\(device)")
    }

    @Test(arguments: ["snoozefuse-no-such-pcm", "no-such-pcm:1,2", ""])
    func aDeviceItDoesNotDefineIsSaidSo(_ device: String) {
        #expect(!ALSAConfiguration.prepare(device: device), "\(device)")
    }
}

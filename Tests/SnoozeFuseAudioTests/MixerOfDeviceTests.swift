import SnoozeFuseAudio
import Testing

/// Which mixer sets the volume of a PCM (the real mixers are crossed in the runtime's and the
/// CLI's tests on a private PulseAudio).
@Suite struct MixerOfDeviceTests {
    private static let controls: Set<String> = ["default", "pulse", "sysdefault", "hw", "headset"]

    @Test("the card a PCM names, the control of the same name, else the default card; none for null and file",
          arguments: [
              ("default", "default" as String?),
              ("pulse", "pulse"),
              ("headset", "headset"),          // pcm.headset with a ctl.headset of its own
              ("my-speakers", "default"),      // a PCM without a control of its name
              ("hw:1", "hw:1"),
              ("hw:1,0", "hw:1"),
              ("plughw:1,0", "hw:1"),
              ("plughw:CARD=Headset,DEV=0", "hw:Headset"),
              ("front:CARD=PCH,DEV=0", "hw:PCH"),
              ("sysdefault:CARD=PCH", "hw:PCH"),
              ("dmix:CARD=\"USB\"", "hw:USB"),
              ("hw:DEV=0,CARD=2", "hw:2"),
              ("plug:'hw:1'", "default"),      // a quoted slave PCM: not read here
              ("plug:{slave.pcm hw}", "default"),
              ("null", nil),
              ("file:FILE=/tmp/a.wav,FORMAT=wav", nil),
          ])
    func mixer(device: String, expected: String?) {
        #expect(MixerOfDevice.name(for: device) { Self.controls.contains($0) } == expected)
    }
}

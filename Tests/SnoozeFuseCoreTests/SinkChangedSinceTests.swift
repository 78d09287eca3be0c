import SnoozeFuseCore
import Testing

/// Where the person's newer choice wins over what a fix would put back.
@Suite struct SinkChangedSinceTests {
    func sink(muted: Bool, volume: Int) -> SinkDescription {
        SinkDescription(name: "speakers", description: "Speakers", muted: muted, volumePercent: volume)
    }

    /// A muted sink at 20 %: unmuted and raised to the floor, remembering both and what was set.
    @Test func aFixRemembersWhatItFoundAndWhatItSet() {
        let found = sink(muted: true, volume: 20)
        let (fix, unmute, raiseTo) = SinkLevelFix.plan(for: found, original: found, floor: 60, earlier: nil)
        #expect(unmute && raiseTo == 60)
        #expect(fix == SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 20, volumeSet: 60))
    }

    /// Still as the alarm left it (the server's rounding aside): put back. Changed since (another
    /// volume, muted again): left to the person.
    @Test(arguments: [(false, 60, nil), (false, 59, nil), (false, 61, nil),
                      (false, 45, "its volume is 45 %, not the 60 % the alarm set"),
                      (false, 100, "its volume is 100 %, not the 60 % the alarm set"),
                      (true, 60, "it was muted again after the alarm unmuted it")] as [(Bool, Int, String?)])
    func aSinkChangedSinceIsLeftAlone(_ muted: Bool, _ volume: Int, _ why: String?) {
        let fix = SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 20, volumeSet: 60)
        #expect(fix.changedSince(sink(muted: muted, volume: volume)) == why)
    }

    /// A state written before the set volume was kept: only a mute made again counts as a change.
    @Test func aFixWithoutTheVolumeItSetIsPutBackUnlessMutedAgain() {
        let old = SinkLevelFix(sink: "speakers", mutedBefore: true, volumeBefore: 20)
        #expect(old.changedSince(sink(muted: false, volume: 45)) == nil)
        #expect(old.changedSince(sink(muted: true, volume: 45)) != nil)
        #expect(SinkLevelFix(sink: "speakers", volumeBefore: 20).changedSince(sink(muted: true, volume: 45)) == nil)
    }
}

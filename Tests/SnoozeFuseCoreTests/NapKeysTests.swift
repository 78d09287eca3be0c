import Testing
import SnoozeFuseCore
import SnoozeFuseTestSupport

@Suite("What the keys of a nap's terminal mean")
struct NapKeysTests {
    @Test func holdModeHoldsAndLetsGoAndItsAutorepeatIsNotTyping() {
        var keys = NapKeys<Instant>(holdMode: true, dismissal: .key)
        #expect(keys.events(for: .bytes([32]), in: .ready, at: at(0)) == [.holdBegan])
        #expect(keys.events(for: .bytes([32, 32]), in: .holding, at: at(0.5)) == [])
        #expect(keys.events(for: .quiet, in: .holding, at: at(1)) == [.holdEnded])
        #expect(keys.events(for: .quiet, in: .releasing, at: at(2)) == [])
        // A hold that goes on past the failsafe's alarm is still the hold: no dismissal.
        #expect(keys.events(for: .bytes([32]), in: .releasing, at: at(3)) == [.holdBegan])
        #expect(keys.events(for: .bytes([13]), in: .ringing, at: at(4)) == [])
        #expect(keys.events(for: .quiet, in: .ringing, at: at(5)) == [.holdEnded])
        #expect(keys.events(for: .bytes([13]), in: .ringing, at: at(6)) == [.dismiss])
        #expect(keys.events(for: .closed, in: .ringing, at: at(7)) == [.detach])
    }

    @Test func wordModeWantsTheWordAndEnterAndNothingElseStops() {
        var keys = NapKeys<Instant>(holdMode: false, dismissal: .word)
        keys.ringingBegan(word: "maple")
        #expect(keys.prompt.word == "maple")
        for press in ["\r", "\n", " ", "d", "D", "x\r", "\u{1B}[A", "\u{1B}"] {
            #expect(keys.events(for: .bytes(Array(press.utf8)), in: .ringing, at: at(1)) == [], "\(press.debugDescription)")
        }
        #expect(keys.prompt.wrong, "x and Enter was a wrong try")
        #expect(keys.events(for: .bytes(Array("mapel".utf8)), in: .ringing, at: at(2)) == [])
        #expect(keys.prompt.typed == "mapel" && !keys.prompt.wrong)
        #expect(keys.events(for: .bytes([0x7F, 0x7F]), in: .ringing, at: at(3)) == [])
        #expect(keys.prompt.typed == "map")
        // Upper case is the same word.
        #expect(keys.events(for: .bytes(Array("LE\r".utf8)), in: .ringing, at: at(4)) == [.dismiss])
    }

    @Test func aWrongWordClearsWhatWasTypedAndEnterOnNothingIsNotATry() {
        var keys = NapKeys<Instant>(holdMode: false, dismissal: .word)
        keys.ringingBegan(word: "lemon")
        #expect(keys.events(for: .bytes(Array("\r".utf8)), in: .ringing, at: at(1)) == [])
        #expect(!keys.prompt.wrong)
        #expect(keys.events(for: .bytes(Array("melon\r".utf8)), in: .ringing, at: at(2)) == [])
        #expect(keys.prompt.wrong && keys.prompt.typed.isEmpty)
        // The word stays through a snooze and stops a snoozed alarm too; s does not snooze again.
        keys.ringingEnded()
        #expect(keys.prompt.word == "lemon" && !keys.prompt.wrong)
        #expect(keys.events(for: .bytes(Array("s".utf8)), in: .snoozed, at: at(3)) == [])
        #expect(keys.events(for: .bytes(Array("lemon\r".utf8)), in: .snoozed, at: at(4)) == [.dismiss])
    }

    @Test func sSnoozesAtOnceAndTheRestOfTheBurstMeansNothing() {
        var keys = NapKeys<Instant>(holdMode: false, dismissal: .key)
        #expect(keys.events(for: .bytes(Array("s\r".utf8)), in: .ringing, at: at(1)) == [.snooze(nil)])
        var word = NapKeys<Instant>(holdMode: false, dismissal: .word)
        word.ringingBegan(word: "tiger")
        #expect(word.events(for: .bytes(Array("S".utf8)), in: .ringing, at: at(1)) == [.snooze(nil)])
    }

    @Test func holdModeOfDismissalWantsThreeSecondsOfAutorepeat() {
        var keys = NapKeys<Instant>(holdMode: false, dismissal: .hold)
        keys.ringingBegan(word: "unused")
        #expect(keys.prompt.word == nil)
        #expect(keys.events(for: .bytes([32]), in: .ringing, at: at(10)) == [])
        #expect(keys.prompt.holdingToDismiss)
        #expect(keys.events(for: .bytes([32]), in: .ringing, at: at(12.9)) == [])
        // Let go too soon: the count starts again.
        #expect(keys.events(for: .quiet, in: .ringing, at: at(13.5)) == [])
        #expect(!keys.prompt.holdingToDismiss)
        #expect(keys.events(for: .bytes([32]), in: .ringing, at: at(14)) == [])
        #expect(keys.events(for: .bytes([32]), in: .ringing, at: at(16.9)) == [])
        #expect(keys.events(for: .bytes([32]), in: .ringing, at: at(17)) == [.dismiss])
        // s snoozes at once, whatever the mode.
        var other = NapKeys<Instant>(holdMode: false, dismissal: .hold)
        #expect(other.events(for: .bytes(Array("s".utf8)), in: .ringing, at: at(1)) == [.snooze(nil)])
    }

    @Test func plusAndMinusMoveTheAlarmByAMinuteWhileNappingOrSnoozed() {
        var keys = NapKeys<Instant>(holdMode: false, dismissal: .word)
        #expect(keys.events(for: .bytes(Array("+".utf8)), in: .napping, at: at(1)) == [.adjust(.seconds(60))])
        #expect(keys.events(for: .bytes(Array("=".utf8)), in: .napping, at: at(1)) == [.adjust(.seconds(60))])
        #expect(keys.events(for: .bytes(Array("-".utf8)), in: .snoozed, at: at(1)) == [.adjust(.seconds(-60))])
        #expect(keys.events(for: .bytes(Array("+-".utf8)), in: .napping, at: at(1)) == [.adjust(.seconds(60)), .adjust(.seconds(-60))])
        #expect(keys.events(for: .bytes(Array("+".utf8)), in: .releasing, at: at(1)) == [])
        #expect(keys.events(for: .bytes(Array("+".utf8)), in: .ringing, at: at(1)) == [])
    }

    @Test func qCancelsOnlyAfterY() {
        var keys = NapKeys<Instant>(holdMode: false, dismissal: .word)
        #expect(keys.events(for: .bytes(Array("q".utf8)), in: .napping, at: at(1)) == [])
        #expect(keys.prompt.confirmingCancel)
        #expect(keys.events(for: .bytes(Array("n".utf8)), in: .napping, at: at(2)) == [])
        #expect(!keys.prompt.confirmingCancel)
        #expect(keys.events(for: .bytes(Array("qq".utf8)), in: .napping, at: at(3)) == [])
        #expect(keys.events(for: .bytes(Array("qy".utf8)), in: .releasing, at: at(4)) == [.cancel])
        // While ringing, q is no way round the word; with --dismiss key it asks too.
        keys.ringingBegan(word: "piano")
        #expect(keys.events(for: .bytes(Array("qy".utf8)), in: .ringing, at: at(5)) == [])
        var key = NapKeys<Instant>(holdMode: false, dismissal: .key)
        key.ringingBegan(word: "piano")
        #expect(key.events(for: .bytes(Array("q".utf8)), in: .ringing, at: at(5)) == [])
        #expect(key.events(for: .bytes(Array("y".utf8)), in: .ringing, at: at(6)) == [.cancel])
    }

    @Test func theWordsHaveNoLetterThatMeansSomethingElse() {
        for word in DismissWords.all {
            #expect(!word.contains("s") && !word.contains("q") && word.allSatisfy { $0.isLowercase } && (4...7).contains(word.count), "\(word)")
        }
        #expect(Set(DismissWords.all).count == DismissWords.all.count)
    }
}

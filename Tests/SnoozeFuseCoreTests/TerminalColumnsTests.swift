import SnoozeFuseCore
import SnoozeFuseTestSupport
import Testing

/// The columns text takes on a terminal (issue 42: widths counted characters, so a row with a
/// sound called `目覚まし` went past the terminal's edge), checked against glibc's own `wcwidth`
/// in C.UTF-8 (set for the test's thread only).
@Suite("Terminal columns: what a line takes on screen")
struct TerminalColumnsTests {
    static let texts = [
        "abc", "昼寝", "目覚まし時計", "한국어", "ｆｕｌｌ", "café", "cafe\u{301}", "naïve", "Ελληνικά", "русский", "עברית",
        "👍", "😴", "⏰", "…", "♥", "█░", "→", "·", "a\u{200B}b", "z\u{0308}", "漢字とカナ mixed ASCII",
    ]

    @Test(arguments: texts)
    func asGlibcSaysInCUTF8(_ text: String) throws {
        let glibc = try #require(glibcColumns(text), "glibc cannot show \(text.debugDescription)")
        #expect(TerminalColumns.width(of: text) == glibc, "\(text.debugDescription)")
    }

    @Test func aPictureWithItsSelectorTakesTwoAndAJoinerNone() {
        #expect(TerminalColumns.width(of: "❤️") == 2)
        #expect(TerminalColumns.width(of: "❤") == 1)
        #expect(TerminalColumns.width(of: "\u{200D}") == 0)
        #expect(TerminalColumns.width(of: "e\u{301}") == 1)
    }

    /// Cut to a width, never half a wide character; padded to a width by columns.
    @Test func cutAndPaddedByColumns() {
        #expect(TerminalColumns.prefix("昼寝x", columns: 3) == "昼")
        #expect(TerminalColumns.prefix("昼寝x", columns: 4) == "昼寝")
        #expect(TerminalColumns.prefix("abc", columns: 10) == "abc")
        #expect(TerminalColumns.fitted("目覚まし時計", columns: 7) == "目覚ま…")
        #expect(TerminalColumns.fitted("目覚まし時計", columns: 12) == "目覚まし時計")
        #expect(TerminalColumns.fitted("目覚まし時計", columns: 2) == "…", "the wide character does not fit beside the ellipsis")
        #expect(TerminalColumns.padded("昼寝", to: 6) == "昼寝  ")
        #expect(TerminalColumns.padded("昼寝", to: 3) == "昼寝", "never cut")
    }

    /// Every scalar of the blocks people write names in (Latin, Greek, Cyrillic, Hebrew, Arabic,
    /// Devanagari, CJK, Hangul, kana, fullwidth forms, common emoji) is as wide as glibc says.
    @Test func everyScalarOfTheCommonBlocksAsGlibc() {
        let ranges: [ClosedRange<UInt32>] = [0x20 ... 0x7E, 0xA0 ... 0x24F, 0x300 ... 0x36F, 0x370 ... 0x52F, 0x590 ... 0x6FF, 0x900 ... 0x97F,
                                             0x2000 ... 0x206F, 0x2190 ... 0x21FF, 0x2500 ... 0x25FF, 0x3000 ... 0x30FF, 0x4E00 ... 0x4EFF,
                                             0xAC00 ... 0xACFF, 0xFF00 ... 0xFFEF, 0x1F300 ... 0x1F64F, 0x1F900 ... 0x1F9FF,
                                             0x1100 ... 0x11FF, 0x2E80 ... 0x2FFF, 0x3100 ... 0x33FF, 0xFE00 ... 0xFE6F, 0x20000 ... 0x200FF, 0x2300 ... 0x23FF, 0x2600 ... 0x27BF]
        var differing: [String] = []
        var compared = 0
        for range in ranges {
            for value in range {
                guard let scalar = Unicode.Scalar(value), let glibc = glibcColumns(String(scalar)) else { continue }
                compared += 1
                let ours = TerminalColumns.width(of: Character(scalar))
                if ours != glibc { differing.append("U+\(String(value, radix: 16, uppercase: true)) \(ours) vs \(glibc)") }
            }
        }
        #expect(differing.isEmpty, "\(differing.count): \(differing.prefix(40))")
        // C.UTF-8 is there and knows these blocks (glibc says -1 for what it cannot show).
        #expect(compared > 5_000, "only \(compared) scalars compared: is C.UTF-8 missing?")
    }
}

/// How many columns of a terminal text takes: what lines, tables and the status area are fitted
/// and padded by. A character is not a column: `昼寝` takes 4 columns in 2 characters, an emoji
/// 2, `é` written as `e` and a combining accent 1, a zero-width joiner 0.
///
/// The widths are those of a terminal's `wcwidth`, from Unicode's East Asian Width (wide and
/// fullwidth: 2) and general categories (marks and format characters: 0), without asking the C
/// library, whose answer depends on the locale (in `C` every non-ASCII character is -1).
/// Ambiguous-width characters (`♥`, `█`, `…`) count 1, as a terminal outside East Asian locales
/// shows them.
public enum TerminalColumns {
    /// The columns `text` takes.
    public static func width(of text: some StringProtocol) -> Int {
        // Printable ASCII, the usual case, is a column a byte (no grapheme breaking needed).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        var total = 0
        for character in text { total += width(of: character) }
        return total
    }

    /// The columns one character (a grapheme cluster) takes: 0, 1 or 2.
    public static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        // As wide as its first scalar that takes room (a lone mark takes none).
        var columns = 0
        for scalar in scalars where columns == 0 { columns = width(of: scalar) }
        // An emoji's presentation selector (U+FE0F) shows it as a picture, 2 columns.
        if columns == 1, scalars.contains("\u{FE0F}"), scalars.first?.properties.isEmoji == true { return 2 }
        return columns
    }

    /// The columns one scalar takes on its own.
    static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x7F { return value < 0x20 ? 0 : 1 }
        if value < 0xA0 { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .control: return 0
        // Format characters are invisible, but for the soft hyphen and the number signs that
        // carry the digits after them (U+0600…), which are drawn.
        case .format: return shownFormat.contains { $0.contains(value) } ? 1 : 0
        default: break
        }
        // Hangul's medial vowels and final consonants join the syllable their initial began.
        if (0x1160 ... 0x11FF).contains(value) || (0xD7B0 ... 0xD7FF).contains(value) { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        return wide.contains { $0.contains(value) } ? 2 : 1
    }

    /// East Asian Wide and Fullwidth blocks (emoji are wide by their presentation, above).
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100 ... 0x115F, 0x2329 ... 0x232A, 0x2E80 ... 0x303E, 0x3041 ... 0x33FF, 0x3400 ... 0x4DBF, 0x4E00 ... 0x9FFF,
        0xA000 ... 0xA4CF, 0xA960 ... 0xA97F, 0xAC00 ... 0xD7A3, 0xF900 ... 0xFAFF, 0xFE10 ... 0xFE19, 0xFE30 ... 0xFE6F,
        0xFF00 ... 0xFF60, 0xFFE0 ... 0xFFE6, 0x20000 ... 0x2FFFD, 0x30000 ... 0x3FFFD,
    ]

    /// Format characters that are drawn: the soft hyphen and the prepended concatenation marks.
    private static let shownFormat: [ClosedRange<UInt32>] = [
        0xAD ... 0xAD, 0x600 ... 0x605, 0x6DD ... 0x6DD, 0x70F ... 0x70F, 0x8E2 ... 0x8E2, 0x110BD ... 0x110BD, 0x110CD ... 0x110CD,
    ]

    /// The longest start of `text` that takes at most `columns` columns (never half a wide
    /// character).
    public static func prefix(_ text: some StringProtocol, columns: Int) -> Substring {
        let whole = Substring(text)
        var used = 0
        var end = whole.startIndex
        for index in whole.indices {
            let next = used + width(of: whole[index])
            if next > columns { return whole[..<index] }
            used = next
            end = whole.index(after: index)
        }
        return whole[..<end]
    }

    /// `text` in at most `columns` columns: whole when it fits, else its start and `…`.
    public static func fitted(_ text: String, columns: Int) -> String {
        guard width(of: text) > columns else { return text }
        return columns < 1 ? "" : String(prefix(text, columns: columns - 1)) + "…"
    }

    /// `text` and spaces up to `columns` columns (never cut).
    public static func padded(_ text: String, to columns: Int) -> String {
        let missing = columns - width(of: text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
    }
}

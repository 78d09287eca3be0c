/// Sound names: what people type after `--sound` and `sounds remove`.
public enum SoundNames {
    /// The longest name kept, in characters.
    public static let maximumLength = 80

    /// `name` made safe: white space (tabs and line breaks included) collapsed to one space, other
    /// control and format characters dropped, path separators (`/`, `\`) turned into `-`, leading
    /// dots and surrounding spaces removed, at most ``maximumLength`` characters. May return "".
    public static func clean(_ name: String) -> String {
        var text = ""
        var lastWasSpace = false
        for scalar in name.unicodeScalars {
            let properties = scalar.properties
            if properties.isWhitespace {
                if !lastWasSpace { text.unicodeScalars.append(" ") }
                lastWasSpace = true
                continue
            }
            if properties.generalCategory == .control || properties.generalCategory == .format
                || properties.generalCategory == .lineSeparator || properties.generalCategory == .paragraphSeparator {
                continue
            }
            lastWasSpace = false
            text.unicodeScalars.append(scalar == "/" || scalar == "\\" ? "-" : scalar)
        }
        var trimmed = Substring(text)
        while let first = trimmed.first, first == "." || first == " " { trimmed = trimmed.dropFirst() }
        while trimmed.last == " " { trimmed = trimmed.dropLast() }
        return String(String(trimmed).prefix(maximumLength)).trimmingSuffixSpaces()
    }

    /// The display name for a file name: its name without the extension, cleaned; `sound` if that
    /// leaves nothing.
    public static func name(forFileName fileName: String) -> String {
        var base = Substring(fileName)
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = base[..<dot] }
        let cleaned = clean(String(base))
        return cleaned.isEmpty ? "sound" : cleaned
    }

    /// `base`, or `base (2)`, `base (3)` … whichever is first not in `taken` (compared without case).
    public static func unique(_ base: String, taken: Set<String>) -> String {
        let folded = Set(taken.map { $0.lowercased() })
        if !folded.contains(base.lowercased()) { return base }
        var number = 2
        while folded.contains("\(base) (\(number))".lowercased()) { number += 1 }
        return "\(base) (\(number))"
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}

import Glibc

/// glibc's `wcwidth` (the Glibc module leaves it out: it wants _XOPEN_SOURCE).
@_silgen_name("wcwidth") private func glibcWCWidth(_ character: wchar_t) -> Int32

/// The columns glibc's `wcwidth` says `text` takes on a terminal, in C.UTF-8 (set for the calling
/// thread only); nil when it says a character cannot be shown. What the program's own widths are
/// checked against.
public func glibcColumns(_ text: some StringProtocol) -> Int? {
    guard let utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil) else { return nil }
    defer { freelocale(utf8) }
    let previous = uselocale(utf8)
    defer { uselocale(previous) }
    var total = 0
    for scalar in text.unicodeScalars {
        let width = Int(glibcWCWidth(wchar_t(bitPattern: scalar.value)))
        guard width >= 0 else { return nil }
        total += width
    }
    return total
}

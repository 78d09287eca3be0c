import CALSA

/// Which ALSA mixer sets the volume of what plays on a PCM: the card a PCM name names
/// (`hw:1`, `plughw:CARD=Headset,DEV=0`, `front:CARD=PCH` → `hw:1`, `hw:Headset`, `hw:PCH`), the
/// control of the same name where the configuration has one (`default`, `pulse`, a `pcm.NAME`
/// with its `ctl.NAME`), else the default card's. `null` and `file` PCMs have none: they write to
/// no speaker.
public enum MixerOfDevice {
    /// The mixer for PCM `device`, as the configuration has it; `nil` for `null` and `file`.
    /// Reads alsa-lib's configuration, which can hang (a hook on a FIFO): call it where a mixer
    /// is opened, on a thread that is waited for with a limit.
    public static func name(for device: String) -> String? {
        name(for: device, controlExists: hasControl(named:))
    }

    /// The rule itself (pure): `controlExists` says whether the configuration defines `ctl.NAME`.
    public static func name(for device: String, controlExists: (String) -> Bool) -> String? {
        let (base, arguments) = split(trimmed(device))
        if base == "null" || base == "file" { return nil }
        if let arguments, let card = card(in: arguments) { return "hw:\(card)" }
        if arguments == nil, !base.isEmpty, controlExists(base) { return base }
        return "default"
    }

    /// `hw:1,0` → (`hw`, `1,0`); `headset` → (`headset`, nil).
    private static func split(_ name: String) -> (String, String?) {
        guard let colon = name.firstIndex(of: ":") else { return (name, nil) }
        return (String(name[..<colon]), String(name[name.index(after: colon)...]))
    }

    /// The card in a PCM's arguments: `CARD=x`, or the first positional one (`1` of `1,0`); a
    /// nested definition (`{…}`) or a quoted PCM (`'hw:1'`) names none that can be read here.
    private static func card(in arguments: String) -> String? {
        let parts = arguments.split(separator: ",", omittingEmptySubsequences: false).map { trimmed(String($0)) }
        let named = parts.first { $0.uppercased().hasPrefix("CARD=") }.map { String($0.dropFirst(5)) }
        let positional = parts.first.flatMap { $0.contains("=") ? nil : $0 }
        guard let card = (named ?? positional).map(unquoted), !card.isEmpty,
              card.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else { return nil }
        return card
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    private static func unquoted(_ text: String) -> String {
        var text = Substring(text)
        while let first = text.first, first == "\"" || first == "'", text.last == first, text.count >= 2 {
            text = text.dropFirst().dropLast()
        }
        return String(text)
    }

    /// Whether alsa-lib's configuration defines `ctl.NAME`.
    static func hasControl(named name: String) -> Bool {
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return false }
        defer { snd_config_unref(top) }
        var node: OpaquePointer?
        return snd_config_search(top, "ctl.\(name)", &node) >= 0
    }
}

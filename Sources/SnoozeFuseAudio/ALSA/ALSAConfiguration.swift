import CALSA

/// alsa-lib's configuration, read ahead of a device's first open.
public enum ALSAConfiguration {
    /// Reads alsa-lib's configuration and the definition of the PCM `device`, running the hooks
    /// they name, as `snd_pcm_open` does before it opens anything; opens nothing. alsa-lib keeps
    /// what its hooks did for the rest of the process (until its files change), and later opens
    /// of any device use it.
    ///
    /// A nap does this as it sets up. Debian's configuration (libasound2-plugins' `99-pulse.conf`)
    /// asks PulseAudio whether it runs: that loads libpulse and the libraries behind it (X11,
    /// D-Bus, libsystemd) and runs their code. Left to the alarm's first open, after the nap gave
    /// its set-up's pages back, it kept about 1 MiB of them resident while the alarm rang (issue 23).
    ///
    /// Blocks for as long as a hook does (one that reads a file nobody writes, a FIFO say; Debian's
    /// PulseAudio hook, tried against a frozen server, gave up at once): call it from a thread of
    /// its own.
    /// - Returns: whether alsa-lib defines `device`.
    @discardableResult
    public static func prepare(device: String) -> Bool {
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return false }
        defer { snd_config_unref(top) }
        var definition: OpaquePointer?
        guard snd_config_search_definition(top, "pcm", device, &definition) >= 0, let definition else { return false }
        snd_config_delete(definition)
        return true
    }
}

// Warnings about the machine a test runs on rather than the nap under test: every nap in a
// container without a system bus says once that nothing keeps the machine awake, and every nap
// without CAP_WAKE_ALARM that it cannot wake a suspended machine. Tests that expect a nap to run
// without warnings mean warnings of their own subject; the keep-awake and wake-alarm tests
// (WakefulnessTests) check these two.

/// Whether the warning `message` is about this machine (no keep-awake inhibitor, no wake alarm),
/// not about the nap.
public func isMachineWarning(_ message: String) -> Bool {
    message.contains("nothing keeps this machine awake") || message.contains("CAP_WAKE_ALARM")
}

/// The lines of `text` (a nap's `--events jsonl` output or its messages) that are warnings, less
/// those about this machine (``isMachineWarning(_:)``).
public func warningLines(in text: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { line in
        (line.contains("\"event\":\"warning\"") || line.contains("warning:")) && !isMachineWarning(line)
    }
}

import Foundation
import SnoozeFuseTestSupport

/// A terminal window of a given size running one command, as a person would see it: tmux (a real
/// terminal emulator on a real pseudo-terminal) on a server of its own. The test reads the screen
/// (`capture-pane`), types (`send-keys`), and finds the command's exit status and the terminal's
/// `stty -a` before and after it in files. Blocking: for scripts on threads of their own.
final class TerminalWindow {
    let home: NapHome
    let width: Int
    private let socket = "sf-\(UUID().uuidString.prefix(8))"
    private let name: String

    /// Opens a `width`×`height` window that runs `snoozefuse arguments…` with the home's nap
    /// files, standard output into `events` (a file of the home), `environment` added (a value of
    /// "" removes the variable). The window stays open after the command ends.
    init(home: NapHome, width: Int, height: Int = 12, name: String = "nap", _ arguments: [String],
         events: String = "events.jsonl", environment: [String: String] = [:]) throws {
        self.home = home
        self.width = width
        self.name = name
        var variables = ["XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"].map { "\($0)=\(home.environment[$0]!)" }
        var removed: [String] = []
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) {
            if value.isEmpty { removed += ["-u", key] } else { variables.append("\(key)=\(value)") }
        }
        let folder = home.folder
        let program = ([BuiltProducts.executable("snoozefuse").path] + arguments).map(Self.quoted).joined(separator: " ")
        // Each file appears whole (written aside, then renamed), so a reader never sees it half written.
        func record(_ command: String, _ file: String) -> String {
            let path = Self.quoted(folder.path(file)), partial = Self.quoted(folder.path(file + ".partial"))
            return "\(command) > \(partial); mv \(partial) \(path)"
        }
        let inner = "\(record("stty -a", "\(name).before")); \(program) > \(Self.quoted(folder.path(events))); "
            + "\(record("echo $?", "\(name).status")); \(record("stty -a", "\(name).after")); sleep 600"
        let command = (["env"] + removed + variables + ["TERM=xterm-256color", "sh", "-c", inner]).map(Self.quoted).joined(separator: " ")
        try runTool("tmux", ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)", command])
    }

    deinit { close() }

    /// Ends the window and its server.
    func close() {
        _ = try? runTool("tmux", ["-L", socket, "kill-server"])
    }

    /// The screen's lines (trailing blank lines left out); with `escapes`, with their colours.
    func screen(escapes: Bool = false) -> [String] {
        let text = (try? runTool("tmux", ["-L", socket, "capture-pane", "-p", "-t", name] + (escapes ? ["-e"] : []))) ?? ""
        var lines = text.components(separatedBy: "\n")
        while let last = lines.last, last.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeLast() }
        return lines
    }

    /// Waits until the screen shows what `condition` looks for, and returns it (nil after `limit`).
    func waitForScreen(_ limit: Duration = .seconds(30), _ condition: ([String]) -> Bool) -> [String]? {
        var found: [String]?
        _ = waitFor(limit) {
            let lines = screen()
            if condition(lines) { found = lines }
            return found != nil
        }
        return found
    }

    /// Types `text` as it is.
    func type(_ text: String) {
        _ = try? runTool("tmux", ["-L", socket, "send-keys", "-t", name, "-l", text])
    }

    /// Presses named keys (`Enter`, `Space`, `BSpace`, `C-c`…).
    func press(_ keys: String...) {
        _ = try? runTool("tmux", ["-L", socket, "send-keys", "-t", name] + keys)
    }

    /// Holds a key down for `seconds`: a byte every 40 ms, as a terminal's autorepeat sends.
    func hold(_ key: String = " ", seconds: Double) {
        let end = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while ContinuousClock.now < end {
            type(key)
            usleep(40_000)
        }
    }

    /// The command's exit status, once it has ended.
    var status: Int32? {
        (try? String(contentsOfFile: home.folder.path("\(name).status"), encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `stty -a` of the terminal before the command and after it ended.
    var terminalSettings: (before: String?, after: String?) {
        (try? String(contentsOfFile: home.folder.path("\(name).before"), encoding: .utf8),
         try? String(contentsOfFile: home.folder.path("\(name).after"), encoding: .utf8))
    }

    private static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

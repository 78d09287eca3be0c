public import Logging

/// A logger whose lines go to `line`.
public func lineLogger(_ level: Logger.Level, _ line: @escaping @Sendable (String) -> Void) -> Logger {
    Logger(label: "snoozefuse.plugins") { _ in LineLogHandler(logLevel: level, line: line) }
}

/// Passes log lines from the plugin layer on as `warning: plugin ID: message` (no prefix of the
/// program's own: the caller adds it).
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    let line: @Sendable (String) -> Void

    public init(logLevel: Logger.Level, line: @escaping @Sendable (String) -> Void) {
        self.logLevel = logLevel
        self.line = line
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let plugin = (event.metadata?["plugin"] ?? metadata["plugin"]).map { "plugin \($0): " } ?? ""
        let level = event.level >= .error ? "error: " : event.level >= .warning ? "warning: " : ""
        line("\(level)\(plugin)\(event.message)")
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        log(event: LogEvent(level: level, message: message, metadata: metadata, source: source, file: file, function: function, line: line))
    }
}

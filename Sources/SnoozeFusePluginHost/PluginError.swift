/// A problem with one plugin file, naming the file. A bad plugin is reported and skipped; the host
/// keeps working.
///
/// `Codable`: the plugin host program reports errors to its parent as JSON, and the scan cache keeps
/// the errors of the files it refused.
public struct PluginError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable, Codable {
        /// The file or folder could not be examined (`stat` failed).
        case unreadable(String)
        /// The file or a folder holding it is writable by group or others: anyone could swap it.
        case writableByOthers(path: String, mode: UInt32)
        /// The file or a folder holding it belongs to another user than this one or root: its
        /// owner could swap it.
        case ownedByOtherUser(path: String, owner: UInt32, user: UInt32)
        /// The process that loaded the file ended while loading it (a constructor or the entry
        /// function crashed or ended the process): how it ended.
        case endedWhileLoading(String)
        /// Loading the file (its constructors and the entry function) did not finish in time.
        case hungWhileLoading(milliseconds: Int)
        /// The id uses the prefix reserved for the plugins installed with snoozefuse.
        case reservedID(String)
        /// The file no longer holds the plugin the scan found there.
        case changedSinceScan(expected: String, found: String)
        /// `dlopen` failed; `dlerror`'s text.
        case openFailed(String)
        /// The library does not export `snoozefuse_plugin_entry`.
        case missingEntry
        /// The entry function returned NULL.
        case nullDescriptor
        /// The plugin was built for another major ABI version.
        case abiMajorMismatch(plugin: UInt32, pluginMinor: UInt32, host: UInt32, hostMinor: UInt32)
        /// A struct is smaller than this ABI version's layout.
        case structTooSmall(name: String, size: UInt32, expected: Int)
        /// A required field (string or function pointer) is NULL.
        case missingField(String)
        /// The id is not reverse-DNS.
        case invalidID(String)
        /// The descriptor declares no kind this host knows.
        case noKnownKind(UInt32)
        /// Another plugin already has this id (the first one found wins).
        case duplicateID(id: String, firstPath: String)
        /// No plugin with this id is installed.
        case unknownPlugin(String)
        /// The plugin cannot create this kind of instance.
        case wrongKind(id: String, wanted: String)
        /// A plugin call returned an error status, with the plugin's own message.
        case callFailed(call: String, status: Int32, message: String)
        /// `render` wrote NaN or infinity.
        case renderNotFinite
        /// A pulse did not finish within the host's deadline.
        case timedOut(call: String, milliseconds: Int)
        /// The process that ran the plugin ended (crashed, was killed, or quit).
        case processEnded(String)
    }

    /// The plugin file (or, for `unknownPlugin`, the id asked for).
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reasonText)" }

    public var reasonText: String {
        switch reason {
        case .unreadable(let why):
            return "cannot be examined: \(why)"
        case .writableByOthers(let where_, let mode):
            let what = where_ == path ? "the file" : "its folder \(where_)"
            return "refused: \(what) is writable by other users (mode \(String(mode & 0o7777, radix: 8))); run `chmod go-w \(where_)`"
        case .ownedByOtherUser(let where_, let owner, let user):
            let what = where_ == path ? "the file" : "its folder \(where_)"
            return "refused: \(what) belongs to uid \(owner), neither you (uid \(user)) nor root; plugins are loaded only from files and folders of yours or root's (as sudo and ssh require), so `chown \(user) \(where_)` or move the plugin"
        case .endedWhileLoading(let how):
            return "refused: loading it ended the process that loaded it (\(how)): its constructors or snoozefuse_plugin_entry crash or end the process"
        case .hungWhileLoading(let milliseconds):
            return "refused: loading it did not finish within \(milliseconds) ms: its constructors or snoozefuse_plugin_entry hang (it was killed)"
        case .reservedID(let id):
            return "refused: its id \(id) uses the prefix \(PluginInfo.reservedPrefix), which is reserved for the plugins installed with snoozefuse (PREFIX/lib/snoozefuse/plugins); give it an id of your own, the reverse-DNS of a name you control"
        case .changedSinceScan(let expected, let found):
            return "the file changed since it was scanned: it now holds plugin \(found), not \(expected); run the command again"
        case .openFailed(let why):
            guard let library = Self.missingLibrary(in: why, plugin: path) else { return "cannot be loaded: \(why)" }
            if library.hasPrefix("libswift") {
                return "cannot be loaded: it needs \(library), the Swift runtime's shared library, which only a Swift toolchain has "
                    + "and the loader cannot find here; rebuild it with the Swift runtime inside it (swiftc -static-stdlib, as "
                    + "PLUGINS.md says), so it loads on a machine without Swift (\(why))"
            }
            return "cannot be loaded: it needs \(library), which the loader cannot find: install the package that has it "
                + "(Debian: `apt-file search \(library)`; Fedora: `dnf provides '*/\(library)'`), or rebuild the plugin without it (\(why))"
        case .missingEntry:
            return "not a snoozefuse plugin: it does not export the function snoozefuse_plugin_entry"
        case .nullDescriptor:
            return "snoozefuse_plugin_entry returned NULL (the plugin declined to load)"
        case .abiMajorMismatch(let plugin, let pluginMinor, let host, let hostMinor):
            return "built for plugin ABI \(plugin).\(pluginMinor), but this snoozefuse speaks ABI \(host).\(hostMinor); rebuild the plugin against ABI \(host)"
        case .structTooSmall(let name, let size, let expected):
            return "\(name).struct_size is \(size), smaller than the \(expected) bytes of ABI 1.0"
        case .missingField(let field):
            return "\(field) is NULL"
        case .invalidID(let id):
            return "id \"\(id)\" is not a reverse-DNS id (lower case, like org.example.rain, at most 127 bytes)"
        case .noKnownKind(let kinds):
            return "declares no kind this host knows (kinds = \(kinds)); expected a sound source and/or a pulse emitter"
        case .duplicateID(let id, let firstPath):
            return "skipped: id \(id) is already provided by \(firstPath) (the first one found wins)"
        case .unknownPlugin(let id):
            return "no plugin with id \"\(id)\" is installed (see `snoozefuse plugins list`)"
        case .wrongKind(let id, let wanted):
            return "plugin \(id) is not a \(wanted)"
        case .callFailed(let call, let status, let message):
            let named = Self.statusName(status)
            return message.isEmpty ? "\(call) failed with \(named)" : "\(call) failed with \(named): \(message)"
        case .renderNotFinite:
            return "render wrote NaN or infinity; the source was disabled"
        case .timedOut(let call, let milliseconds):
            return "\(call) did not return within \(milliseconds) ms (the host drops pulses while an emitter is busy)"
        case .processEnded(let how):
            return "the plugin's process ended: \(how)"
        }
    }

    /// The library a plugin needs that the dynamic loader could not find, from `dlerror`'s text
    /// (glibc: `LIBRARY: cannot open shared object file: …`); nil when it says something else, or
    /// when the file it could not open is the plugin's own.
    public static func missingLibrary(in dlerror: String, plugin: String) -> String? {
        // dlerror's parts are separated by ": " (split by hand: no `_StringProcessing`, Package.swift).
        var parts: [String] = [], part: [UInt8] = []
        var bytes = Array(dlerror.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: ":"), bytes.first == UInt8(ascii: " ") {
                bytes.removeFirst()
                parts.append(String(decoding: part, as: UTF8.self))
                part = []
            } else {
                part.append(byte)
            }
        }
        parts.append(String(decoding: part, as: UTF8.self))
        guard let at = parts.firstIndex(of: "cannot open shared object file"), at > 0 else { return nil }
        let library = parts[at - 1]
        return library.isEmpty || library == plugin ? nil : library
    }

    /// The `SNOOZEFUSE_STATUS_*` name of a status code.
    public static func statusName(_ status: Int32) -> String {
        switch status {
        case 0: "OK"
        case 1: "INVALID_CONFIG"
        case 2: "UNSUPPORTED"
        case 3: "UNAVAILABLE"
        case 4: "WRONG_STATE"
        case 5: "FAILED"
        default: "unknown status \(status)"
        }
    }
}

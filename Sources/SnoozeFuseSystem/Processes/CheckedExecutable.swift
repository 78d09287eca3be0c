import CLinux
import Glibc

/// A program the user installed (a hook), opened once and judged by what was opened: the checks
/// read the open file (`fstat`, the folders above the file it resolved to), and ``start(_:descriptors:grouping:environment:)``
/// runs that same file through its descriptor (`/proc/self/fd/N` in the child, as `fexecve`
/// does), never the path again. A file swapped in after the check is not the one that runs.
///
/// Judged as sudo and ssh judge the files they trust: a regular, executable file (a link is
/// followed), and neither it nor any folder from it up to `/` may belong to anyone but this user
/// or root, or be writable by group or others; a sticky folder above the file's own (`/tmp`) is
/// allowed, as others may add files there but not replace ours.
public final class CheckedExecutable: Sendable {
    /// The path it was opened by (its name in messages, and its `argv[0]`).
    public let path: String
    /// The file it resolved to when it was opened.
    public let resolved: String
    private let descriptor: Int32

    private init(path: String, resolved: String, descriptor: Int32) {
        self.path = path
        self.resolved = resolved
        self.descriptor = descriptor
    }

    deinit { _ = close(descriptor) }

    /// What opening a program found.
    public enum Opening: Sendable {
        /// Nothing is at the path.
        case missing
        /// Something is there that must not run, and why, with the fix where there is one.
        case refused(String)
        /// Checked, ready to start.
        case ready(CheckedExecutable)
    }

    /// Opens the program at `path` and judges the file it opened.
    public static func open(_ path: String) -> Opening {
        let descriptor = snoozefuse_open_path(path)
        guard descriptor >= 0 else {
            return errno == ENOENT ? .missing : .refused("\(path) cannot be opened: \(String(cString: strerror(errno)))")
        }
        let procPath = "/proc/self/fd/\(descriptor)"
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = close(descriptor)
            return .refused("\(path) cannot be examined: \(reason)")
        }
        let resolved = readLink(procPath) ?? path
        if let refusal = refusal(path: path, resolved: resolved, status: status, executable: access(procPath, X_OK) == 0) {
            _ = close(descriptor)
            return .refused(refusal)
        }
        return .ready(CheckedExecutable(path: path, resolved: resolved, descriptor: descriptor))
    }

    /// Starts the checked file (see ``ProcessSpawn/start(_:_:descriptors:grouping:environment:creator:)``;
    /// the child also gets the file itself as its lowest free descriptor from 3, which a script's
    /// interpreter reads it through). Its `argv[0]` is ``path``, but a script's `$0` is
    /// `/proc/self/fd/N`: give the path in its environment where a script needs it.
    public func start(_ arguments: [String], descriptors: [Int32: ProcessSpawn.Descriptor],
                      grouping: ProcessSpawn.Grouping = .same, environment: [String: String]? = nil) throws(SpawnError) -> Int32 {
        let number = max(descriptors.keys.max() ?? 2, 2) + 1
        var all = descriptors
        all[number] = .inherit(descriptor)
        // ETXTBSY: the file is open for writing somewhere (an editor saving it, a child that some
        // thread started while the file was being written inherited its descriptor); that passes
        // within moments, so it is tried again for up to a second.
        for attempt in 1 ... 20 {
            do {
                return try ProcessSpawn.start("/proc/self/fd/\(number)", arguments, descriptors: all, grouping: grouping,
                                              environment: environment, programName: path)
            } catch where error.code == ETXTBSY && attempt < 20 {
                usleep(50_000)
            }
        }
        throw SpawnError(executable: path, code: ETXTBSY)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Why the file (`status`, resolved to `resolved`) must not run, or nil (``TrustedPlaces``).
    static func refusal(path: String, resolved: String, status: stat, executable: Bool) -> String? {
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        guard executable else { return "\(path) is not executable; chmod u+x \(path)" }
        let user = geteuid()
        func describe(_ place: String, _ problem: TrustedPlaces.Problem) -> String {
            switch problem {
            case .ownedBy(let owner): "\(place) belongs to uid \(owner), neither you nor root"
            case .writableByOthers(let mode): "others can change \(place) (mode \(String(mode & 0o7777, radix: 8))); chmod go-w \(place)"
            case .unexaminable(let reason): "\(place) cannot be examined: \(reason)"
            }
        }
        if let problem = TrustedPlaces.problem(owner: status.st_uid, mode: status.st_mode, user: user, stickyAllowed: false) { return describe(path, problem) }
        return TrustedPlaces.firstProblem(inFoldersAbove: resolved, user: user).map { describe($0.folder, $0.problem) }
    }
}

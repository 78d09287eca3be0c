import Foundation
import Synchronization
import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A plugin instance running in a child process of its own: the crash-isolation boundary.
///
/// The child is the plugin host program (`snoozefuse-plugin-host serve …`), started in its own
/// process group (so Ctrl-C on the terminal reaches only the parent). The parent keeps one
/// end of a pipe: a sound source's child writes float frames into it; an emitter's child reads pulse
/// commands from it. When the parent exits, the pipe breaks and the child ends. A thread of the
/// parent waits for the child (`waitpid`, no polling) and reports how it ended.
public final class PluginChildProcess: Sendable {
    public enum Role: Sendable { case readsFromChild, writesToChild }

    public let pid: Int32
    public let info: PluginInfo
    /// The parent's end of the pipe (non-blocking).
    public let descriptor: Int32
    private final class Ending: Sendable {
        let text = Mutex<String?>(nil)
    }

    private let ending = Ending()

    /// How the child ended (`killed by signal 11 (Segmentation fault)`), or nil while it runs.
    public var exitDescription: String? { ending.text.withLock { $0 } }

    /// Starts `executable arguments…`; `onExit` is called once, on the waiting thread, when it ends.
    public init(executable: String, arguments: [String], info: PluginInfo, role: Role,
                pipeCapacity: Int32 = 1 << 20,
                onExit: @escaping @Sendable (PluginInfo, String) -> Void) throws(PluginError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw PluginError(path: info.path, reason: .processEnded("cannot create a pipe: \(String(cString: strerror(errno)))"))
        }
        let (parentEnd, childEnd, childFD) = role == .readsFromChild ? (ends[0], ends[1], Int32(1)) : (ends[1], ends[0], Int32(0))
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        // F_SETPIPE_SZ (Linux, 1031; not exported by Glibc's module): room for seconds of audio.
        _ = fcntl(parentEnd, 1031, pipeCapacity)
        _ = fcntl(parentEnd, F_SETFL, fcntl(parentEnd, F_GETFL) | O_NONBLOCK)

        let spawned: Int32
        do throws(SpawnError) {
            spawned = try ProcessSpawn.start(executable, arguments, descriptors: [
                childFD: .inherit(childEnd), role == .readsFromChild ? 0 : 1: .devNull, 2: .inherit(2),
            ], grouping: .ownProcessGroup)
        } catch {
            close(childEnd)
            close(parentEnd)
            throw PluginError(path: info.path, reason: .processEnded(error.description))
        }
        close(childEnd)
        let pid = spawned
        self.pid = pid
        self.info = info
        descriptor = parentEnd
        SystemThread.start(named: "snoozefuse-plugin-wait") { [ending] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let text = ProcessSpawn.describe(status)
            ending.text.withLock { $0 = text }
            onExit(info, text)
        }
    }

    deinit {
        close(descriptor)
    }

    /// Kills the child (tests and shutdown).
    public func kill(signal: Int32 = 9 /* SIGKILL */) {
        _ = Glibc.kill(pid, signal)
    }
}

/// The parent's side of an emitter's child process: pulses are written to its pipe without
/// blocking; when the pipe is full (the child is busy) the pulse is dropped.
public final class PluginProcessEmitter: Sendable {
    public let child: PluginChildProcess
    private let broken = Atomic<Bool>(false)

    public init(child: PluginChildProcess) {
        self.child = child
    }

    /// Hands a pulse over; never waits. Returns false when it was dropped or the child has ended.
    @discardableResult
    public func emit(intensity: Double, duration: Duration) -> Bool {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return send("e \(String(format: "%.3f", min(max(intensity, 0), 1))) \(max(milliseconds, 0))\n")
    }

    @discardableResult
    public func cancel() -> Bool { send("c\n") }

    private func send(_ line: String) -> Bool {
        guard !broken.load(ordering: .relaxed) else { return false }
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(child.descriptor, $0.baseAddress, $0.count) }
        if written == bytes.count { return true }
        if written < 0 && errno == EPIPE { broken.store(true, ordering: .relaxed) }
        return false
    }
}

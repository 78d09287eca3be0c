import Synchronization
import SnoozeFuseCore
public import SnoozeFuseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A plugin instance running in a child process of its own: the crash-isolation boundary.
///
/// The child is the plugin host program (`snoozefuse-plugin-host serve …`), started in a process
/// group of its own (Ctrl-C on the terminal reaches only the parent) by the process's spawning
/// thread; it asks the kernel to kill it when this process ends (`--parent-pid`), so it dies with
/// its nap even when the nap is killed. The parent keeps one end of a pipe: a sound source's child
/// writes float frames into it; an emitter's child reads pulse commands from it and answers each
/// pulse on a second pipe. A reaper thread waits for the child (no polling), kills whatever is left
/// of its group and reports how it ended; ``finish(waitingAtMost:)`` ends it on purpose.
public final class PluginChildProcess: Sendable {
    public enum Role: Sendable { case readsFromChild, writesToChild }

    public var pid: Int32 { group.pid }
    public let info: PluginInfo
    /// The parent's end of the pipe (non-blocking): frames for a source, commands for an emitter.
    public let descriptor: Int32
    /// An emitter's answers (non-blocking; -1 for a source).
    public let answers: Int32
    private let group: ChildProcessGroup
    private let state: State

    private final class State: Sendable {
        /// How it ended, once it has.
        let ending = Locked<String?>(nil)
        /// Why it was killed as hung, when it was.
        let hung = Locked<String?>(nil)
        /// Ended on purpose: its end is nobody's news.
        let finishing = Atomic<Bool>(false)
        /// The command pipe was closed by ``finish(waitingAtMost:)``.
        let closed = Atomic<Bool>(false)
    }

    /// How the child ended (`killed by signal 11 (Segmentation fault)`, `hung: …`), or nil while it runs.
    public var exitDescription: String? { state.ending.withLock { $0 } }

    /// Starts `executable arguments…`; `onExit` is called once, on the reaper's thread, when it
    /// ends, with how (not when it was ended on purpose by ``finish(waitingAtMost:)``).
    ///
    /// The child's standard error goes to `errorLog` (capped; its host program's own warnings to
    /// `warn` as well), or to this process's standard error when there is none.
    public init(executable: String, arguments: [String], info: PluginInfo, role: Role,
                pipeCapacity: Int32 = 1 << 20, errorLog: PluginErrorLog? = nil,
                warn: @escaping @Sendable (String) -> Void = { _ in },
                onExit: @escaping @Sendable (PluginInfo, String) -> Void) throws(PluginError) {
        func pipeEnds() throws(PluginError) -> (read: Int32, write: Int32) {
            guard let ends = makePipe() else {
                throw PluginError(path: info.path, reason: .processEnded("cannot create a pipe: \(String(cString: strerror(errno)))"))
            }
            return ends
        }
        let main = try pipeEnds()
        let answerPipe: (read: Int32, write: Int32)?
        do throws(PluginError) {
            answerPipe = role == .writesToChild ? try pipeEnds() : nil
        } catch {
            close(main.read)
            close(main.write)
            throw error
        }
        let errorPipe: (read: Int32, write: Int32)?
        do throws(PluginError) {
            errorPipe = errorLog == nil ? nil : try pipeEnds()
        } catch {
            for end in [main.read, main.write, answerPipe?.read ?? -1, answerPipe?.write ?? -1] where end >= 0 { close(end) }
            throw error
        }
        let (parentEnd, childEnd) = role == .readsFromChild ? (main.read, main.write) : (main.write, main.read)
        // F_SETPIPE_SZ (Linux, 1031; not exported by Glibc's module): room for seconds of audio.
        _ = fcntl(parentEnd, 1031, pipeCapacity)
        _ = fcntl(parentEnd, F_SETFL, fcntl(parentEnd, F_GETFL) | O_NONBLOCK)
        if let answerPipe { _ = fcntl(answerPipe.read, F_SETFL, fcntl(answerPipe.read, F_GETFL) | O_NONBLOCK) }
        let errors = ProcessSpawn.Descriptor.inherit(errorPipe?.write ?? 2)
        let descriptors: [Int32: ProcessSpawn.Descriptor] = role == .readsFromChild
            ? [0: .devNull, 1: .inherit(childEnd), 2: errors]
            : [0: .inherit(childEnd), 1: .inherit(answerPipe?.write ?? -1), 2: errors]
        let state = State()
        let errorOutput = PluginErrorOutput()
        do throws(SpawnError) {
            group = try ChildProcessGroup(executable, arguments, descriptors: descriptors,
                                          environment: PluginHostProgram.childEnvironment) { status in
                errorOutput.childEnded()
                let text = state.hung.withLock { $0 }.map { "hung: \($0); killed" } ?? ProcessSpawn.describe(status)
                state.ending.withLock { $0 = text }
                if !state.finishing.load(ordering: .acquiring) { onExit(info, text) }
            }
        } catch {
            close(childEnd)
            close(parentEnd)
            if let answerPipe {
                close(answerPipe.read)
                close(answerPipe.write)
            }
            if let errorPipe {
                close(errorPipe.read)
                close(errorPipe.write)
            }
            throw PluginError(path: info.path, reason: .processEnded(error.description))
        }
        close(childEnd)
        if let answerPipe { close(answerPipe.write) }
        if let errorPipe, let errorLog {
            close(errorPipe.write)
            _ = errorOutput.start(reading: errorPipe.read,
                                 into: PluginErrorLogWriter(instance: "plugin \(info.id) [\(group.pid)]", destination: errorLog, warn: warn))
        }
        self.info = info
        self.state = state
        descriptor = parentEnd
        answers = answerPipe?.read ?? -1
    }

    deinit {
        if !state.closed.load(ordering: .acquiring) { close(descriptor) }
        if answers >= 0 { close(answers) }
    }

    /// Kills the child's whole process group (tests and shutdown).
    public func kill(signal: Int32 = 9 /* SIGKILL */) {
        group.signalGroup(signal)
    }

    /// Kills the child's group as hung: its end is then reported as `hung: REASON; killed`.
    /// The first reason given is kept. SIGTERM first: the host program answers it on a thread of
    /// its own, however its plugin hangs, by ending what the plugin detached (it is their child
    /// subreaper) and exiting; what is left after ``termGrace`` is SIGKILLed. A host SIGKILLed at
    /// once left the plugin's detached processes to the nap, unmarked when the plugin had emptied
    /// their environment. Never blocks: the threads that watch a plugin call it.
    public func killAsHung(_ reason: String) {
        state.hung.withLock { $0 = $0 ?? reason }
        group.signalGroup(SIGTERM)
        let group = group
        let started = SystemThread.start(named: "sf-plugin-kill") {
            if group.waitForEnd(atMost: Self.termGrace) == nil { group.signalGroup(SIGKILL) }
        }
        if !started { group.signalGroup(SIGKILL) }
    }

    /// Ends the child on purpose, on every way out of a nap: an emitter's command pipe is closed
    /// (it cancels and destroys its instance, putting its device back, and ends); then, a source at
    /// once, the group gets SIGTERM (the host ends what its plugin detached, and exits) and after
    /// ``termGrace`` what is left of it is killed. Its end is not reported. Returns once it has
    /// been reaped (or after `grace`, the term grace and a second).
    public func finish(waitingAtMost grace: Duration) {
        state.finishing.store(true, ordering: .releasing)
        if answers >= 0 {
            if !state.closed.exchange(true, ordering: .acquiringAndReleasing) { close(descriptor) }
            if group.waitForEnd(atMost: grace) != nil { return }
        }
        group.signalGroup(SIGTERM)
        if group.waitForEnd(atMost: Self.termGrace) != nil { return }
        group.terminate(waitingAtMost: .seconds(1))
    }

    /// How long a host asked to end (SIGTERM) has before it is killed.
    static let termGrace = Duration.milliseconds(500)
    /// How long an emitter's process has, when the nap ends, to cancel, destroy and end (and how
    /// long its host program waits for `destroy`).
    public static let emitterEndLimit = Duration.seconds(1)

    /// Waits at most `limit` for the child's end; its wait status.
    public func waitForEnd(atMost limit: Duration) -> Int32? {
        group.waitForEnd(atMost: limit)
    }
}

/// The parent's side of an emitter's child process: pulses are written to its pipe without
/// blocking; when the pipe is full (the child is busy) the pulse is dropped. Each pulse is tagged,
/// and the child answers every tag (done or dropped): a pulse whose answer is overdue (see
/// ``EmitterLiveness``) means the plugin's emit no longer returns, and the child is killed as hung.
public final class PluginProcessEmitter: Sendable {
    public let child: PluginChildProcess
    private let state: Locked<State>

    private struct State {
        var liveness: EmitterLiveness<BootInstant>
        var nextTag: UInt64 = 1
        var pending: [UInt8] = []
        var broken = false
    }

    public init(child: PluginChildProcess, liveness: EmitterLiveness<BootInstant> = EmitterLiveness(started: .now)) {
        self.child = child
        state = Locked(State(liveness: liveness))
    }

    /// Hands a pulse over; never waits. Returns false when it was dropped, the child has ended,
    /// or the child was just found hung (and killed).
    @discardableResult
    public func emit(intensity: Double, duration: Duration) -> Bool {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return state.withLock { state in
            guard checked(&state, at: .now) else { return false }
            let tag = state.nextTag
            state.nextTag += 1
            guard send("e \(tag) \(DecimalText.fixed(min(max(intensity, 0), 1), decimals: 3)) \(max(milliseconds, 0))\n", &state) else { return false }
            state.liveness.sent(tag, lasting: duration, at: .now)
            return true
        }
    }

    /// Ends the child on purpose (the nap is over): nothing is sent any more, its command pipe is
    /// closed so it puts its device back and ends, and its group is killed after `grace`.
    public func finish(waitingAtMost grace: Duration) {
        state.withLock { $0.broken = true }
        child.finish(waitingAtMost: grace)
    }

    @discardableResult
    public func cancel() -> Bool {
        state.withLock { state in checked(&state, at: .now) && send("c\n", &state) }
    }

    /// Reads the child's answers and judges it at `now`: false when it is gone or hung (then killed).
    public func checkLiveness(at now: BootInstant = .now) -> Bool {
        state.withLock { checked(&$0, at: now) }
    }

    private func checked(_ state: inout State, at now: BootInstant) -> Bool {
        guard !state.broken else { return false }
        readAnswers(&state)
        if case .hung(let tag, let length, let late) = state.liveness.verdict(at: now) {
            state.broken = true
            child.killAsHung("its emit of pulse \(tag) (\(length.millisecondsDescription) long) had not returned \(late.millisecondsDescription) past its limit, the pulse's length plus \(state.liveness.limits.budget.millisecondsDescription)")
            return false
        }
        return true
    }

    private func readAnswers(_ state: inout State) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(child.answers, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            state.pending.append(contentsOf: chunk[0 ..< count])
        }
        while let newline = state.pending.firstIndex(of: UInt8(ascii: "\n")) {
            let words = state.pending[..<newline].split(separator: UInt8(ascii: " "))
            state.pending.removeSubrange(...newline)
            if words.count == 2, words[0] == [UInt8(ascii: "d")] || words[0] == [UInt8(ascii: "x")],
               let tag = UInt64(String(decoding: words[1], as: UTF8.self)) {
                state.liveness.answered(tag)
            }
        }
    }

    private func send(_ line: String, _ state: inout State) -> Bool {
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { write(child.descriptor, $0.baseAddress, $0.count) }
        if written == bytes.count { return true }
        if written < 0 && (errno == EPIPE || errno == EBADF) { state.broken = true }
        return false
    }
}

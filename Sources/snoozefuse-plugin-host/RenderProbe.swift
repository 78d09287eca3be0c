import CPluginProbe
import Glibc
import SnoozeFusePluginHost

/// The validator's watch on render in this program (see `CPluginProbe`): a seccomp filter on the
/// rendering thread that traps and counts every system call, and this program's own malloc, which
/// counts every allocation made between the hooks.
struct SeccompRenderProbe: RenderProbe {
    func watchCallingThread() -> String? {
        let code = snoozefuse_probe_watch_thread()
        guard code != 0 else { return nil }
        return code == ENOSYS ? "not on this machine (x86_64 only)" : "seccomp refused the filter: \(String(cString: strerror(code)))"
    }

    var hooks: RenderCallHooks {
        RenderCallHooks(enter: snoozefuse_probe_enter, leave: snoozefuse_probe_leave)
    }

    func report() -> RenderProbeReport {
        var calls: [String: Int] = [:]
        for number in -1 ..< snoozefuse_probe_syscall_limit() {
            let count = snoozefuse_probe_syscall_count(number)
            guard count > 0 else { continue }
            let name = number < 0 ? "other" : snoozefuse_probe_syscall_name(number).map { String(cString: $0) } ?? "syscall \(number)"
            calls[name] = Int(count)
        }
        return RenderProbeReport(systemCalls: calls, allocations: Int(snoozefuse_probe_allocations()),
                                 frees: Int(snoozefuse_probe_frees()))
    }
}

#ifndef SNOOZEFUSE_PLUGIN_PROBE_H
#define SNOOZEFUSE_PLUGIN_PROBE_H

/* What a plugin's render does, seen from inside the process that runs it: the validator's watch
 * (`plugins check`, check source-realtime). Linked into snoozefuse-plugin-host only: it replaces
 * malloc and its family for the whole process (each allocation made between enter and leave, on
 * the thread that entered, is counted, then passed to glibc's allocator).
 *
 * System calls are watched with a seccomp filter installed on one thread: every system call that
 * thread makes traps (SIGSYS) unless it comes from the probe's own system-call instruction. The
 * handler counts it while between enter and leave, then makes it from that instruction and hands
 * back its result, so the plugin runs as it would otherwise (process-creating calls excepted: they
 * fail with EPERM while watched). The filter lives and dies with the thread. x86_64 only; on other
 * machines snoozefuse_probe_watch_thread says ENOSYS and only allocations are counted. */

/* Installs the filter on the calling thread (and the SIGSYS handler of the process). Returns 0,
 * or the errno that says why not (ENOSYS: not on this machine; EINVAL/EPERM: seccomp refused). */
int snoozefuse_probe_watch_thread(void);

/* Starts and stops counting, for the calling thread: run right before and after each render. */
void snoozefuse_probe_enter(void);
void snoozefuse_probe_leave(void);

/* How many system calls of each number were counted; numbers from 0 to
 * snoozefuse_probe_syscall_limit() - 1. Calls the table has no room for are counted under -1. */
int snoozefuse_probe_syscall_limit(void);
unsigned long snoozefuse_probe_syscall_count(int number);
/* The name of a system call number ("write"), or NULL when unknown. */
const char *snoozefuse_probe_syscall_name(int number);

/* Allocations (malloc, calloc, realloc, memalign, aligned_alloc, posix_memalign, valloc, pvalloc,
 * reallocarray) and frees counted. */
unsigned long snoozefuse_probe_allocations(void);
unsigned long snoozefuse_probe_frees(void);

#endif

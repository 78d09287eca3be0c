#ifndef SNOOZEFUSE_CLINUX_SHIM_H
#define SNOOZEFUSE_CLINUX_SHIM_H

/* Linux interfaces that Swift's Glibc module does not export (as swift-nio's CNIOLinux does). */
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Starts writing back a file's dirty pages without waiting for them (sync_file_range with
 * SYNC_FILE_RANGE_WRITE; glibc declares it only under _GNU_SOURCE). Returns 0 or -1 with errno. */
static inline int snoozefuse_start_writeback(int fd) {
    return (int)syscall(SYS_sync_file_range, fd, (long long)0, (long long)0, 2u /* SYNC_FILE_RANGE_WRITE */);
}

/* Names the calling thread (as `ps -L`, `top -H`, gdb and perf show it; at most 15 bytes are kept).
 * prctl is variadic and pthread_setname_np needs _GNU_SOURCE: both unreachable from Swift. */
static inline int snoozefuse_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#endif

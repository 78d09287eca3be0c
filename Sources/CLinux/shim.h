#ifndef SNOOZEFUSE_CLINUX_SHIM_H
#define SNOOZEFUSE_CLINUX_SHIM_H

/* Linux interfaces that Swift's Glibc module does not export (as swift-nio's CNIOLinux does). */
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Starts writing back a file's dirty pages without waiting for them (sync_file_range with
 * SYNC_FILE_RANGE_WRITE; glibc declares it only under _GNU_SOURCE). Returns 0 or -1 with errno. */
static inline int snoozefuse_start_writeback(int fd) {
    return (int)syscall(SYS_sync_file_range, fd, (long long)0, (long long)0, 2u /* SYNC_FILE_RANGE_WRITE */);
}

#endif

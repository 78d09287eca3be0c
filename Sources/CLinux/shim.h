#ifndef SNOOZEFUSE_CLINUX_SHIM_H
#define SNOOZEFUSE_CLINUX_SHIM_H

/* Linux interfaces that Swift's Glibc module does not export (as swift-nio's CNIOLinux does). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <linux/input.h>
#include <malloc.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The commit the program was built from: `make build` links an object that defines
 * snoozefuse_build_commit (.build/build-stamp.o, made from `git describe`); a plain `swift build`
 * links none, and the weak reference is then null. */
const char *snoozefuse_build_commit(void) __attribute__((weak));
static inline const char *snoozefuse_build_commit_or_null(void) {
    return snoozefuse_build_commit ? snoozefuse_build_commit() : 0;
}

/* Starts writing back a file's dirty pages without waiting for them (sync_file_range with
 * SYNC_FILE_RANGE_WRITE; glibc declares it only under _GNU_SOURCE). Returns 0 or -1 with errno. */
static inline int snoozefuse_start_writeback(int fd) {
    return (int)syscall(SYS_sync_file_range, fd, (long long)0, (long long)0, 2u /* SYNC_FILE_RANGE_WRITE */);
}

/* Moves the calling thread (not the process) to SCHED_FIFO at `priority`, with SCHED_RESET_ON_FORK
 * so that nothing it starts inherits the policy (SCHED_RESET_ON_FORK needs _GNU_SOURCE, so its value
 * is spelled here). Returns 0, or the errno (EPERM without CAP_SYS_NICE or an RLIMIT_RTPRIO of at
 * least `priority`). */
static inline int snoozefuse_make_current_thread_fifo(int priority) {
    struct sched_param parameter = { .sched_priority = priority };
    return sched_setscheduler(0, SCHED_FIFO | 0x40000000 /* SCHED_RESET_ON_FORK */, &parameter) == 0 ? 0 : errno;
}

/* Returns the calling thread to the ordinary policy (SCHED_OTHER). Returns 0, or the errno. */
static inline int snoozefuse_make_current_thread_ordinary(void) {
    struct sched_param parameter = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_OTHER, &parameter) == 0 ? 0 : errno;
}

/* Names the calling thread (as `ps -L`, `top -H`, gdb and perf show it; at most 15 bytes are kept).
 * prctl is variadic and pthread_setname_np needs _GNU_SOURCE: both unreachable from Swift. */
static inline int snoozefuse_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/* Accepts the next connection on `listener` already non-blocking and close-on-exec (accept4;
 * glibc declares it only under _GNU_SOURCE, so it is called through syscall). The descriptor, or
 * -1 with errno. */
static inline int snoozefuse_accept_nonblocking(int listener) {
    return (int)syscall(SYS_accept4, listener, (void *)0, (void *)0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* The uid of the process at the other end of a connected Unix socket (SO_PEERCRED; struct ucred
 * is declared only under _GNU_SOURCE, so its stable layout is spelled here). 0 or -1 with errno. */
static inline int snoozefuse_peer_uid(int fd, unsigned int *uid) {
    struct { int pid; unsigned int uid; unsigned int gid; } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    return 0;
}

/* A descriptor that becomes readable when process `pid` (a child of this process) ends: pidfd_open
 * (Linux 5.3; glibc 2.36 declares no wrapper). Returns the descriptor, or -1 with errno. */
static inline int snoozefuse_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0u);
}

/* Makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER; prctl is variadic): what its
 * descendants orphan (a double fork, a daemon) becomes its child, not init's. 0, or -1 with errno. */
static inline int snoozefuse_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
}

/* Whether the calling process is a child subreaper (PR_GET_CHILD_SUBREAPER): 1, 0, or -1 with errno. */
static inline int snoozefuse_is_subreaper(void) {
    int flag = 0;
    if (prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&flag, 0UL, 0UL, 0UL) != 0) return -1;
    return flag != 0;
}

/* Asks the kernel to SIGKILL the calling process when its parent ends (PR_SET_PDEATHSIG; prctl is
 * variadic), then checks that the parent is still `expected_parent`: it may have ended before the
 * request, and then the signal would never come. 0, or -1 with errno (ESRCH: the parent is gone). */
static inline int snoozefuse_die_with_parent(int expected_parent) {
    if (prctl(PR_SET_PDEATHSIG, (unsigned long)SIGKILL, 0UL, 0UL, 0UL) != 0) return -1;
    if (getppid() != expected_parent) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}

/* SIGTERM as a byte on a pipe: the handler only writes one byte (async-signal-safe), and a thread
 * of the program reads the other end and does what ending takes. The handler is reset to the
 * default on exec, and no signal is blocked, so what the process starts is not affected. Once per
 * process; returns the read end (close-on-exec), or -1 with errno. */
static int snoozefuse_term_pipe_write_end = -1;

static void snoozefuse_on_term(int number) {
    (void)number;
    char byte = 1;
    ssize_t written = write(snoozefuse_term_pipe_write_end, &byte, 1);
    (void)written;
}

static inline int snoozefuse_term_pipe(void) {
    int ends[2];
    if (syscall(SYS_pipe2, ends, 02000000 /* O_CLOEXEC */) != 0) return -1;
    snoozefuse_term_pipe_write_end = ends[1];
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = snoozefuse_on_term;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    return ends[0];
}

/* pipe2 with O_CLOEXEC (declared only under _GNU_SOURCE): both ends close-on-exec from the start,
 * so no child started meanwhile by another thread inherits them. 0, or -1 with errno. */
static inline int snoozefuse_pipe_cloexec(int ends[2]) {
    return (int)syscall(SYS_pipe2, ends, 02000000 /* O_CLOEXEC */);
}

/* Opens `path` (a link followed) as O_PATH | O_CLOEXEC: a descriptor that names the file without
 * reading it, to judge with fstat and to run through /proc/self/fd (O_PATH needs _GNU_SOURCE). */
static inline int snoozefuse_open_path(const char *path) {
    return (int)syscall(SYS_openat, AT_FDCWD, path, 010000000 /* O_PATH */ | 02000000 /* O_CLOEXEC */);
}

/* renameat2 with RENAME_EXCHANGE (declared only under _GNU_SOURCE): `a` and `b` trade names in one
 * step, both staying on disk. 0, or -1 with errno (EINVAL where the file system cannot). */
static inline int snoozefuse_exchange_names(const char *a, const char *b) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
}

/* evdev (linux/input.h), for a held key's true release: which keys are down now (EVIOCGKEY), which
 * keys a device has (EVIOCGBIT of EV_KEY), its name (EVIOCGNAME). Each returns the ioctl's result:
 * the bytes written, or -1 with errno (ENOTTY: not an input device). Nothing here reads events. */
static inline int snoozefuse_evdev_keys_down(int fd, unsigned char *bits, int length) {
    return ioctl(fd, EVIOCGKEY(length), bits);
}
static inline int snoozefuse_evdev_key_capabilities(int fd, unsigned char *bits, int length) {
    return ioctl(fd, EVIOCGBIT(EV_KEY, length), bits);
}
static inline int snoozefuse_evdev_name(int fd, char *name, int length) {
    return ioctl(fd, EVIOCGNAME(length), name);
}

/* posix_spawn's POSIX_SPAWN_SETSID (glibc 2.26): declared only under _GNU_SOURCE. */
static const short snoozefuse_posix_spawn_setsid = 0x80;

// glibc 2.34+: the child closes every descriptor from `from` on (after the other file actions).
// Declared here: <spawn.h> shows it only to _GNU_SOURCE, which the Swift importer does not set.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int snoozefuse_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif

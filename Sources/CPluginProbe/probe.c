/* The validator's watch on render; see include/plugin_probe.h. Everything here may run inside a
 * signal handler or inside malloc: no allocation, no locks, no stdio. */
#define _GNU_SOURCE
#include "plugin_probe.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYSCALL_LIMIT 512

static unsigned long syscall_counts[SYSCALL_LIMIT];
static unsigned long other_syscalls;
static unsigned long allocations;
static unsigned long frees;
/* Set between enter and leave, on the watched thread. */
static __thread int counting;

static inline void add(unsigned long *counter) { __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED); }

void snoozefuse_probe_enter(void) { counting = 1; }
void snoozefuse_probe_leave(void) { counting = 0; }
int snoozefuse_probe_syscall_limit(void) { return SYSCALL_LIMIT; }

unsigned long snoozefuse_probe_syscall_count(int number) {
    if (number < 0) return __atomic_load_n(&other_syscalls, __ATOMIC_RELAXED);
    if (number >= SYSCALL_LIMIT) return 0;
    return __atomic_load_n(&syscall_counts[number], __ATOMIC_RELAXED);
}

unsigned long snoozefuse_probe_allocations(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }
unsigned long snoozefuse_probe_frees(void) { return __atomic_load_n(&frees, __ATOMIC_RELAXED); }

/* ---- malloc and its family: count, then glibc's own allocator ---------------------------------- */

/* Under AddressSanitizer or ThreadSanitizer the sanitizer owns malloc: a definition here would take
 * its allocator away and run, instrumented, before its start-up (a sanitized test binary crashed
 * in it while the sanitizer looked up its interceptors). The count comes from its hooks instead. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SNOOZEFUSE_PROBE_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SNOOZEFUSE_PROBE_SANITIZED 1
#endif

#if defined(SNOOZEFUSE_PROBE_SANITIZED)
extern int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                                     void (*free_hook)(const volatile void *));

static void count_allocation(const volatile void *pointer, size_t size) {
    (void)pointer;
    (void)size;
    if (counting) add(&allocations);
}

static void count_free(const volatile void *pointer) {
    if (pointer && counting) add(&frees);
}

__attribute__((constructor)) static void install_allocation_hooks(void) {
    __sanitizer_install_malloc_and_free_hooks(count_allocation, count_free);
}
#elif defined(__GLIBC__)
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

void *malloc(size_t size) {
    if (counting) add(&allocations);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (counting) add(&allocations);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (counting) add(&allocations);
    return __libc_realloc(pointer, size);
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(pointer, total);
}

void *memalign(size_t alignment, size_t size) {
    if (counting) add(&allocations);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting) add(&allocations);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (counting) add(&allocations);
    if (alignment == 0 || alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *out = pointer;
    return 0;
}

void *valloc(size_t size) {
    if (counting) add(&allocations);
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    if (counting) add(&allocations);
    return __libc_pvalloc(size);
}

void free(void *pointer) {
    if (pointer && counting) add(&frees);
    __libc_free(pointer);
}
#endif

/* ---- System calls: a seccomp filter that traps, a handler that counts and passes them on ------- */

#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <ucontext.h>

/* long snoozefuse_probe_syscall6(long number, long a, long b, long c, long d, long e, long f):
 * the one system-call instruction the filter lets through (it checks the address after it). */
long snoozefuse_probe_syscall6(long number, long a, long b, long c, long d, long e, long f);
extern const char snoozefuse_probe_syscall_return[];
__asm__(".text\n"
        ".globl snoozefuse_probe_syscall6\n"
        ".type snoozefuse_probe_syscall6,@function\n"
        "snoozefuse_probe_syscall6:\n"
        "    movq %rdi, %rax\n"
        "    movq %rsi, %rdi\n"
        "    movq %rdx, %rsi\n"
        "    movq %rcx, %rdx\n"
        "    movq %r8, %r10\n"
        "    movq %r9, %r8\n"
        "    movq 8(%rsp), %r9\n"
        "    syscall\n"
        ".globl snoozefuse_probe_syscall_return\n"
        "snoozefuse_probe_syscall_return:\n"
        "    ret\n"
        ".size snoozefuse_probe_syscall6, .-snoozefuse_probe_syscall6\n");

static void on_sigsys(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    greg_t *registers = ((ucontext_t *)context)->uc_mcontext.gregs;
    long number = info->si_syscall;
    if (info->si_arch != AUDIT_ARCH_X86_64 || number < 0 || number >= 0x40000000L /* x32 */) {
        if (counting) add(&other_syscalls);
        registers[REG_RAX] = -ENOSYS;
        return;
    }
    if (counting) add(number < SYSCALL_LIMIT ? &syscall_counts[number] : &other_syscalls);
    if (counting && (number == SYS_clone || number == SYS_clone3 || number == SYS_fork || number == SYS_vfork ||
                     number == SYS_execve || number == SYS_execveat)) {
        registers[REG_RAX] = -EPERM;
        return;
    }
    registers[REG_RAX] = snoozefuse_probe_syscall6(number, registers[REG_RDI], registers[REG_RSI], registers[REG_RDX],
                                                   registers[REG_R10], registers[REG_R8], registers[REG_R9]);
}

int snoozefuse_probe_watch_thread(void) {
    uint64_t allowed = (uint64_t)(uintptr_t)snoozefuse_probe_syscall_return;
    struct sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* Returning from the handler, and ending the thread or the process, always go through. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* The probe's own system-call instruction goes through; everything else traps. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(allowed >> 32), 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)allowed, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
    struct sock_fprog filter = {(unsigned short)(sizeof program / sizeof program[0]), program};
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigsys;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) return errno;
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
    /* Required to install a filter without CAP_SYS_ADMIN; this process runs no setuid program after. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0) return errno;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &filter) != 0) return errno;
    return 0;
}
#else
int snoozefuse_probe_watch_thread(void) { return ENOSYS; }
#endif

/* A C library linked on first use instead of at start-up (issue 23).
 *
 * Linked the usual way, every library the program needs, and every library those need, is loaded
 * and relocated by every start, though `status`, `stop` or `--version` never call them: libsndfile
 * alone is about 1.2 ms of each start. Here every function the program calls is a small hidden
 * trampoline that jumps through a pointer. The pointer starts at a stub that loads the library
 * (dlopen, once) and fills every pointer of it, then jumps on: the first call of any of its
 * functions loads it, with every argument as it was. A call never finds an empty pointer.
 * `snoozefuse_<library>_load()` loads it ahead of time and says why it cannot; call it where a
 * failure can be told (a nap's start), so that the stub's last resort (say why on standard
 * error and exit 70, as the dynamic loader would have refused to start the program) is never met.
 *
 * The Swift code calls the library as before: the compiler checks the calls against the
 * library's own header, and a function used but not listed fails the link (an undefined symbol),
 * never at run time (for SQLite, whose -lsqlite3 GRDB asks for, an unlisted function would link
 * the library at start-up again: the tests of the loader's account catch that). The trampolines
 * are hidden: a program may export its symbols (SwiftPM's debug builds do), and the library's
 * own calls, and its plugins', must not come through them.
 *
 * Include this once, from the library's own .c file, after defining:
 *   SNOOZEFUSE_LAZY_LIBRARY       a C identifier: the loader is snoozefuse_<it>_load
 *   SNOOZEFUSE_LAZY_SONAME        the file dlopen opens ("libsndfile.so.1")
 *   SNOOZEFUSE_LAZY_PACKAGE       the Debian package that installs it, for the message
 *   SNOOZEFUSE_LAZY_FUNCTIONS(X)  X(name) for every function of it the program calls
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "snoozefuse_lazy_fail.h"

#define SNOOZEFUSE_LAZY_CAT_(a, b) a##b
#define SNOOZEFUSE_LAZY_CAT(a, b) SNOOZEFUSE_LAZY_CAT_(a, b)
#define SNOOZEFUSE_LAZY_STR_(a) #a
#define SNOOZEFUSE_LAZY_STR(a) SNOOZEFUSE_LAZY_STR_(a)

#define SNOOZEFUSE_LAZY_LOAD SNOOZEFUSE_LAZY_CAT(SNOOZEFUSE_LAZY_CAT(snoozefuse_, SNOOZEFUSE_LAZY_LIBRARY), _load)
#define SNOOZEFUSE_LAZY_RESOLVE SNOOZEFUSE_LAZY_CAT(snoozefuse_lazy_resolve_, SNOOZEFUSE_LAZY_LIBRARY)
#define SNOOZEFUSE_LAZY_COMMON SNOOZEFUSE_LAZY_STR(SNOOZEFUSE_LAZY_CAT(snoozefuse_lazy_common_, SNOOZEFUSE_LAZY_LIBRARY))

/* Each function's pointer, starting at its stub. */
#define SNOOZEFUSE_LAZY_SLOT(name) \
    __attribute__((visibility("hidden"))) void snoozefuse_lazy_stub_##name(void); \
    __attribute__((visibility("hidden"))) void *snoozefuse_lazy_slot_##name = (void *)snoozefuse_lazy_stub_##name;
SNOOZEFUSE_LAZY_FUNCTIONS(SNOOZEFUSE_LAZY_SLOT)

/* The resolver the stubs call (from assembly, every argument register saved): loads or exits. */
__attribute__((visibility("hidden"), used)) void SNOOZEFUSE_LAZY_RESOLVE(void);

#if defined(__x86_64__)
/* The trampoline jumps through the pointer; the stub puts the pointer's address in r11 (scratch,
 * never an argument) and goes to the library's common part, which saves every register that can
 * carry an argument of these libraries' functions (rdi, rsi, rdx, rcx, r8, r9, rax for variadic
 * calls, xmm0-7; not the upper halves of ymm/zmm, which no C function of theirs takes), calls the
 * resolver, puts them back and jumps through the pointer, now filled. The stack is 16-byte aligned
 * at the call: 8 (return address) + 8 (rbp) + 8 * 8 + 128. Both entries start with endbr64 (a
 * no-op without CET's indirect branch tracking), since the stub is reached by an indirect jump. */
#define SNOOZEFUSE_LAZY_TRAMPOLINE(name) \
    __asm__(".pushsection .text\n" \
            ".globl " #name "\n.hidden " #name "\n.type " #name ", @function\n.p2align 4\n" #name ":\n" \
            "\tendbr64\n\tjmp *snoozefuse_lazy_slot_" #name "(%rip)\n.size " #name ", .-" #name "\n" \
            ".globl snoozefuse_lazy_stub_" #name "\n.hidden snoozefuse_lazy_stub_" #name "\n" \
            ".type snoozefuse_lazy_stub_" #name ", @function\nsnoozefuse_lazy_stub_" #name ":\n" \
            "\tendbr64\n\tleaq snoozefuse_lazy_slot_" #name "(%rip), %r11\n\tjmp " SNOOZEFUSE_LAZY_COMMON "\n" \
            ".size snoozefuse_lazy_stub_" #name ", .-snoozefuse_lazy_stub_" #name "\n" \
            ".popsection\n");
__asm__(".pushsection .text\n.p2align 4\n.type " SNOOZEFUSE_LAZY_COMMON ", @function\n" SNOOZEFUSE_LAZY_COMMON ":\n"
        "\tpushq %rbp\n\tmovq %rsp, %rbp\n"
        "\tpushq %r11\n\tpushq %rdi\n\tpushq %rsi\n\tpushq %rdx\n\tpushq %rcx\n\tpushq %r8\n\tpushq %r9\n\tpushq %rax\n"
        "\tsubq $128, %rsp\n"
        "\tmovdqu %xmm0, 0(%rsp)\n\tmovdqu %xmm1, 16(%rsp)\n\tmovdqu %xmm2, 32(%rsp)\n\tmovdqu %xmm3, 48(%rsp)\n"
        "\tmovdqu %xmm4, 64(%rsp)\n\tmovdqu %xmm5, 80(%rsp)\n\tmovdqu %xmm6, 96(%rsp)\n\tmovdqu %xmm7, 112(%rsp)\n"
        "\tcall " SNOOZEFUSE_LAZY_STR(SNOOZEFUSE_LAZY_RESOLVE) "\n"
        "\tmovdqu 0(%rsp), %xmm0\n\tmovdqu 16(%rsp), %xmm1\n\tmovdqu 32(%rsp), %xmm2\n\tmovdqu 48(%rsp), %xmm3\n"
        "\tmovdqu 64(%rsp), %xmm4\n\tmovdqu 80(%rsp), %xmm5\n\tmovdqu 96(%rsp), %xmm6\n\tmovdqu 112(%rsp), %xmm7\n"
        "\taddq $128, %rsp\n"
        "\tpopq %rax\n\tpopq %r9\n\tpopq %r8\n\tpopq %rcx\n\tpopq %rdx\n\tpopq %rsi\n\tpopq %rdi\n\tpopq %r11\n"
        "\tpopq %rbp\n"
        "\tjmp *(%r11)\n"
        ".size " SNOOZEFUSE_LAZY_COMMON ", .-" SNOOZEFUSE_LAZY_COMMON "\n.popsection\n");
#elif defined(__aarch64__)
/* The same with x16 (IP0, free at a call) for the pointer's address; the common part saves x0-x8
 * (x8: where a returned structure goes), x16 and q0-q7 in a 224-byte frame. The pointer is read
 * with acquire (ldar): the library's code is then seen as loaded by the thread that loaded it.
 * Both entries start with `bti c` (hint #34, a no-op without branch target identification). */
#define SNOOZEFUSE_LAZY_TRAMPOLINE(name) \
    __asm__(".pushsection .text\n" \
            ".globl " #name "\n.hidden " #name "\n.type " #name ", %function\n.p2align 2\n" #name ":\n" \
            "\thint #34\n\tadrp x16, snoozefuse_lazy_slot_" #name "\n\tadd x16, x16, :lo12:snoozefuse_lazy_slot_" #name "\n" \
            "\tldar x16, [x16]\n\tbr x16\n.size " #name ", .-" #name "\n" \
            ".globl snoozefuse_lazy_stub_" #name "\n.hidden snoozefuse_lazy_stub_" #name "\n" \
            ".type snoozefuse_lazy_stub_" #name ", %function\nsnoozefuse_lazy_stub_" #name ":\n" \
            "\thint #34\n\tadrp x16, snoozefuse_lazy_slot_" #name "\n\tadd x16, x16, :lo12:snoozefuse_lazy_slot_" #name "\n" \
            "\tb " SNOOZEFUSE_LAZY_COMMON "\n" \
            ".size snoozefuse_lazy_stub_" #name ", .-snoozefuse_lazy_stub_" #name "\n" \
            ".popsection\n");
__asm__(".pushsection .text\n.p2align 2\n.type " SNOOZEFUSE_LAZY_COMMON ", %function\n" SNOOZEFUSE_LAZY_COMMON ":\n"
        "\tstp x29, x30, [sp, #-224]!\n\tmov x29, sp\n"
        "\tstp x0, x1, [sp, #16]\n\tstp x2, x3, [sp, #32]\n\tstp x4, x5, [sp, #48]\n\tstp x6, x7, [sp, #64]\n"
        "\tstp x8, x16, [sp, #80]\n"
        "\tstp q0, q1, [sp, #96]\n\tstp q2, q3, [sp, #128]\n\tstp q4, q5, [sp, #160]\n\tstp q6, q7, [sp, #192]\n"
        "\tbl " SNOOZEFUSE_LAZY_STR(SNOOZEFUSE_LAZY_RESOLVE) "\n"
        "\tldp q0, q1, [sp, #96]\n\tldp q2, q3, [sp, #128]\n\tldp q4, q5, [sp, #160]\n\tldp q6, q7, [sp, #192]\n"
        "\tldp x8, x16, [sp, #80]\n"
        "\tldp x0, x1, [sp, #16]\n\tldp x2, x3, [sp, #32]\n\tldp x4, x5, [sp, #48]\n\tldp x6, x7, [sp, #64]\n"
        "\tldp x29, x30, [sp], #224\n"
        "\tldar x16, [x16]\n\tbr x16\n"
        ".size " SNOOZEFUSE_LAZY_COMMON ", .-" SNOOZEFUSE_LAZY_COMMON "\n.popsection\n");
#else
#error "lazily linked libraries have trampolines for x86_64 and aarch64 only"
#endif
SNOOZEFUSE_LAZY_FUNCTIONS(SNOOZEFUSE_LAZY_TRAMPOLINE)

/* Guarded by a mutex rather than done once: a load that failed (the library installed meanwhile,
   no memory or descriptors left) is tried again by the next call. */
static pthread_mutex_t snoozefuse_lazy_lock = PTHREAD_MUTEX_INITIALIZER;
static int snoozefuse_lazy_loaded;
/* How many times the library was opened (once, unless a load failed halfway). */
static int snoozefuse_lazy_opens;
static char snoozefuse_lazy_failure[256];

static void snoozefuse_lazy_open(void) {
    /* RTLD_LOCAL: its symbols stay its own (nothing else in the program is resolved against them).
       dlsym finds each function's default version, the one a link against the header would use. */
    void *library = dlopen(SNOOZEFUSE_LAZY_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(snoozefuse_lazy_failure, sizeof snoozefuse_lazy_failure, "%s", error ? error : "dlopen failed");
        return;
    }
    snoozefuse_lazy_opens += 1;
    void *found;
#define SNOOZEFUSE_LAZY_FILL(name) \
    found = dlsym(library, #name); \
    if (found == NULL) { \
        snprintf(snoozefuse_lazy_failure, sizeof snoozefuse_lazy_failure, SNOOZEFUSE_LAZY_SONAME " has no %s (too old?)", #name); \
        return; \
    } \
    __atomic_store_n(&snoozefuse_lazy_slot_##name, found, __ATOMIC_RELEASE);
    SNOOZEFUSE_LAZY_FUNCTIONS(SNOOZEFUSE_LAZY_FILL)
    snoozefuse_lazy_loaded = 1;
}

int SNOOZEFUSE_LAZY_LOAD(char *why, size_t size) {
    pthread_mutex_lock(&snoozefuse_lazy_lock);
    if (!snoozefuse_lazy_loaded) snoozefuse_lazy_open();
    int loaded = snoozefuse_lazy_loaded;
    if (!loaded && why != NULL && size > 0) snprintf(why, size, "%s", snoozefuse_lazy_failure);
    pthread_mutex_unlock(&snoozefuse_lazy_lock);
    return loaded ? 0 : -1;
}

void SNOOZEFUSE_LAZY_RESOLVE(void) {
    /* The call it stands in for sees the errno its caller left (dlopen's path search sets it). */
    int caller_errno = errno;
    char why[256];
    if (SNOOZEFUSE_LAZY_LOAD(why, sizeof why) != 0) snoozefuse_lazy_fail(SNOOZEFUSE_LAZY_SONAME, SNOOZEFUSE_LAZY_PACKAGE, why);
    errno = caller_errno;
}

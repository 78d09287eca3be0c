/* libpulse, loaded on first use instead of at start-up.
 *
 * Linked the usual way, libpulse and what it needs (libpulsecommon, D-Bus, X11 and xcb, libsystemd,
 * libgcrypt, compression libraries: some twenty files) are loaded and relocated by every start of
 * the program, about 4.5 ms on the benchmark machine, though `status`, `stop` or `--version` never
 * speak to a sound server (issue 23). Here each libpulse function the program calls is a small
 * trampoline of this target that jumps through a pointer; snoozefuse_pulse_load() opens libpulse
 * (dlopen) and fills the pointers, once. The Swift code calls libpulse as before: the compiler
 * checks the calls against libpulse's own header, and a function used but not listed below fails
 * the link (an undefined symbol), never at run time.
 *
 * The trampolines jump without touching a register or the stack, so they suit every signature.
 * They are hidden: the program exports its symbols (for backtraces), and libpulse's own calls to
 * its functions must not come through them. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "shim.h"

/* Every libpulse function the program calls. */
#define SNOOZEFUSE_PULSE_FUNCTIONS(X) \
    X(pa_context_connect) \
    X(pa_context_disconnect) \
    X(pa_context_errno) \
    X(pa_context_get_server_info) \
    X(pa_context_get_sink_info_by_name) \
    X(pa_context_get_sink_info_list) \
    X(pa_context_get_state) \
    X(pa_context_new_with_proplist) \
    X(pa_context_set_sink_mute_by_name) \
    X(pa_context_set_sink_volume_by_name) \
    X(pa_context_set_subscribe_callback) \
    X(pa_context_subscribe) \
    X(pa_context_unref) \
    X(pa_cvolume_max) \
    X(pa_cvolume_set) \
    X(pa_mainloop_dispatch) \
    X(pa_mainloop_free) \
    X(pa_mainloop_get_api) \
    X(pa_mainloop_new) \
    X(pa_mainloop_poll) \
    X(pa_mainloop_prepare) \
    X(pa_operation_get_state) \
    X(pa_operation_unref) \
    X(pa_proplist_free) \
    X(pa_proplist_gets) \
    X(pa_proplist_new) \
    X(pa_proplist_sets) \
    X(pa_stream_connect_playback) \
    X(pa_stream_connect_record) \
    X(pa_stream_cork) \
    X(pa_stream_disconnect) \
    X(pa_stream_drain) \
    X(pa_stream_drop) \
    X(pa_stream_flush) \
    X(pa_stream_get_state) \
    X(pa_stream_new) \
    X(pa_stream_new_with_proplist) \
    X(pa_stream_peek) \
    X(pa_stream_readable_size) \
    X(pa_stream_unref) \
    X(pa_stream_writable_size) \
    X(pa_stream_write) \
    X(pa_strerror)

/* Where each trampoline jumps: the function in libpulse, once loaded. */
#define SNOOZEFUSE_PULSE_POINTER(name) __attribute__((visibility("hidden"))) void *snoozefuse_lazy_##name;
SNOOZEFUSE_PULSE_FUNCTIONS(SNOOZEFUSE_PULSE_POINTER)

#if defined(__x86_64__)
#define SNOOZEFUSE_PULSE_TRAMPOLINE(name) \
    __asm__(".text\n.globl " #name "\n.hidden " #name "\n.type " #name ", @function\n.p2align 4\n" #name ":\n" \
            "\tjmp *snoozefuse_lazy_" #name "(%rip)\n.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
#define SNOOZEFUSE_PULSE_TRAMPOLINE(name) \
    __asm__(".text\n.globl " #name "\n.hidden " #name "\n.type " #name ", %function\n.p2align 2\n" #name ":\n" \
            "\tadrp x16, snoozefuse_lazy_" #name "\n\tldr x16, [x16, :lo12:snoozefuse_lazy_" #name "]\n\tbr x16\n" \
            ".size " #name ", .-" #name "\n");
#else
#error "libpulse's trampolines exist for x86_64 and aarch64 only"
#endif
SNOOZEFUSE_PULSE_FUNCTIONS(SNOOZEFUSE_PULSE_TRAMPOLINE)

/* Guarded by a mutex rather than done once: a load that failed (libpulse0 installed during the nap,
   no memory or descriptors left) is tried again by the next connection. */
static pthread_mutex_t snoozefuse_pulse_lock = PTHREAD_MUTEX_INITIALIZER;
static int snoozefuse_pulse_loaded;
static char snoozefuse_pulse_failure[256];

static void snoozefuse_pulse_open(void) {
    /* RTLD_LOCAL: its symbols stay its own (nothing else in the program is resolved against them). */
    void *library = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(snoozefuse_pulse_failure, sizeof snoozefuse_pulse_failure, "%s", error ? error : "dlopen failed");
        return;
    }
#define SNOOZEFUSE_PULSE_RESOLVE(name) \
    snoozefuse_lazy_##name = dlsym(library, #name); \
    if (snoozefuse_lazy_##name == NULL) { \
        snprintf(snoozefuse_pulse_failure, sizeof snoozefuse_pulse_failure, "libpulse.so.0 has no %s (too old?)", #name); \
        return; \
    }
    SNOOZEFUSE_PULSE_FUNCTIONS(SNOOZEFUSE_PULSE_RESOLVE)
    snoozefuse_pulse_loaded = 1;
}

int snoozefuse_pulse_load(char *why, size_t size) {
    pthread_mutex_lock(&snoozefuse_pulse_lock);
    if (!snoozefuse_pulse_loaded) snoozefuse_pulse_open();
    int loaded = snoozefuse_pulse_loaded;
    if (!loaded && why != NULL && size > 0) snprintf(why, size, "%s", snoozefuse_pulse_failure);
    pthread_mutex_unlock(&snoozefuse_pulse_lock);
    return loaded ? 0 : -1;
}

/* A configurable plugin for the host's tests, compiled at test time with -D flags:
 *   PLUGIN_ID="..."        the id (default "org.test.plugin")
 *   ABI_MAJOR=N            the ABI major it claims (default the header's)
 *   NO_ENTRY               export a differently named function instead of the entry
 *   NULL_RENDER            the source's render pointer is NULL
 *   RENDER_ERROR           render returns SNOOZEFUSE_STATUS_FAILED
 *   RENDER_NAN             render writes NaN
 *   CRASH_AFTER_FRAMES=N   render dereferences NULL once N frames have been rendered
 *   EMITTER                also a pulse emitter
 *   EMIT_BLOCK_MS=N        emit sleeps N ms
 *   EMIT_CRASH             emit dereferences NULL
 *   FEATURES=BITS          the descriptor's features (default 0)
 * and the attacks the host must survive:
 *   CTOR_EXIT              a constructor calls _exit(0) while the library loads
 *   CTOR_CRASH             a constructor dereferences NULL while the library loads
 *   ENTRY_HANG             snoozefuse_plugin_entry never returns
 *   RENDER_LOOP            render never returns (it spins)
 *   RENDER_SLEEP_MS=N      each render call sleeps N ms
 *   RENDER_WRITE           render writes to standard error (a system call)
 *   RENDER_MALLOC          render allocates and frees through malloc
 *   ACTIVATE_EXIT          activate calls exit(0)
 *   ACTIVATE_DETACH        activate detaches a `sleep 120` (double fork, setsid) and writes its pid
 *                          to the file named by TEST_DETACHED_PID_FILE
 *   DETACH_EMPTY_ENVIRONMENT  with ACTIVATE_DETACH: the `sleep` starts with an empty environment
 *   CREATE_EXIT            create_pulse_emitter calls exit(0)
 *   STDERR_FLOOD_BYTES=N   activate writes N bytes of lines to standard error
 *   LOG_WARNINGS=N         activate logs N warnings through host->log */
#define _GNU_SOURCE
#include "snoozefuse_plugin.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef CTOR_EXIT
__attribute__((constructor)) static void end_the_process(void) { _exit(0); }
#endif
#ifdef CTOR_CRASH
/* Through a volatile pointer: a constant NULL store is undefined behaviour the compiler may drop. */
static int *volatile nowhere;
__attribute__((constructor)) static void crash_the_process(void) { *nowhere = 1; }
#endif
#ifdef RENDER_MALLOC
static void *volatile allocated;
#endif

#ifndef PLUGIN_ID
#define PLUGIN_ID "org.test.plugin"
#endif
#ifndef ABI_MAJOR
#define ABI_MAJOR SNOOZEFUSE_PLUGIN_ABI_MAJOR
#endif

typedef struct state {
    snoozefuse_sound_source source;
    const snoozefuse_host *host;
    uint32_t channels;
    unsigned long long frames;
    double phase;
} state;

static snoozefuse_status activate(snoozefuse_sound_source *self, uint32_t rate, uint32_t channels, uint32_t max_frames,
                                  const char *config, char *message, uint32_t capacity) {
    (void)rate; (void)max_frames; (void)config; (void)message; (void)capacity;
#ifdef ACTIVATE_EXIT
    exit(0);
#endif
#ifdef ACTIVATE_DETACH
    pid_t first = fork();
    if (first == 0) {
        setsid();
        pid_t second = fork();
        if (second == 0) {
#ifdef DETACH_EMPTY_ENVIRONMENT
            char *empty[] = {NULL};
            execle("/bin/sleep", "sleep", "120", (char *)NULL, empty);
#else
            execl("/bin/sleep", "sleep", "120", (char *)NULL);
#endif
            _exit(127);
        }
        const char *file = getenv("TEST_DETACHED_PID_FILE");
        FILE *out = file ? fopen(file, "a") : NULL;
        if (out) { fprintf(out, "%d\n", (int)second); fclose(out); }
        _exit(0);
    }
    if (first > 0) waitpid(first, NULL, 0);
#endif
#ifdef STDERR_FLOOD_BYTES
    static const char line[] = "the test plugin writes this line to standard error again and again\n";
    for (long written = 0; written < STDERR_FLOOD_BYTES; written += (long)sizeof line - 1) {
        if (write(2, line, sizeof line - 1) < 0) break;
    }
#endif
#ifdef LOG_WARNINGS
    for (int i = 1; i <= LOG_WARNINGS; i++) {
        char text[64];
        snprintf(text, sizeof text, "warning number %d", i);
        const snoozefuse_host *host = ((state *)self->plugin_data)->host;
        host->log(host, 2, text);
    }
#endif
    ((state *)self->plugin_data)->channels = channels;
    return SNOOZEFUSE_STATUS_OK;
}

static snoozefuse_status render(snoozefuse_sound_source *self, float *out, uint32_t frames) {
    state *s = self->plugin_data;
#ifdef RENDER_LOOP
    for (volatile unsigned long spin = 0;; spin++) {}
#endif
#ifdef RENDER_SLEEP_MS
    struct timespec nap = {RENDER_SLEEP_MS / 1000, (RENDER_SLEEP_MS % 1000) * 1000000L};
    nanosleep(&nap, NULL);
#endif
#ifdef RENDER_WRITE
    if (write(2, "", 0) < 0) return SNOOZEFUSE_STATUS_FAILED;
#endif
#ifdef RENDER_MALLOC
    allocated = malloc(64);
    free(allocated);
#endif
#ifdef RENDER_ERROR
    (void)out; (void)frames; (void)s;
    return SNOOZEFUSE_STATUS_FAILED;
#else
    for (uint32_t i = 0; i < frames * s->channels; i++) {
#ifdef RENDER_NAN
        out[i] = NAN;
#else
        s->phase += 0.0572; /* about 440 Hz at 48 kHz */
        out[i] = (float)(0.5 * sin(s->phase));
#endif
    }
    s->frames += frames;
#ifdef CRASH_AFTER_FRAMES
    if (s->frames >= CRASH_AFTER_FRAMES) *(volatile int *)0 = 1;
#endif
    return SNOOZEFUSE_STATUS_OK;
#endif
}

static void deactivate(snoozefuse_sound_source *self) { (void)self; }
static void destroy(snoozefuse_sound_source *self) { free(self->plugin_data); }

static snoozefuse_status create_source(const snoozefuse_host *host, snoozefuse_sound_source **out, char *message,
                                       uint32_t capacity) {
    (void)message; (void)capacity;
    state *s = calloc(1, sizeof *s);
    s->host = host;
    s->source.struct_size = sizeof s->source;
    s->source.plugin_data = s;
    s->source.activate = activate;
#ifdef NULL_RENDER
    s->source.render = NULL;
#else
    s->source.render = render;
#endif
    s->source.deactivate = deactivate;
    s->source.destroy = destroy;
    *out = &s->source;
    return SNOOZEFUSE_STATUS_OK;
}

#ifdef EMITTER
static snoozefuse_status emit(snoozefuse_pulse_emitter *self, float intensity, uint32_t ms, char *message, uint32_t capacity) {
    (void)self; (void)intensity; (void)ms; (void)message; (void)capacity;
#ifdef EMIT_CRASH
    *(volatile int *)0 = 1;
#endif
#ifdef EMIT_BLOCK_MS
    struct timespec wait = {EMIT_BLOCK_MS / 1000, (EMIT_BLOCK_MS % 1000) * 1000000L};
    nanosleep(&wait, NULL);
#endif
    return SNOOZEFUSE_STATUS_OK;
}
static void cancel(snoozefuse_pulse_emitter *self) { (void)self; }
static void destroy_emitter(snoozefuse_pulse_emitter *self) { free(self); }
static snoozefuse_status create_emitter(const snoozefuse_host *host, const char *config, snoozefuse_pulse_emitter **out,
                                        char *message, uint32_t capacity) {
    (void)host; (void)config; (void)message; (void)capacity;
#ifdef CREATE_EXIT
    exit(0);
#endif
    snoozefuse_pulse_emitter *e = calloc(1, sizeof *e);
    e->struct_size = sizeof *e;
    e->emit = emit;
    e->cancel = cancel;
    e->destroy = destroy_emitter;
    *out = e;
    return SNOOZEFUSE_STATUS_OK;
}
#define KINDS (SNOOZEFUSE_KIND_SOUND_SOURCE | SNOOZEFUSE_KIND_PULSE_EMITTER)
#define CREATE_EMITTER create_emitter
#else
#define KINDS SNOOZEFUSE_KIND_SOUND_SOURCE
#define CREATE_EMITTER NULL
#endif

#ifndef FEATURES
#define FEATURES 0
#endif

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = KINDS,
    .features = FEATURES,
    .id = PLUGIN_ID,
    .name = "Test plugin",
    .version = "0.0.1",
    .vendor = "tests",
    .create_sound_source = create_source,
    .create_pulse_emitter = CREATE_EMITTER,
};

#ifdef NO_ENTRY
SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *some_other_function(void) { return &descriptor; }
#else
SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) {
#ifdef ENTRY_HANG
    for (;;) sleep(1);
#endif
    return &descriptor;
}
#endif

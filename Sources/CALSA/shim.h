#ifndef SNOOZEFUSE_CALSA_SHIM_H
#define SNOOZEFUSE_CALSA_SHIM_H

#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

/* Everything `static` in this header exists once per Swift module that imports CALSA. Only
 * SnoozeFuseAudio may call the message-capture functions below: a second importer would get its own
 * (empty) capture buffers while alsa-lib keeps calling the one handler installed last. */

/* snd_pcm_hw_params_alloca / snd_pcm_sw_params_alloca are macros: Swift cannot call them. Heap
 * allocation is fine off the audio path (parameters are negotiated once per open). */
static inline int snoozefuse_pcm_hw_params_malloc(snd_pcm_hw_params_t **params) {
    return snd_pcm_hw_params_malloc(params);
}

static inline int snoozefuse_pcm_sw_params_malloc(snd_pcm_sw_params_t **params) {
    return snd_pcm_sw_params_malloc(params);
}

/* ---------------------------------------------------------------------------------------------
 * Capturing alsa-lib's messages.
 *
 * alsa-lib reports details (`cannot find card '0'`, `Unknown PCM foo`) through one process-wide,
 * variadic (printf-style) handler that prints to stderr by default; Swift cannot implement a
 * variadic C function. The trampoline below formats each message and appends it to a buffer that
 * belongs to the calling thread. alsa-lib calls the handler synchronously on the thread that made the
 * failing call, so a thread-local buffer attributes every message to the operation that caused it,
 * even when several threads use ALSA at once.
 *
 * Usage from Swift: install once, then bracket each call with begin/end. Messages produced on a
 * thread with no open capture are dropped (never printed).
 *
 * Record format in the buffer: fields separated by 0x1F (unit separator), records terminated by
 * 0x1E (record separator): file, line, function, errno (0 if none), message text.
 * ------------------------------------------------------------------------------------------- */

#define SNOOZEFUSE_ALSA_CAPTURE_CAPACITY 4096

typedef struct {
    int depth;          /* nesting level of begin/end on this thread */
    size_t length;      /* bytes used in text, excluding the terminating NUL */
    unsigned truncated; /* messages (or parts) that did not fit */
    char text[SNOOZEFUSE_ALSA_CAPTURE_CAPACITY];
} snoozefuse_alsa_capture_state;

static _Thread_local snoozefuse_alsa_capture_state snoozefuse_alsa_capture;

static void snoozefuse_alsa_error_trampoline(const char *file, int line, const char *function, int err,
                                             const char *fmt, ...) {
    snoozefuse_alsa_capture_state *state = &snoozefuse_alsa_capture;
    if (state->depth <= 0) {
        return; /* nobody is listening on this thread: drop it, never print */
    }
    char message[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    /* Field and record separators must not appear inside a field. */
    for (char *p = message; *p; p++) {
        if (*p == '\x1e' || *p == '\x1f') {
            *p = ' ';
        }
    }
    size_t room = sizeof state->text - state->length;
    int needed = snprintf(state->text + state->length, room, "%s\x1f%d\x1f%s\x1f%d\x1f%s\x1e",
                          file ? file : "", line, function ? function : "", err, message);
    if (needed < 0 || (size_t)needed >= room) {
        state->text[state->length] = '\0'; /* drop the partial record */
        state->truncated += 1;
    } else {
        state->length += (size_t)needed;
    }
}

/* Routes alsa-lib's messages to the capture buffers. Idempotent; call before the first ALSA call. */
static inline int snoozefuse_alsa_install_capture(void) {
    return snd_lib_error_set_handler(snoozefuse_alsa_error_trampoline);
}

/* Opens a capture on the calling thread. The outermost begin clears the buffer. */
static inline void snoozefuse_alsa_capture_begin(void) {
    snoozefuse_alsa_capture_state *state = &snoozefuse_alsa_capture;
    if (state->depth <= 0) {
        state->depth = 0;
        state->length = 0;
        state->truncated = 0;
        state->text[0] = '\0';
    }
    state->depth += 1;
}

/* The records captured on this thread since the outermost begin (NUL-terminated; valid until the
 * next begin on this thread). */
static inline const char *snoozefuse_alsa_capture_text(void) {
    return snoozefuse_alsa_capture.text;
}

/* How many messages did not fit in the buffer. */
static inline unsigned snoozefuse_alsa_capture_truncated(void) {
    return snoozefuse_alsa_capture.truncated;
}

/* Closes one level of capture on this thread. */
static inline void snoozefuse_alsa_capture_end(void) {
    if (snoozefuse_alsa_capture.depth > 0) {
        snoozefuse_alsa_capture.depth -= 1;
    }
}

/* Names the calling thread (visible in `top -H`, gdb, perf) for the audio thread. pthread_setname_np
 * needs _GNU_SOURCE, and prctl is variadic: both unreachable from Swift. At most 15 bytes are kept. */
static inline int snoozefuse_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#endif

#ifndef SNOOZEFUSE_CALSA_SHIM_H
#define SNOOZEFUSE_CALSA_SHIM_H

#include <stddef.h>
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Everything `static` in this header exists once per object file that uses it. alsa-lib's message
 * handler is process-wide: only SnoozeFuseAudio installs it (through ALSAMessageCapture). */

/* snd_pcm_hw_params_alloca is a macro: Swift cannot call it. Heap
 * allocation is fine off the audio path (parameters are negotiated once per open). */
static inline int snoozefuse_pcm_hw_params_malloc(snd_pcm_hw_params_t **params) {
    return snd_pcm_hw_params_malloc(params);
}

/* ---------------------------------------------------------------------------------------------
 * alsa-lib's messages.
 *
 * alsa-lib reports details (`cannot find card '0'`, `Unknown PCM foo`) through one process-wide,
 * variadic (printf-style) handler that prints to stderr by default; Swift cannot implement a variadic
 * C function. The trampoline formats each message and hands it to a plain C callback (implemented in
 * Swift), which files it under the calling thread: alsa-lib calls the handler synchronously on the
 * thread whose call failed.
 *
 * Why the sink lives here and the buffers in Swift: Swift emits a private copy of these static
 * functions, with their own statics, into every object file that uses them (and cannot emit a
 * header's global variables at all). `snoozefuse_alsa_set_message_sink` stays consistent anyway: it
 * stores the sink in its own copy's static and registers its own copy's trampoline, which reads that
 * same static. Any per-thread state therefore belongs to the Swift side.
 * ------------------------------------------------------------------------------------------- */

typedef void (*snoozefuse_alsa_message_callback)(const char *file, int line, const char *function,
                                                 int err, const char *message);

static snoozefuse_alsa_message_callback snoozefuse_alsa_message_sink = 0;

static void snoozefuse_alsa_error_trampoline(const char *file, int line, const char *function, int err,
                                             const char *fmt, ...) {
    snoozefuse_alsa_message_callback sink = snoozefuse_alsa_message_sink;
    if (!sink) {
        return; /* silenced: never print */
    }
    char message[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    sink(file, line, function, err, message);
}

/* Installs `sink` as the receiver of alsa-lib's messages (NULL silences them entirely). */
static inline int snoozefuse_alsa_set_message_sink(snoozefuse_alsa_message_callback sink) {
    snoozefuse_alsa_message_sink = sink;
    return snd_lib_error_set_handler(snoozefuse_alsa_error_trampoline);
}

/* libasound.so.2 is loaded on its first call, not when the program starts (lazy.c). This loads it
   ahead, where a failure can be told. Returns 0 once it is loaded; otherwise
   -1, with why in `why` (at most `size` bytes, NUL-terminated). Cheap after the first time; safe
   from any thread. */
int snoozefuse_alsa_load(char *why, size_t size);

#endif

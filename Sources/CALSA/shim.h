#ifndef SNOOZEFUSE_CALSA_SHIM_H
#define SNOOZEFUSE_CALSA_SHIM_H

#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* snd_pcm_hw_params_alloca is a macro: Swift cannot call it. Heap allocation is fine off the
 * audio path (parameters are negotiated once per open). */
static inline int snoozefuse_pcm_hw_params_malloc(snd_pcm_hw_params_t **params) {
    return snd_pcm_hw_params_malloc(params);
}

/* alsa-lib's error handler is variadic (printf-style); Swift cannot implement one. This shim
 * formats each message into a fixed buffer and hands it to a plain C callback, so the library's
 * own stderr chatter can be captured and turned into typed errors that name the device. */
typedef void (*snoozefuse_alsa_message_callback)(const char *file, int line, const char *function,
                                                 int err, const char *message);

static snoozefuse_alsa_message_callback snoozefuse_alsa_message_sink = 0;

static inline void snoozefuse_alsa_error_trampoline(const char *file, int line, const char *function,
                                                    int err, const char *fmt, ...) {
    char buffer[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    if (snoozefuse_alsa_message_sink) {
        snoozefuse_alsa_message_sink(file, line, function, err, buffer);
    }
}

/* Installs `sink` as the receiver of alsa-lib's messages (NULL silences them entirely). */
static inline int snoozefuse_alsa_set_message_sink(snoozefuse_alsa_message_callback sink) {
    snoozefuse_alsa_message_sink = sink;
    return snd_lib_error_set_handler(snoozefuse_alsa_error_trampoline);
}

#endif

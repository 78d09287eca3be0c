#ifndef SNOOZEFUSE_CPULSE_SHIM_H
#define SNOOZEFUSE_CPULSE_SHIM_H

#include <stddef.h>
#include <pulse/pulseaudio.h>

/* Macros with casts, which Swift does not import. */
static inline pa_volume_t snoozefuse_pa_volume_norm(void) { return PA_VOLUME_NORM; }
static inline uint32_t snoozefuse_pa_invalid_index(void) { return PA_INVALID_INDEX; }

/* libpulse is loaded when the first connection to a sound server is made, not when the program
   starts (see lazy.c). Returns 0 once it is loaded; otherwise -1, with why in `why` (at most
   `size` bytes, NUL-terminated). Call it before any pa_ function; it is cheap after the first time
   and safe from any thread. */
int snoozefuse_pulse_load(char *why, size_t size);

#endif

#ifndef SNOOZEFUSE_CPULSE_SHIM_H
#define SNOOZEFUSE_CPULSE_SHIM_H

#include <pulse/pulseaudio.h>

/* Macros with casts, which Swift does not import. */
static inline pa_volume_t snoozefuse_pa_volume_norm(void) { return PA_VOLUME_NORM; }
static inline uint32_t snoozefuse_pa_invalid_index(void) { return PA_INVALID_INDEX; }

#endif

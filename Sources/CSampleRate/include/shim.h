#ifndef SNOOZEFUSE_CSAMPLERATE_SHIM_H
#define SNOOZEFUSE_CSAMPLERATE_SHIM_H

#include <stddef.h>
/* libsamplerate (Secret Rabbit Code): plain functions Swift calls directly. */
#include <samplerate.h>

/* libsamplerate.so.0 is loaded on its first call, not when the program starts (lazy.c). This loads it
   ahead, where a failure can be told. Returns 0 once it is loaded; otherwise
   -1, with why in `why` (at most `size` bytes, NUL-terminated). Cheap after the first time; safe
   from any thread. */
int snoozefuse_samplerate_load(char *why, size_t size);

#endif

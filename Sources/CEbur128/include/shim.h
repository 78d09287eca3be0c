#ifndef SNOOZEFUSE_CEBUR128_SHIM_H
#define SNOOZEFUSE_CEBUR128_SHIM_H

#include <stddef.h>
/* libebur128: EBU R 128 loudness (integrated loudness, true peak), as players measure ReplayGain. */
#include <ebur128.h>

/* libebur128.so.1 is loaded on its first call, not when the program starts (lazy.c). This loads it
   ahead, where a failure can be told. Returns 0 once it is loaded; otherwise -1, with why in `why`
   (at most `size` bytes, NUL-terminated). Cheap after the first time; safe from any thread. */
int snoozefuse_ebur128_load(char *why, size_t size);

#endif

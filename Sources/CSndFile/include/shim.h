#ifndef SNOOZEFUSE_CSNDFILE_SHIM_H
#define SNOOZEFUSE_CSNDFILE_SHIM_H

#include <stddef.h>
#include <sndfile.h>

/* libsndfile's API is plain functions Swift can call directly; this header only gathers it so the
 * module map has one entry point. Wrappers for anything Swift cannot call go here. */

/* libsndfile.so.1 is loaded on its first call, not when the program starts (lazy.c). This loads it
   ahead, where a failure can be told. Returns 0 once it is loaded; otherwise
   -1, with why in `why` (at most `size` bytes, NUL-terminated). Cheap after the first time; safe
   from any thread. */
int snoozefuse_sndfile_load(char *why, size_t size);

#endif

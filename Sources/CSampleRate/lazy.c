/* libsamplerate (libsamplerate.so.0), linked on first use instead of at start-up
 * (snoozefuse_lazy_link.h): the alarm renderer's first resampler loads it (issue 23). */
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY samplerate
#define SNOOZEFUSE_LAZY_SONAME "libsamplerate.so.0"
#define SNOOZEFUSE_LAZY_PACKAGE "libsamplerate0"

/* Every function of it the program calls. */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(src_delete) \
    X(src_new) \
    X(src_process) \
    X(src_strerror)

#include "snoozefuse_lazy_link.h"

/* libebur128 (libebur128.so.1), linked on first use instead of at start-up
 * (snoozefuse_lazy_link.h): a sound's first loudness measurement (an import, a validation, a nap
 * setting its alarm's level) loads it; `status`, `stop` or `--version` never do. */
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY ebur128
#define SNOOZEFUSE_LAZY_SONAME "libebur128.so.1"
#define SNOOZEFUSE_LAZY_PACKAGE "libebur128-1"

/* Every function of it the program calls. */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(ebur128_add_frames_double) \
    X(ebur128_add_frames_float) \
    X(ebur128_add_frames_int) \
    X(ebur128_add_frames_short) \
    X(ebur128_destroy) \
    X(ebur128_init) \
    X(ebur128_loudness_global) \
    X(ebur128_sample_peak) \
    X(ebur128_set_channel) \
    X(ebur128_true_peak)

#include "snoozefuse_lazy_link.h"

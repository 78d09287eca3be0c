/* SwiftPM needs one C file per C target; this one compiles the header's layout checks (the
 * `_Static_assert`s at its end) on every build, and a few more that pin ABI 1.0 field order. */
#include "snoozefuse_plugin.h"
#include <stddef.h>

_Static_assert(SNOOZEFUSE_PLUGIN_ABI_MAJOR == 1, "this file pins ABI 1.x");
_Static_assert(offsetof(snoozefuse_sound_source, activate) == 8 + sizeof(void *), "source: activate follows plugin_data");
_Static_assert(offsetof(snoozefuse_sound_source, destroy) == 8 + 4 * sizeof(void *), "source: destroy is last in 1.0");
_Static_assert(offsetof(snoozefuse_pulse_emitter, emit) == 8 + sizeof(void *), "emitter: emit follows plugin_data");
_Static_assert(offsetof(snoozefuse_plugin_descriptor, create_sound_source) == 24 + 6 * sizeof(void *), "descriptor: factories after strings");
_Static_assert(offsetof(snoozefuse_plugin_descriptor, get_extension) == 24 + 8 * sizeof(void *), "descriptor: get_extension is last in 1.0");
_Static_assert(offsetof(snoozefuse_host, get_extension) == 16 + 4 * sizeof(void *), "host: get_extension is last in 1.0");

#ifndef SNOOZEFUSE_CSYSTEMD_SHIM_H
#define SNOOZEFUSE_CSYSTEMD_SHIM_H

#include <stddef.h>
/* sd-bus, libsystemd's D-Bus client (Debian libsystemd-dev). Its calls are plain functions Swift
 * can call directly (the variadic sd_bus_call_method and sd_bus_message_append are not used: the
 * typed layer in SnoozeFuseSystem builds messages with sd_bus_message_append_basic and
 * containers); this header only gathers it so the module map has one entry point. */
#include <systemd/sd-bus.h>

/* libsystemd.so.0 is loaded on its first call, not when the program starts (lazy.c). This loads it
   ahead, where a failure can be told. Returns 0 once it is loaded; otherwise
   -1, with why in `why` (at most `size` bytes, NUL-terminated). Cheap after the first time; safe
   from any thread. */
int snoozefuse_systemd_load(char *why, size_t size);

#endif

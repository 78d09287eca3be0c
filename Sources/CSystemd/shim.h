#ifndef SNOOZEFUSE_CSYSTEMD_SHIM_H
#define SNOOZEFUSE_CSYSTEMD_SHIM_H

/* sd-bus, libsystemd's D-Bus client (Debian libsystemd-dev). Its calls are plain functions Swift
 * can call directly (the variadic sd_bus_call_method and sd_bus_message_append are not used: the
 * typed layer in SnoozeFuseSystem builds messages with sd_bus_message_append_basic and
 * containers); this header only gathers it so the module map has one entry point. */
#include <systemd/sd-bus.h>

#endif

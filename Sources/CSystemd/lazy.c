/* sd-bus (libsystemd.so.0), linked on first use instead of at start-up
 * (snoozefuse_lazy_link.h): the first D-Bus connection loads it. Linked the usual way, it and
 * what it links (lz4, zstd, lzma, gcrypt) were about 0.6 ms of every start, though `status`,
 * `stop` or `--version` never call it (issue 23). */
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY systemd
#define SNOOZEFUSE_LAZY_SONAME "libsystemd.so.0"
#define SNOOZEFUSE_LAZY_PACKAGE "libsystemd0"

/* Every function of it the program calls. */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(sd_bus_add_filter) \
    X(sd_bus_call_async) \
    X(sd_bus_close_unref) \
    X(sd_bus_error_get_errno) \
    X(sd_bus_error_is_set) \
    X(sd_bus_get_events) \
    X(sd_bus_get_fd) \
    X(sd_bus_get_timeout) \
    X(sd_bus_message_append_basic) \
    X(sd_bus_message_close_container) \
    X(sd_bus_message_enter_container) \
    X(sd_bus_message_exit_container) \
    X(sd_bus_message_get_error) \
    X(sd_bus_message_get_interface) \
    X(sd_bus_message_get_member) \
    X(sd_bus_message_get_path) \
    X(sd_bus_message_get_sender) \
    X(sd_bus_message_is_signal) \
    X(sd_bus_message_new_method_call) \
    X(sd_bus_message_open_container) \
    X(sd_bus_message_peek_type) \
    X(sd_bus_message_read_basic) \
    X(sd_bus_message_ref) \
    X(sd_bus_message_rewind) \
    X(sd_bus_message_unref) \
    X(sd_bus_open_system) \
    X(sd_bus_open_user) \
    X(sd_bus_process) \
    X(sd_bus_slot_unref) \
    X(sd_bus_wait)

#include "snoozefuse_lazy_link.h"

/* libwayland-client, linked on first use instead of at start-up (snoozefuse_lazy_link.h): only a
 * `--hold desktop` nap in a Wayland session (and `doctor`) loads it. */
#include <wayland-client.h>

#define SNOOZEFUSE_LAZY_LIBRARY wayland
#define SNOOZEFUSE_LAZY_SONAME "libwayland-client.so.0"
#define SNOOZEFUSE_LAZY_PACKAGE "libwayland-client0"

/* Every libwayland-client function the program calls (the protocols' inline requests among them). */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(wl_display_cancel_read) \
    X(wl_display_connect_to_fd) \
    X(wl_display_disconnect) \
    X(wl_display_dispatch_pending) \
    X(wl_display_flush) \
    X(wl_display_get_error) \
    X(wl_display_get_fd) \
    X(wl_display_prepare_read) \
    X(wl_display_read_events) \
    X(wl_proxy_add_listener) \
    X(wl_proxy_destroy) \
    X(wl_proxy_get_version) \
    X(wl_proxy_marshal_flags)

#include "snoozefuse_lazy_link.h"

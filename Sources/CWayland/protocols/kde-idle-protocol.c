/* The interfaces of KWin's idle protocol (kde-idle-client.h says why they are written here). */
#include <stddef.h>
#include <wayland-util.h>

#define SNOOZEFUSE_PRIVATE __attribute__((visibility("hidden")))

extern const struct wl_interface wl_seat_interface;
extern const struct wl_interface org_kde_kwin_idle_timeout_interface;

/* The interfaces of get_idle_timeout's arguments, in order: the new timeout, the seat, the length. */
static const struct wl_interface *get_idle_timeout_types[] = {
    &org_kde_kwin_idle_timeout_interface,
    &wl_seat_interface,
    NULL,
};

static const struct wl_message idle_requests[] = {
    {"get_idle_timeout", "nou", get_idle_timeout_types},
};

SNOOZEFUSE_PRIVATE const struct wl_interface org_kde_kwin_idle_interface = {
    "org_kde_kwin_idle", 1, 1, idle_requests, 0, NULL,
};

static const struct wl_message timeout_requests[] = {
    {"release", "", NULL},
    {"simulate_user_activity", "", NULL},
};

static const struct wl_message timeout_events[] = {
    {"idle", "", NULL},
    {"resumed", "", NULL},
};

SNOOZEFUSE_PRIVATE const struct wl_interface org_kde_kwin_idle_timeout_interface = {
    "org_kde_kwin_idle_timeout", 1, 2, timeout_requests, 2, timeout_events,
};

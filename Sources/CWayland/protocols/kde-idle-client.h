/* KWin's idle protocol (org_kde_kwin_idle, version 1), as wlroots compositors before 0.17 and
 * KWin 5 offer it: the requests and events snoozefuse uses, written from the protocol's
 * description (the protocol's XML is LGPL; this is the interface, not a copy of generated code).
 *
 *   org_kde_kwin_idle.get_idle_timeout(new_id org_kde_kwin_idle_timeout, object wl_seat, uint ms)
 *   org_kde_kwin_idle_timeout.release() (destructor), .simulate_user_activity()
 *   org_kde_kwin_idle_timeout events: idle, resumed */
#ifndef SNOOZEFUSE_KDE_IDLE_CLIENT_H
#define SNOOZEFUSE_KDE_IDLE_CLIENT_H

#include <stdint.h>
#include <wayland-client.h>

struct org_kde_kwin_idle;
struct org_kde_kwin_idle_timeout;

extern const struct wl_interface org_kde_kwin_idle_interface;
extern const struct wl_interface org_kde_kwin_idle_timeout_interface;

struct org_kde_kwin_idle_timeout_listener {
    void (*idle)(void *data, struct org_kde_kwin_idle_timeout *timeout);
    void (*resumed)(void *data, struct org_kde_kwin_idle_timeout *timeout);
};

static inline int org_kde_kwin_idle_timeout_add_listener(struct org_kde_kwin_idle_timeout *timeout,
                                                        const struct org_kde_kwin_idle_timeout_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)timeout, (void (**)(void))listener, data);
}

static inline struct org_kde_kwin_idle_timeout *org_kde_kwin_idle_get_idle_timeout(struct org_kde_kwin_idle *idle, struct wl_seat *seat,
                                                                                   uint32_t timeout) {
    struct wl_proxy *made = wl_proxy_marshal_flags((struct wl_proxy *)idle, 0, &org_kde_kwin_idle_timeout_interface,
                                                   wl_proxy_get_version((struct wl_proxy *)idle), 0, NULL, seat, timeout);
    return (struct org_kde_kwin_idle_timeout *)made;
}

static inline void org_kde_kwin_idle_timeout_release(struct org_kde_kwin_idle_timeout *timeout) {
    wl_proxy_marshal_flags((struct wl_proxy *)timeout, 0, NULL, wl_proxy_get_version((struct wl_proxy *)timeout), WL_MARSHAL_FLAG_DESTROY);
}

#endif

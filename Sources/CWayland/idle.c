/* The desktop's idleness from a Wayland compositor (snoozefuse_wayland_idle.h). */
#include "snoozefuse_wayland_idle.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <wayland-client.h>

#include "protocols/ext-idle-notify-v1-client.h"
#include "protocols/kde-idle-client.h"

/* Notifications received and not yet taken, oldest first (a burst of input and quiet between two
 * reads makes at most a few). */
#define QUEUE_SIZE 16

struct snoozefuse_wayland_idle {
    struct wl_display *display;
    struct wl_registry *registry;
    struct wl_seat *seat;
    struct ext_idle_notifier_v1 *notifier;
    struct ext_idle_notification_v1 *notification;
    struct org_kde_kwin_idle *kde;
    struct org_kde_kwin_idle_timeout *kde_timeout;
    int queue[QUEUE_SIZE];
    int queued;
};

static void say(char *why, size_t size, const char *text) {
    if (why != NULL && size > 0) snprintf(why, size, "%s", text);
}

static void push(struct snoozefuse_wayland_idle *idle, int notice) {
    if (idle->queued == QUEUE_SIZE) {
        /* Only the latest state matters once so many wait: keep the newest. */
        memmove(idle->queue, idle->queue + 1, sizeof idle->queue[0] * (QUEUE_SIZE - 1));
        idle->queued -= 1;
    }
    idle->queue[idle->queued++] = notice;
}

static void ext_idled(void *data, struct ext_idle_notification_v1 *notification) {
    (void)notification;
    push(data, SNOOZEFUSE_WAYLAND_IDLED);
}

static void ext_resumed(void *data, struct ext_idle_notification_v1 *notification) {
    (void)notification;
    push(data, SNOOZEFUSE_WAYLAND_RESUMED);
}

static const struct ext_idle_notification_v1_listener ext_listener = {.idled = ext_idled, .resumed = ext_resumed};

static void kde_idle(void *data, struct org_kde_kwin_idle_timeout *timeout) {
    (void)timeout;
    push(data, SNOOZEFUSE_WAYLAND_IDLED);
}

static void kde_resumed(void *data, struct org_kde_kwin_idle_timeout *timeout) {
    (void)timeout;
    push(data, SNOOZEFUSE_WAYLAND_RESUMED);
}

static const struct org_kde_kwin_idle_timeout_listener kde_listener = {.idle = kde_idle, .resumed = kde_resumed};

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    struct snoozefuse_wayland_idle *idle = data;
    (void)version;
    if (strcmp(interface, wl_seat_interface.name) == 0 && idle->seat == NULL) {
        idle->seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
    } else if (strcmp(interface, ext_idle_notifier_v1_interface.name) == 0 && idle->notifier == NULL) {
        idle->notifier = wl_registry_bind(registry, name, &ext_idle_notifier_v1_interface, 1);
    } else if (strcmp(interface, org_kde_kwin_idle_interface.name) == 0 && idle->kde == NULL) {
        idle->kde = wl_registry_bind(registry, name, &org_kde_kwin_idle_interface, 1);
    }
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {
    (void)data;
    (void)registry;
    (void)name;
}

static const struct wl_registry_listener registry_listener = {.global = global, .global_remove = global_remove};

static void synced(void *data, struct wl_callback *callback, uint32_t serial) {
    (void)serial;
    *(int *)data = 1;
    wl_callback_destroy(callback);
}

static const struct wl_callback_listener sync_listener = {.done = synced};

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Why the connection broke, in words. */
static void broken(struct wl_display *display, char *why, size_t size, const char *doing) {
    int error = wl_display_get_error(display);
    if (why != NULL && size > 0) {
        if (error == EPROTO) {
            snprintf(why, size, "the compositor refused a request while %s (a protocol error)", doing);
        } else {
            snprintf(why, size, "the connection to the compositor broke while %s: %s", doing, strerror(error != 0 ? error : errno));
        }
    }
}

/* Sends a sync and handles what comes until its answer, for at most `limit_ms`. */
static int roundtrip(struct wl_display *display, int limit_ms, const char *doing, char *why, size_t size) {
    int done = 0;
    struct wl_callback *callback = wl_display_sync(display);
    if (callback == NULL || wl_callback_add_listener(callback, &sync_listener, &done) != 0) {
        broken(display, why, size, doing);
        return -1;
    }
    long long deadline = now_ms() + limit_ms;
    while (!done) {
        while (wl_display_prepare_read(display) != 0) {
            if (wl_display_dispatch_pending(display) < 0) {
                broken(display, why, size, doing);
                return -1;
            }
        }
        if (done) {
            wl_display_cancel_read(display);
            break;
        }
        if (wl_display_flush(display) < 0 && errno != EAGAIN) {
            wl_display_cancel_read(display);
            broken(display, why, size, doing);
            return -1;
        }
        long long left = deadline - now_ms();
        struct pollfd descriptor = {.fd = wl_display_get_fd(display), .events = POLLIN};
        int ready = left > 0 ? poll(&descriptor, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR) {
            wl_display_cancel_read(display);
            continue;
        }
        if (ready <= 0) {
            wl_display_cancel_read(display);
            if (why != NULL && size > 0) snprintf(why, size, "the compositor did not answer within %d ms while %s", limit_ms, doing);
            return -1;
        }
        if (wl_display_read_events(display) < 0 || wl_display_dispatch_pending(display) < 0) {
            broken(display, why, size, doing);
            return -1;
        }
    }
    return 0;
}

/* A socket connected to `path` within `limit_ms` (a compositor whose backlog is full makes a plain
 * connect wait), or -1 with why. */
static int connect_socket(const char *path, int limit_ms, char *why, size_t size) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) {
        if (why != NULL && size > 0) snprintf(why, size, "the socket path %s is too long", path);
        return -1;
    }
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        if (why != NULL && size > 0) snprintf(why, size, "no socket: %s", strerror(errno));
        return -1;
    }
    /* A Unix socket whose listener's backlog is full says EAGAIN (nothing is in progress, unlike
     * TCP): tried again every 10 ms until the limit. */
    long long deadline = now_ms() + limit_ms;
    while (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN || now_ms() >= deadline) {
            if (why != NULL && size > 0) {
                if (errno == EAGAIN) {
                    snprintf(why, size, "%s: the compositor did not accept the connection within %d ms", path, limit_ms);
                } else {
                    snprintf(why, size, "%s: %s", path, strerror(errno));
                }
            }
            close(fd);
            return -1;
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    /* libwayland-client works on a blocking descriptor; every wait here is a poll of our own. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

snoozefuse_wayland_idle *snoozefuse_wayland_idle_open(const char *path, uint32_t timeout_ms, int limit_ms, char *why, size_t size) {
    char loading[256];
    if (snoozefuse_wayland_load(loading, sizeof loading) != 0) {
        if (why != NULL && size > 0) snprintf(why, size, "libwayland-client cannot be loaded (Debian package libwayland-client0): %s", loading);
        return NULL;
    }
    int fd = connect_socket(path, limit_ms, why, size);
    if (fd < 0) return NULL;
    struct snoozefuse_wayland_idle *idle = calloc(1, sizeof *idle);
    if (idle == NULL) {
        close(fd);
        say(why, size, "out of memory");
        return NULL;
    }
    idle->display = wl_display_connect_to_fd(fd);
    if (idle->display == NULL) {
        /* libwayland-client has closed the descriptor. */
        free(idle);
        say(why, size, "libwayland-client refused the connection");
        return NULL;
    }
    idle->registry = wl_display_get_registry(idle->display);
    if (idle->registry == NULL || wl_registry_add_listener(idle->registry, &registry_listener, idle) != 0 ||
        roundtrip(idle->display, limit_ms, "listing its globals", why, size) != 0) {
        if (idle->registry == NULL) say(why, size, "libwayland-client made no registry");
        snoozefuse_wayland_idle_close(idle);
        return NULL;
    }
    if (idle->seat == NULL || (idle->notifier == NULL && idle->kde == NULL)) {
        say(why, size, idle->seat == NULL ? "the compositor has no seat"
                                          : "the compositor offers no idle notifier (neither ext_idle_notifier_v1 nor org_kde_kwin_idle)");
        snoozefuse_wayland_idle_close(idle);
        return NULL;
    }
    if (timeout_ms > 0) {
        if (idle->notifier != NULL) {
            idle->notification = ext_idle_notifier_v1_get_idle_notification(idle->notifier, timeout_ms, idle->seat);
            if (idle->notification != NULL) ext_idle_notification_v1_add_listener(idle->notification, &ext_listener, idle);
        } else {
            idle->kde_timeout = org_kde_kwin_idle_get_idle_timeout(idle->kde, idle->seat, timeout_ms);
            if (idle->kde_timeout != NULL) org_kde_kwin_idle_timeout_add_listener(idle->kde_timeout, &kde_listener, idle);
        }
        if ((idle->notification == NULL && idle->kde_timeout == NULL) ||
            roundtrip(idle->display, limit_ms, "asking for idle notifications", why, size) != 0) {
            if (idle->notification == NULL && idle->kde_timeout == NULL) say(why, size, "libwayland-client made no idle notification");
            snoozefuse_wayland_idle_close(idle);
            return NULL;
        }
    }
    return idle;
}

const char *snoozefuse_wayland_idle_protocol(const snoozefuse_wayland_idle *idle) {
    return idle->notifier != NULL ? ext_idle_notifier_v1_interface.name : org_kde_kwin_idle_interface.name;
}

int snoozefuse_wayland_idle_fd(const snoozefuse_wayland_idle *idle) {
    return wl_display_get_fd(idle->display);
}

static int take_queued(snoozefuse_wayland_idle *idle) {
    if (idle->queued == 0) return SNOOZEFUSE_WAYLAND_NOTHING;
    int notice = idle->queue[0];
    idle->queued -= 1;
    memmove(idle->queue, idle->queue + 1, sizeof idle->queue[0] * (size_t)idle->queued);
    return notice;
}

int snoozefuse_wayland_idle_take(snoozefuse_wayland_idle *idle, char *why, size_t size) {
    if (idle->queued == 0 && wl_display_dispatch_pending(idle->display) < 0) {
        broken(idle->display, why, size, "waiting for input or its absence");
        return -1;
    }
    return take_queued(idle);
}

int snoozefuse_wayland_idle_prepare(snoozefuse_wayland_idle *idle, char *why, size_t size) {
    while (wl_display_prepare_read(idle->display) != 0) {
        if (wl_display_dispatch_pending(idle->display) < 0) {
            broken(idle->display, why, size, "waiting for input or its absence");
            return -1;
        }
    }
    if (idle->queued > 0) {
        wl_display_cancel_read(idle->display);
        return 1;
    }
    if (wl_display_flush(idle->display) < 0 && errno != EAGAIN) {
        wl_display_cancel_read(idle->display);
        broken(idle->display, why, size, "waiting for input or its absence");
        return -1;
    }
    return 0;
}

int snoozefuse_wayland_idle_read(snoozefuse_wayland_idle *idle, char *why, size_t size) {
    if (wl_display_read_events(idle->display) < 0) {
        broken(idle->display, why, size, "waiting for input or its absence");
        return -1;
    }
    return 0;
}

void snoozefuse_wayland_idle_cancel(snoozefuse_wayland_idle *idle) {
    wl_display_cancel_read(idle->display);
}

void snoozefuse_wayland_idle_close(snoozefuse_wayland_idle *idle) {
    if (idle == NULL) return;
    if (idle->notification != NULL) ext_idle_notification_v1_destroy(idle->notification);
    if (idle->kde_timeout != NULL) org_kde_kwin_idle_timeout_release(idle->kde_timeout);
    if (idle->notifier != NULL) ext_idle_notifier_v1_destroy(idle->notifier);
    if (idle->kde != NULL) wl_proxy_destroy((struct wl_proxy *)idle->kde);
    if (idle->seat != NULL) wl_proxy_destroy((struct wl_proxy *)idle->seat);
    if (idle->registry != NULL) wl_registry_destroy(idle->registry);
    /* What the releases say goes out before the socket closes (not waited for). */
    wl_display_flush(idle->display);
    wl_display_disconnect(idle->display);
    free(idle);
}

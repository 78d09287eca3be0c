#ifndef SNOOZEFUSE_WAYLAND_IDLE_H
#define SNOOZEFUSE_WAYLAND_IDLE_H

#include <stddef.h>
#include <stdint.h>

/* The desktop's idleness from a Wayland compositor (libwayland-client, loaded on its first call:
 * lazy.c), for `nap --hold desktop`: a notification after `timeout_ms` without input (idled) and
 * at the next input after it (resumed), from ext_idle_notifier_v1 where the compositor offers it
 * (wlroots 0.17+, KWin 6, Mutter 45+), else org_kde_kwin_idle (KWin 5, wlroots before it). Nothing
 * is polled: the caller sleeps on the connection's descriptor.
 *
 * One watch is used by one thread at a time. Every wait for the compositor is bounded by the
 * caller's time limit: a compositor that does not answer is an error, never a hang. */
typedef struct snoozefuse_wayland_idle snoozefuse_wayland_idle;

/* What the compositor said. */
enum {
    SNOOZEFUSE_WAYLAND_NOTHING = 0,
    SNOOZEFUSE_WAYLAND_IDLED = 1,
    SNOOZEFUSE_WAYLAND_RESUMED = 2,
};

/* libwayland-client.so.0 loaded ahead (0), or -1 with why in `why`. */
int snoozefuse_wayland_load(char *why, size_t size);

/* Connects to the compositor's socket at `path` within `limit_ms`, binds the first seat and the
 * idle notifier, and asks for a notification after `timeout_ms` without input (0: none yet, for a
 * probe). NULL with why in `why` when any of it fails or the compositor offers no idle notifier. */
snoozefuse_wayland_idle *snoozefuse_wayland_idle_open(const char *path, uint32_t timeout_ms, int limit_ms, char *why, size_t size);

/* "ext_idle_notifier_v1" or "org_kde_kwin_idle": which protocol the compositor answered with. */
const char *snoozefuse_wayland_idle_protocol(const snoozefuse_wayland_idle *idle);

/* The connection's descriptor, to sleep on for the compositor's next message. */
int snoozefuse_wayland_idle_fd(const snoozefuse_wayland_idle *idle);

/* The oldest notification received and not yet taken (IDLED, RESUMED), after handling what has
 * been read; NOTHING when none is waiting; -1 with why when the connection broke. */
int snoozefuse_wayland_idle_take(snoozefuse_wayland_idle *idle, char *why, size_t size);

/* Before sleeping on the descriptor: sends what is queued and marks the connection as about to be
 * read. 1 when a notification is already waiting (take it: do not sleep), 0 to sleep, -1 with why
 * when the connection broke. After 0, exactly one of _read (the descriptor became readable) or
 * _cancel (woken for another reason) must follow. */
int snoozefuse_wayland_idle_prepare(snoozefuse_wayland_idle *idle, char *why, size_t size);
int snoozefuse_wayland_idle_read(snoozefuse_wayland_idle *idle, char *why, size_t size);
void snoozefuse_wayland_idle_cancel(snoozefuse_wayland_idle *idle);

/* Ends the notification and the connection. */
void snoozefuse_wayland_idle_close(snoozefuse_wayland_idle *idle);

#endif

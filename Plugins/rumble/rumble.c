/* rumble: Linux force feedback (FF_RUMBLE) on an input device per pulse, for snoozefuse.
 * config: device=/dev/input/eventN (default: the first event device that supports FF_RUMBLE)
 *
 * Each pulse uploads one FF_RUMBLE effect (EVIOCSFF; the first upload lets the kernel choose the
 * id, later ones update that effect) with strong = intensity x 65535 and weak = intensity x 32767
 * (rounded), replay.length = the pulse's duration, then plays it (EV_FF, value 1). The device
 * times the effect; cancel writes EV_FF value 0; destroy stops it, erases it (EVIOCRMFF) and
 * closes the device. */
#define _GNU_SOURCE
#include "snoozefuse_plugin.h"
#include "snoozefuse_plugin_config.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

typedef struct rumble {
    snoozefuse_pulse_emitter emitter;
    int fd;
    int effect_id;
    char path[256];
} rumble;

static const char *const rumble_keys[] = {"device", NULL};

/* 1 when the device has FF_RUMBLE, 0 when it has not, -1 (errno set) when it is no input device. */
static int supports_rumble(int fd) {
    unsigned long bits[(FF_MAX + 8 * sizeof(unsigned long)) / (8 * sizeof(unsigned long))] = {0};
    if (ioctl(fd, EVIOCGBIT(EV_FF, sizeof bits), bits) < 0) return -1;
    return (bits[FF_RUMBLE / (8 * sizeof(unsigned long))] >> (FF_RUMBLE % (8 * sizeof(unsigned long)))) & 1;
}

/* intensity (clamped to [0, 1]; NaN counts as 0) x full, rounded half up. */
static unsigned short magnitude(float intensity, float full) {
    if (!(intensity > 0)) return 0;
    if (intensity > 1) intensity = 1;
    return (unsigned short)(intensity * full + 0.5f);
}

static int play(rumble *r, int value) {
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.type = EV_FF;
    event.code = (unsigned short)r->effect_id;
    event.value = value; /* 1: play once; 0: stop */
    ssize_t written;
    while ((written = write(r->fd, &event, sizeof event)) < 0 && errno == EINTR) {}
    if (written == (ssize_t)sizeof event) return 0;
    return written < 0 ? errno : EIO;
}

static snoozefuse_status rumble_emit(snoozefuse_pulse_emitter *self, float intensity, uint32_t duration_ms,
                                     char *message, uint32_t capacity) {
    rumble *r = self->plugin_data;
    struct ff_effect effect;
    memset(&effect, 0, sizeof effect);
    effect.type = FF_RUMBLE;
    effect.id = (short)r->effect_id; /* -1 the first time: the kernel assigns one */
    effect.u.rumble.strong_magnitude = magnitude(intensity, 65535.0f);
    effect.u.rumble.weak_magnitude = magnitude(intensity, 32767.0f);
    effect.replay.length = (unsigned short)(duration_ms > 0xFFFF ? 0xFFFF : duration_ms);
    int uploaded;
    while ((uploaded = ioctl(r->fd, EVIOCSFF, &effect)) < 0 && errno == EINTR) {}
    if (uploaded < 0) {
        snprintf(message, capacity, "%s: uploading the rumble effect failed: %s", r->path, strerror(errno));
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    r->effect_id = effect.id;
    int error = play(r, 1);
    if (error) {
        snprintf(message, capacity, "%s: starting the rumble failed: %s", r->path, strerror(error));
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    return SNOOZEFUSE_STATUS_OK; /* the device (or the kernel's ff-memless) stops it after replay.length */
}

static void rumble_cancel(snoozefuse_pulse_emitter *self) {
    rumble *r = self->plugin_data;
    if (r->effect_id >= 0) play(r, 0);
}

static void rumble_destroy(snoozefuse_pulse_emitter *self) {
    rumble *r = self->plugin_data;
    if (r->effect_id >= 0) {
        play(r, 0);
        ioctl(r->fd, EVIOCRMFF, r->effect_id);
    }
    close(r->fd);
    free(r);
}

static snoozefuse_status create_emitter(const snoozefuse_host *host, const char *config,
                                        snoozefuse_pulse_emitter **out, char *message, uint32_t capacity) {
    (void)host;
    char path[256] = "";
    int fd = -1;
    if (plugin_config_unknown_key(config, rumble_keys, "rumble", message, capacity)) return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    if (plugin_config_value(config, "device", path, sizeof path)) {
        if (!*path) {
            snprintf(message, capacity, "device= is empty: name an event device, e.g. device=/dev/input/event5");
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            snprintf(message, capacity, "cannot open device=%s: %s (it must exist and be readable and writable by this user)",
                     path, strerror(errno));
            return SNOOZEFUSE_STATUS_UNAVAILABLE;
        }
        int rumble_bit = supports_rumble(fd);
        if (rumble_bit < 0) {
            int error = errno;
            close(fd);
            snprintf(message, capacity, "device=%s is not an input event device (EVIOCGBIT: %s); choose a /dev/input/eventN",
                     path, strerror(error));
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        if (!rumble_bit) {
            close(fd);
            snprintf(message, capacity, "device=%s has no FF_RUMBLE force feedback; choose another /dev/input/eventN", path);
            return SNOOZEFUSE_STATUS_UNSUPPORTED;
        }
    } else {
        for (int i = 0; i < 64 && fd < 0; i++) {
            snprintf(path, sizeof path, "/dev/input/event%d", i);
            int candidate = open(path, O_RDWR | O_CLOEXEC);
            if (candidate < 0) continue;
            if (supports_rumble(candidate) == 1) fd = candidate;
            else close(candidate);
        }
        if (fd < 0) {
            snprintf(message, capacity, "no /dev/input/event* device with FF_RUMBLE that this user may open; choose one with device=PATH");
            return SNOOZEFUSE_STATUS_UNAVAILABLE;
        }
    }
    rumble *r = calloc(1, sizeof *r);
    if (!r) {
        close(fd);
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    r->fd = fd;
    r->effect_id = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->emitter.struct_size = sizeof r->emitter;
    r->emitter.plugin_data = r;
    r->emitter.emit = rumble_emit;
    r->emitter.cancel = rumble_cancel;
    r->emitter.destroy = rumble_destroy;
    *out = &r->emitter;
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_PULSE_EMITTER,
    .features = SNOOZEFUSE_FEATURE_HARDWARE,
    .id = "org.snoozefuse.rumble",
    .name = "Rumble",
    .version = "1.0.0",
    .vendor = "snoozefuse",
    .description = "Force-feedback rumble (FF_RUMBLE) on a /dev/input/event* device",
    .config_help = "device=/dev/input/eventN: the device (default: the first with FF_RUMBLE)",
    .create_sound_source = NULL,
    .create_pulse_emitter = create_emitter,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

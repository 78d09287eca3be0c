/* led: blinks a /sys/class/leds device (a keyboard's capslock LED, say) per pulse, for snoozefuse,
 * and restores the brightness it found when the pulse ends, on cancel and on destroy.
 * config: led=NAME (e.g. input3::capslock; required), root=DIR (default /sys/class/leds) */
#define _GNU_SOURCE
#include "snoozefuse_plugin.h"
#include "snoozefuse_plugin_config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct led {
    snoozefuse_pulse_emitter emitter;
    char brightness_path[600];
    long max_brightness;
    long original;
} led;

static int read_number(const char *path, long *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[32];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return 0;
    text[n] = 0;
    char *end;
    *out = strtol(text, &end, 10);
    return end != text;
}

static int write_number(const char *path, long value) {
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
    if (fd < 0) return errno;
    char text[32];
    int length = snprintf(text, sizeof text, "%ld\n", value);
    ssize_t n = write(fd, text, (size_t)length);
    int error = n == length ? 0 : (n < 0 ? errno : EIO);
    close(fd);
    return error;
}

static snoozefuse_status led_emit(snoozefuse_pulse_emitter *self, float intensity, uint32_t duration_ms,
                                  char *message, uint32_t capacity) {
    led *l = self->plugin_data;
    long on = (long)(intensity * (float)l->max_brightness + 0.999f);
    if (on < 1) on = 1;
    if (on > l->max_brightness) on = l->max_brightness;
    /* Blink against the state we found: a lit LED goes dark for the pulse. */
    long pulse = l->original > 0 ? 0 : on;
    int error = write_number(l->brightness_path, pulse);
    if (error) {
        snprintf(message, capacity, "cannot write %s: %s", l->brightness_path, strerror(error));
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    uint32_t shown = duration_ms < 1000 ? duration_ms : 1000;
    struct timespec wait = {shown / 1000, (long)(shown % 1000) * 1000000L};
    while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
    write_number(l->brightness_path, l->original);
    return SNOOZEFUSE_STATUS_OK;
}

static void led_cancel(snoozefuse_pulse_emitter *self) {
    led *l = self->plugin_data;
    write_number(l->brightness_path, l->original);
}

static void led_destroy(snoozefuse_pulse_emitter *self) {
    led_cancel(self);
    free(self->plugin_data);
}

static const char *const led_keys[] = {"led", "root", NULL};

static snoozefuse_status create_emitter(const snoozefuse_host *host, const char *config,
                                        snoozefuse_pulse_emitter **out, char *message, uint32_t capacity) {
    (void)host;
    char name[256], root[256] = "/sys/class/leds", path[600];
    if (plugin_config_unknown_key(config, led_keys, "led", message, capacity)) return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    if (!plugin_config_value(config, "led", name, sizeof name) || !*name || strchr(name, '/') || !strcmp(name, "..")) {
        snprintf(message, capacity, "choose an LED with led=NAME (one of the names in /sys/class/leds)");
        return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    }
    plugin_config_value(config, "root", root, sizeof root);
    led *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    snprintf(path, sizeof path, "%s/%s/max_brightness", root, name);
    if (!read_number(path, &l->max_brightness) || l->max_brightness < 1) {
        snprintf(message, capacity, "cannot read %s: %s", path, errno ? strerror(errno) : "not a number");
        free(l);
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    snprintf(l->brightness_path, sizeof l->brightness_path, "%s/%s/brightness", root, name);
    if (!read_number(l->brightness_path, &l->original)) {
        snprintf(message, capacity, "cannot read %s: %s", l->brightness_path, strerror(errno));
        free(l);
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    if (access(l->brightness_path, W_OK) != 0) {
        snprintf(message, capacity, "cannot write %s: %s (add a udev rule or run with the right group)",
                 l->brightness_path, strerror(errno));
        free(l);
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    l->emitter.struct_size = sizeof l->emitter;
    l->emitter.plugin_data = l;
    l->emitter.emit = led_emit;
    l->emitter.cancel = led_cancel;
    l->emitter.destroy = led_destroy;
    *out = &l->emitter;
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_PULSE_EMITTER,
    .features = SNOOZEFUSE_FEATURE_HARDWARE,
    .id = "org.snoozefuse.led",
    .name = "LED blink",
    .version = "1.0.0",
    .vendor = "snoozefuse",
    .description = "Blinks a /sys/class/leds device per pulse and restores its state",
    .config_help = "led=NAME: the LED, e.g. input3::capslock (required)\n"
                   "root=DIR: where LEDs live (default /sys/class/leds)",
    .create_sound_source = NULL,
    .create_pulse_emitter = create_emitter,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

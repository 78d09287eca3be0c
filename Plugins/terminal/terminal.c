/* terminal: a visual heartbeat on the terminal, with an optional bell, for snoozefuse.
 * Each pulse shows a heart at the start of the current (countdown) line for the pulse's length,
 * brighter for stronger pulses, then puts back what the line began with (a space).
 * config: tty=PATH (default /dev/tty), bell=0|1 (default 0: ring the bell on pulses of
 * intensity >= 0.9, i.e. the alarm pattern's first pulse), symbol=TEXT (default a heart) */
#define _GNU_SOURCE
#include "snoozefuse_plugin.h"
#include "../common/plugin_config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct terminal {
    snoozefuse_pulse_emitter emitter;
    int fd;
    int bell;
    char symbol[32];
} terminal;

static void write_all(int fd, const char *text) {
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t n = write(fd, text, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        left -= (size_t)n;
    }
}

static snoozefuse_status terminal_emit(snoozefuse_pulse_emitter *self, float intensity, uint32_t duration_ms,
                                       char *message, uint32_t capacity) {
    (void)message;
    (void)capacity;
    terminal *t = self->plugin_data;
    char line[128];
    /* Save the cursor, draw at column 1, restore: the countdown line keeps its text. */
    snprintf(line, sizeof line, "\0337\r%s%s\033[0m\0338%s", intensity >= 0.85f ? "\033[1;31m" : "\033[2;31m",
             t->symbol, t->bell && intensity >= 0.9f ? "\a" : "");
    write_all(t->fd, line);
    uint32_t shown = duration_ms < 400 ? duration_ms : 400;
    struct timespec wait = {shown / 1000, (long)(shown % 1000) * 1000000L};
    while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
    write_all(t->fd, "\0337\r \0338");
    return SNOOZEFUSE_STATUS_OK;
}

static void terminal_cancel(snoozefuse_pulse_emitter *self) {
    terminal *t = self->plugin_data;
    write_all(t->fd, "\0337\r \0338");
}

static void terminal_destroy(snoozefuse_pulse_emitter *self) {
    terminal *t = self->plugin_data;
    if (t->fd > 2) close(t->fd);
    free(t);
}

static snoozefuse_status create_emitter(const snoozefuse_host *host, const char *config,
                                        snoozefuse_pulse_emitter **out, char *message, uint32_t capacity) {
    (void)host;
    char path[256] = "/dev/tty", value[32];
    plugin_config_value(config, "tty", path, sizeof path);
    terminal *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    strcpy(t->symbol, "\xe2\x99\xa5"); /* U+2665 BLACK HEART SUIT */
    plugin_config_value(config, "symbol", t->symbol, sizeof t->symbol);
    if (plugin_config_value(config, "bell", value, sizeof value)) t->bell = strcmp(value, "0") != 0;
    t->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_APPEND);
    if (t->fd < 0) {
        snprintf(message, capacity, "cannot open %s: %s", path, strerror(errno));
        free(t);
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    t->emitter.struct_size = sizeof t->emitter;
    t->emitter.plugin_data = t;
    t->emitter.emit = terminal_emit;
    t->emitter.cancel = terminal_cancel;
    t->emitter.destroy = terminal_destroy;
    *out = &t->emitter;
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_PULSE_EMITTER,
    .id = "org.snoozefuse.terminal",
    .name = "Terminal heartbeat",
    .version = "1.0.0",
    .vendor = "snoozefuse",
    .description = "A visual heartbeat at the start of the countdown line, with an optional bell",
    .config_help = "tty=PATH: where to draw (default /dev/tty)\n"
                   "bell=0|1: ring the bell on strong pulses (default 0)\n"
                   "symbol=TEXT: what to show (default a heart)",
    .create_sound_source = NULL,
    .create_pulse_emitter = create_emitter,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

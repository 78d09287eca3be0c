/* terminal: a visual heartbeat on the terminal, with an optional bell, for snoozefuse.
 * Each pulse shows a heart just after the countdown line's text (where snoozefuse leaves the
 * cursor), brighter for stronger pulses, for the pulse's length (at most 0.4 s), then erases it.
 * It never moves to the start of the line, so the countdown's text stays as it was drawn; a
 * countdown redraw (which clears the line) simply clears the heart too.
 * config: tty=PATH (default /dev/tty), bell=0|1 (default 0; 1 rings the terminal bell with every
 * full-strength pulse, intensity >= 0.9: the heartbeat's main beat and each alarm pulse),
 * symbol=TEXT (default a heart; at most 16 bytes, no control characters).
 * Without colour when NO_COLOR is set or TERM is dumb. */
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

typedef struct terminal {
    snoozefuse_pulse_emitter emitter;
    int fd;
    int bell;
    int colour;
    char symbol[32];
} terminal;

static const char *const terminal_keys[] = {"tty", "bell", "symbol", NULL};

/* Save the cursor, draw after it, restore: the heart sits one space after the countdown's text. */
#define DRAW_FORMAT "\0337 %s%s%s\0338%s"
/* Erase from the cursor (the end of the countdown's text) to the end of the line. */
#define ERASE "\033[K"

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
    const char *style = !t->colour ? "" : intensity >= 0.85f ? "\033[1;31m" : "\033[2;31m";
    snprintf(line, sizeof line, DRAW_FORMAT, style, t->symbol, t->colour ? "\033[0m" : "",
             t->bell && intensity >= 0.9f ? "\a" : "");
    write_all(t->fd, line);
    uint32_t shown = duration_ms < 400 ? duration_ms : 400;
    struct timespec wait = {shown / 1000, (long)(shown % 1000) * 1000000L};
    while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
    write_all(t->fd, ERASE);
    return SNOOZEFUSE_STATUS_OK;
}

static void terminal_cancel(snoozefuse_pulse_emitter *self) {
    terminal *t = self->plugin_data;
    write_all(t->fd, ERASE);
}

static void terminal_destroy(snoozefuse_pulse_emitter *self) {
    terminal *t = self->plugin_data;
    if (t->fd > 2) close(t->fd);
    free(t);
}

static snoozefuse_status create_emitter(const snoozefuse_host *host, const char *config,
                                        snoozefuse_pulse_emitter **out, char *message, uint32_t capacity) {
    (void)host;
    char path[256] = "/dev/tty", value[64], symbol[64] = "\xe2\x99\xa5"; /* U+2665 BLACK HEART SUIT */
    int bell = 0;
    if (plugin_config_unknown_key(config, terminal_keys, "terminal", message, capacity)) return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    if (plugin_config_value(config, "bell", value, sizeof value)) {
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
            snprintf(message, capacity, "bell=%s: expected 0 or 1", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        bell = value[0] == '1';
    }
    if (plugin_config_value(config, "symbol", symbol, sizeof symbol)) {
        size_t length = strlen(symbol);
        int control = 0;
        for (size_t i = 0; i < length; i++) control |= (unsigned char)symbol[i] < 0x20 || symbol[i] == 0x7f;
        if (length == 0 || length > 16 || control) {
            snprintf(message, capacity, "symbol: expected 1 to 16 bytes of text without control characters (got %zu bytes%s)",
                     length, control ? ", with control characters" : "");
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
    }
    if (plugin_config_value(config, "tty", path, sizeof path) && !*path) {
        snprintf(message, capacity, "tty= is empty: name a terminal, e.g. tty=/dev/pts/3 (default /dev/tty)");
        return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    }
    terminal *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    memcpy(t->symbol, symbol, strlen(symbol) + 1); /* at most 16 bytes and the NUL, checked above */
    t->bell = bell;
    const char *no_colour = getenv("NO_COLOR"), *term = getenv("TERM");
    t->colour = !(no_colour && *no_colour) && !(term && strcmp(term, "dumb") == 0);
    t->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (t->fd < 0) {
        snprintf(message, capacity, "cannot open tty=%s: %s", path, strerror(errno));
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
    .description = "A visual heartbeat just after the countdown line's text, with an optional bell",
    .config_help = "tty=PATH: where to draw (default /dev/tty)\n"
                   "bell=0|1: ring the bell with full-strength pulses (default 0)\n"
                   "symbol=TEXT: what to show, 1 to 16 bytes (default a heart)",
    .create_sound_source = NULL,
    .create_pulse_emitter = create_emitter,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

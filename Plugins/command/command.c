/* command: runs a user command for each pulse, for snoozefuse.
 * The command runs with /bin/sh -c in its own process group, with SNOOZEFUSE_INTENSITY (0..1),
 * SNOOZEFUSE_DURATION_MS, SNOOZEFUSE_PULSE (1, 2, ...) and SNOOZEFUSE_PLUGIN_ID in its environment.
 * It is rate-limited (pulses closer than min-interval to the last run, or while the last run is
 * still going, are dropped) and time-limited (killed, with its whole process group, after timeout).
 * config: min-interval=MS (default 1000), timeout=MS (default 5000), run=COMMAND (must be the last
 * key: everything after "run=" is the command, commas included) */
#define _GNU_SOURCE
#include "snoozefuse_plugin.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef struct command {
    snoozefuse_pulse_emitter emitter;
    const snoozefuse_host *host;
    char *run;
    uint32_t min_interval_ms;
    uint32_t timeout_ms;
    uint64_t pulses;
    uint64_t last_start_ms;
    atomic_int running; /* a watcher thread owns a live child */
    atomic_int current_pid;
} command;

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int parse_ms(const char *text, uint32_t *out) {
    char *end;
    unsigned long value = strtoul(text, &end, 10);
    if (end == text || (*end != 0 && *end != ',') || value > 3600000ul) return 0;
    *out = (uint32_t)value;
    return 1;
}

typedef struct watch {
    command *owner;
    pid_t pid;
    uint32_t timeout_ms;
} watch;

/* Waits for the child; kills its process group when it outlives the timeout. */
static void *watcher(void *argument) {
    watch *w = argument;
    uint64_t deadline = now_ms() + w->timeout_ms;
    int status;
    for (;;) {
        pid_t done = waitpid(w->pid, &status, WNOHANG);
        if (done == w->pid || (done < 0 && errno != EINTR)) break;
        if (now_ms() >= deadline) {
            kill(-w->pid, SIGKILL);
            waitpid(w->pid, &status, 0);
            if (w->owner->host && w->owner->host->log)
                w->owner->host->log(w->owner->host, SNOOZEFUSE_LOG_WARNING,
                                    "command: the pulse command outlived its timeout and was killed");
            break;
        }
        struct timespec step = {0, 10 * 1000000L};
        nanosleep(&step, NULL);
    }
    atomic_store(&w->owner->current_pid, 0);
    atomic_store(&w->owner->running, 0);
    free(w);
    return NULL;
}

static snoozefuse_status command_emit(snoozefuse_pulse_emitter *self, float intensity, uint32_t duration_ms,
                                      char *message, uint32_t capacity) {
    command *c = self->plugin_data;
    uint64_t now = now_ms();
    if (atomic_load(&c->running)) return SNOOZEFUSE_STATUS_OK;                      /* still going: drop */
    if (c->pulses > 0 && now - c->last_start_ms < c->min_interval_ms) return SNOOZEFUSE_STATUS_OK; /* rate limit */
    c->pulses += 1;
    c->last_start_ms = now;

    char intensity_var[64], duration_var[64], pulse_var[64];
    snprintf(intensity_var, sizeof intensity_var, "SNOOZEFUSE_INTENSITY=%.3f", intensity);
    snprintf(duration_var, sizeof duration_var, "SNOOZEFUSE_DURATION_MS=%u", duration_ms);
    snprintf(pulse_var, sizeof pulse_var, "SNOOZEFUSE_PULSE=%llu", (unsigned long long)c->pulses);
    size_t count = 0;
    while (environ[count]) count++;
    char **env = calloc(count + 5, sizeof *env);
    if (!env) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "SNOOZEFUSE_INTENSITY=", 21) && strncmp(environ[i], "SNOOZEFUSE_DURATION_MS=", 23) &&
            strncmp(environ[i], "SNOOZEFUSE_PULSE=", 17) && strncmp(environ[i], "SNOOZEFUSE_PLUGIN_ID=", 21))
            env[n++] = environ[i];
    env[n++] = intensity_var;
    env[n++] = duration_var;
    env[n++] = pulse_var;
    env[n++] = "SNOOZEFUSE_PLUGIN_ID=org.snoozefuse.command";
    env[n] = NULL;

    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attributes, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    /* `--`: a command that starts with a dash (`--version`) is the command, not an option of sh. */
    char *argv[] = {"/bin/sh", "-c", "--", c->run, NULL};
    pid_t pid;
    int error = posix_spawn(&pid, "/bin/sh", NULL, &attributes, argv, env);
    posix_spawnattr_destroy(&attributes);
    free(env);
    if (error != 0) {
        snprintf(message, capacity, "cannot start /bin/sh: %s", strerror(error));
        return SNOOZEFUSE_STATUS_UNAVAILABLE;
    }
    watch *w = malloc(sizeof *w);
    pthread_t thread;
    atomic_store(&c->running, 1);
    atomic_store(&c->current_pid, pid);
    if (w) {
        w->owner = c;
        w->pid = pid;
        w->timeout_ms = c->timeout_ms;
    }
    if (!w || pthread_create(&thread, NULL, watcher, w) != 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, NULL, 0);
        free(w);
        atomic_store(&c->current_pid, 0);
        atomic_store(&c->running, 0);
        snprintf(message, capacity, "cannot start a watcher thread");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    pthread_detach(thread);
    return SNOOZEFUSE_STATUS_OK;
}

static void command_cancel(snoozefuse_pulse_emitter *self) {
    command *c = self->plugin_data;
    int pid = atomic_load(&c->current_pid);
    if (pid > 0) kill(-pid, SIGTERM);
}

static void command_destroy(snoozefuse_pulse_emitter *self) {
    command *c = self->plugin_data;
    int pid = atomic_load(&c->current_pid);
    if (pid > 0) kill(-pid, SIGKILL);
    /* The watcher reaps the child and then touches `c`: wait for it before freeing. */
    while (atomic_load(&c->running)) {
        struct timespec step = {0, 5 * 1000000L};
        nanosleep(&step, NULL);
    }
    free(c->run);
    free(c);
}

static snoozefuse_status create_emitter(const snoozefuse_host *host, const char *config,
                                        snoozefuse_pulse_emitter **out, char *message, uint32_t capacity) {
    command *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    c->host = host;
    c->min_interval_ms = 1000;
    c->timeout_ms = 5000;
    const char *p = config ? config : "";
    while (*p) {
        if (!strncmp(p, "run=", 4)) {
            c->run = strdup(p + 4);
            break;
        } else if (!strncmp(p, "min-interval=", 13)) {
            if (!parse_ms(p + 13, &c->min_interval_ms)) goto bad_number;
        } else if (!strncmp(p, "timeout=", 8)) {
            if (!parse_ms(p + 8, &c->timeout_ms) || c->timeout_ms == 0) goto bad_number;
        } else {
            const char *end = strchr(p, ',');
            int length = end ? (int)(end - p) : (int)strlen(p);
            snprintf(message, capacity, "unknown key in \"%.*s\" (command accepts min-interval, timeout, run)", length, p);
            free(c);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        const char *end = strchr(p, ',');
        if (!end) break;
        p = end + 1;
        continue;
    bad_number:
        snprintf(message, capacity, "\"%.40s\": expected a number of milliseconds up to 3600000", p);
        free(c);
        return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    }
    if (!c->run || !*c->run) {
        snprintf(message, capacity, "no command: add run=COMMAND as the last key, e.g. command:run=notify-send wake");
        free(c->run);
        free(c);
        return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    }
    c->emitter.struct_size = sizeof c->emitter;
    c->emitter.plugin_data = c;
    c->emitter.emit = command_emit;
    c->emitter.cancel = command_cancel;
    c->emitter.destroy = command_destroy;
    *out = &c->emitter;
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_PULSE_EMITTER,
    .features = SNOOZEFUSE_FEATURE_RUNS_COMMANDS,
    .id = "org.snoozefuse.command",
    .name = "Command",
    .version = "1.0.0",
    .vendor = "snoozefuse",
    .description = "Runs a command per pulse with SNOOZEFUSE_* variables, rate- and time-limited",
    .config_help = "min-interval=MS: drop pulses closer than this to the last run (default 1000)\n"
                   "timeout=MS: kill the command's process group after this long (default 5000)\n"
                   "run=COMMAND: the shell command; must be the last key (commas allowed)",
    .create_sound_source = NULL,
    .create_pulse_emitter = create_emitter,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

/* An example snoozefuse plugin in C: a gentle "rain" sound source (filtered noise with drops).
 *
 * Build (from the repository root):
 *     cc -std=c11 -O2 -shared -fPIC -I Sources/SnoozeFusePluginABI/include \
 *        Examples/c-plugin/rain.c -o example-rain.so
 * Check:
 *     snoozefuse plugins check example-rain.so
 *
 * config: volume=0..1 (default 0.4) */
#include "snoozefuse_plugin.h"
#include "snoozefuse_plugin_config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rain {
    snoozefuse_sound_source source; /* first, so the instance pointer is the struct pointer */
    uint32_t channels;
    uint32_t seed;
    float low;
    float drop;
    float volume;
} rain;

static float next_random(rain *r) { /* in [-1, 1) */
    r->seed = r->seed * 1664525u + 1013904223u;
    return (float)(r->seed >> 8) / 8388608.0f - 1.0f;
}

/* [main-thread] Everything render needs is prepared here. */
static snoozefuse_status rain_activate(snoozefuse_sound_source *self, uint32_t sample_rate, uint32_t channels,
                                       uint32_t max_frames, const char *config, char *message, uint32_t capacity) {
    (void)sample_rate;
    (void)max_frames;
    rain *r = self->plugin_data;
    r->volume = 0.4f;
    static const char *const keys[] = {"volume", NULL};
    if (plugin_config_unknown_key(config, keys, "rain", message, capacity)) return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    char value[32];
    if (plugin_config_value(config, "volume", value, sizeof value)) {
        char *end;
        double v = strtod(value, &end);
        if (end == value || *end != 0 || v < 0 || v > 1) {
            snprintf(message, capacity, "volume: expected a number from 0 to 1, not \"%s\"", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        r->volume = (float)v;
    }
    r->channels = channels;
    r->seed = 12345;
    r->low = 0;
    r->drop = 0;
    return SNOOZEFUSE_STATUS_OK;
}

/* [audio-thread] No allocation, no locks, no I/O: arithmetic only. */
static snoozefuse_status rain_render(snoozefuse_sound_source *self, float *out, uint32_t frames) {
    rain *r = self->plugin_data;
    for (uint32_t i = 0; i < frames; i++) {
        float white = next_random(r);
        r->low += 0.08f * (white - r->low);                         /* soft hiss */
        if (next_random(r) > 0.9995f) r->drop = 0.8f;                /* now and then a drop */
        r->drop *= 0.995f;
        float sample = (r->low * 2.0f + white * r->drop) * r->volume;
        if (sample > 1) sample = 1;
        if (sample < -1) sample = -1;
        for (uint32_t c = 0; c < r->channels; c++) out[i * r->channels + c] = sample;
    }
    return SNOOZEFUSE_STATUS_OK;
}

static void rain_deactivate(snoozefuse_sound_source *self) { (void)self; }

static void rain_destroy(snoozefuse_sound_source *self) { free(self->plugin_data); }

static snoozefuse_status create_source(const snoozefuse_host *host, snoozefuse_sound_source **out, char *message,
                                       uint32_t capacity) {
    rain *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    r->source.struct_size = sizeof r->source; /* rule 1: the size you were compiled with */
    r->source.plugin_data = r;
    r->source.activate = rain_activate;
    r->source.render = rain_render;
    r->source.deactivate = rain_deactivate;
    r->source.destroy = rain_destroy;
    *out = &r->source;
    if (host && host->log) host->log(host, SNOOZEFUSE_LOG_DEBUG, "rain: instance created");
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_SOUND_SOURCE,
    .features = SNOOZEFUSE_FEATURE_SLEEP_SOUND,
    .id = "org.example.rain",
    .name = "Rain (example)",
    .version = "1.0.0",
    .vendor = "Example Author",
    .description = "Soft rain: the C example from PLUGINS.md",
    .config_help = "volume=0..1: loudness (default 0.4)",
    .create_sound_source = create_source,
    .create_pulse_emitter = NULL,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

/* noise: white, pink or brown noise as a sound source for snoozefuse (a sleep sound).
 * config: color=white|pink|brown (default pink), volume=0..1 (default 0.3), seed=N */
#include "snoozefuse_plugin.h"
#include "snoozefuse_plugin_config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { COLOR_WHITE, COLOR_PINK, COLOR_BROWN };

typedef struct noise {
    snoozefuse_sound_source source;
    enum color color;
    float volume;
    uint32_t channels;
    uint64_t state;        /* xorshift64* */
    float b[7];            /* pink filter (Paul Kellet's refined method) */
    float brown;
    int active;
} noise;

static const char *const noise_keys[] = {"color", "volume", "seed", NULL};

static snoozefuse_status noise_activate(snoozefuse_sound_source *self, uint32_t rate, uint32_t channels,
                                        uint32_t max_frames, const char *config, char *message, uint32_t capacity) {
    (void)max_frames;
    (void)rate;
    noise *n = self->plugin_data;
    char value[64];
    if (channels == 0 || channels > 8) {
        snprintf(message, capacity, "unsupported channel count %u", channels);
        return SNOOZEFUSE_STATUS_UNSUPPORTED;
    }
    if (plugin_config_unknown_key(config, noise_keys, "noise", message, capacity)) return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    n->color = COLOR_PINK;
    n->volume = 0.3f;
    n->state = 0x9E3779B97F4A7C15ull;
    if (plugin_config_value(config, "color", value, sizeof value)) {
        if (!strcmp(value, "white")) n->color = COLOR_WHITE;
        else if (!strcmp(value, "pink")) n->color = COLOR_PINK;
        else if (!strcmp(value, "brown")) n->color = COLOR_BROWN;
        else {
            snprintf(message, capacity, "color=%s: expected white, pink or brown", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
    }
    if (plugin_config_value(config, "volume", value, sizeof value)) {
        char *end;
        double v = strtod(value, &end);
        if (*end || !(v >= 0 && v <= 1)) {
            snprintf(message, capacity, "volume=%s: expected a number from 0 to 1", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        n->volume = (float)v;
    }
    if (plugin_config_value(config, "seed", value, sizeof value)) {
        char *end;
        errno = 0;
        unsigned long long seed = strtoull(value, &end, 10);
        if (!*value || *end || errno || value[0] == '-') {
            snprintf(message, capacity, "seed=%s: expected a whole number from 0 to 18446744073709551615", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        n->state = seed ? seed : 1;
    }
    memset(n->b, 0, sizeof n->b);
    n->brown = 0;
    n->channels = channels;
    n->active = 1;
    return SNOOZEFUSE_STATUS_OK;
}

/* A uniform sample in [-1, 1). */
static inline float next_white(noise *n) {
    uint64_t x = n->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    n->state = x;
    uint32_t bits = (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 40); /* 24 bits */
    return (float)bits / 8388608.0f - 1.0f;
}

static snoozefuse_status noise_render(snoozefuse_sound_source *self, float *out, uint32_t frames) {
    noise *n = self->plugin_data;
    if (!n->active) return SNOOZEFUSE_STATUS_WRONG_STATE;
    for (uint32_t i = 0; i < frames; i++) {
        float white = next_white(n), value;
        switch (n->color) {
        case COLOR_WHITE:
            value = white;
            break;
        case COLOR_PINK: {
            float *b = n->b;
            b[0] = 0.99886f * b[0] + white * 0.0555179f;
            b[1] = 0.99332f * b[1] + white * 0.0750759f;
            b[2] = 0.96900f * b[2] + white * 0.1538520f;
            b[3] = 0.86650f * b[3] + white * 0.3104856f;
            b[4] = 0.55000f * b[4] + white * 0.5329522f;
            b[5] = -0.7616f * b[5] - white * 0.0168980f;
            value = (b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + white * 0.5362f) * 0.11f;
            b[6] = white * 0.115926f;
            break;
        }
        default: /* brown: leaky integration of white noise */
            n->brown = (n->brown + 0.02f * white) / 1.02f;
            value = n->brown * 3.5f;
            break;
        }
        if (value > 1) value = 1;
        if (value < -1) value = -1;
        value *= n->volume;
        for (uint32_t c = 0; c < n->channels; c++) out[i * n->channels + c] = value;
    }
    return SNOOZEFUSE_STATUS_OK;
}

static void noise_deactivate(snoozefuse_sound_source *self) { ((noise *)self->plugin_data)->active = 0; }

static void noise_destroy(snoozefuse_sound_source *self) { free(self->plugin_data); }

static snoozefuse_status create_source(const snoozefuse_host *host, snoozefuse_sound_source **out, char *message,
                                       uint32_t capacity) {
    (void)host;
    noise *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    n->source.struct_size = sizeof n->source;
    n->source.plugin_data = n;
    n->source.activate = noise_activate;
    n->source.render = noise_render;
    n->source.deactivate = noise_deactivate;
    n->source.destroy = noise_destroy;
    *out = &n->source;
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_SOUND_SOURCE,
    .features = SNOOZEFUSE_FEATURE_SLEEP_SOUND,
    .id = "org.snoozefuse.noise",
    .name = "Noise",
    .version = "1.0.0",
    .vendor = "snoozefuse",
    .description = "White, pink or brown noise",
    .config_help = "color=white|pink|brown: the spectrum (default pink)\n"
                   "volume=0..1: amplitude (default 0.3)\n"
                   "seed=N: random seed (default fixed)",
    .create_sound_source = create_source,
    .create_pulse_emitter = NULL,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

/* tone: a synthesized alarm sound source (beep, chime, siren), for snoozefuse.
 * config: pattern=beep|chime|siren, frequency=HZ (20..8000, default 880), volume=0..1 (default 0.8) */
#include "snoozefuse_plugin.h"
#include "snoozefuse_plugin_config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum pattern { PATTERN_BEEP, PATTERN_CHIME, PATTERN_SIREN };

typedef struct tone {
    snoozefuse_sound_source source;
    enum pattern pattern;
    double frequency;
    double volume;
    uint32_t rate;
    uint32_t channels;
    uint64_t frame; /* position within the one-second pattern */
    double phase;
    int active;
} tone;

/* Finds `key` in "k=v,k=v" and copies its value to `out`; returns 1 when found. */
static const char *const tone_keys[] = {"pattern", "frequency", "volume", NULL};

static snoozefuse_status tone_activate(snoozefuse_sound_source *self, uint32_t rate, uint32_t channels,
                                       uint32_t max_frames, const char *config, char *message, uint32_t capacity) {
    (void)max_frames;
    tone *t = self->plugin_data;
    char value[64];
    if (rate < 8000 || rate > 384000 || channels == 0 || channels > 8) {
        snprintf(message, capacity, "unsupported format: %u Hz, %u channels", rate, channels);
        return SNOOZEFUSE_STATUS_UNSUPPORTED;
    }
    if (plugin_config_unknown_key(config, tone_keys, "tone", message, capacity)) return SNOOZEFUSE_STATUS_INVALID_CONFIG;
    t->pattern = PATTERN_BEEP;
    t->frequency = 880;
    t->volume = 0.8;
    if (plugin_config_value(config, "pattern", value, sizeof value)) {
        if (!strcmp(value, "beep")) t->pattern = PATTERN_BEEP;
        else if (!strcmp(value, "chime")) t->pattern = PATTERN_CHIME;
        else if (!strcmp(value, "siren")) t->pattern = PATTERN_SIREN;
        else {
            snprintf(message, capacity, "pattern=%s: expected beep, chime or siren", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
    }
    if (plugin_config_value(config, "frequency", value, sizeof value)) {
        char *end;
        double f = strtod(value, &end);
        if (*end || !(f >= 20 && f <= 8000)) {
            snprintf(message, capacity, "frequency=%s: expected a number of Hz from 20 to 8000", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        t->frequency = f;
    }
    if (plugin_config_value(config, "volume", value, sizeof value)) {
        char *end;
        double v = strtod(value, &end);
        if (*end || !(v >= 0 && v <= 1)) {
            snprintf(message, capacity, "volume=%s: expected a number from 0 to 1", value);
            return SNOOZEFUSE_STATUS_INVALID_CONFIG;
        }
        t->volume = v;
    }
    t->rate = rate;
    t->channels = channels;
    t->frame = 0;
    t->phase = 0;
    t->active = 1;
    return SNOOZEFUSE_STATUS_OK;
}

/* 5 ms raised-cosine edges on a segment of `length` frames, at `at` frames into it. */
static double edge(uint64_t at, uint64_t length, uint32_t rate) {
    uint64_t ramp = rate / 200 ? rate / 200 : 1;
    uint64_t from_edge = at < length - 1 - at ? at : length - 1 - at;
    if (from_edge >= ramp) return 1;
    return 0.5 - 0.5 * cos(M_PI * (double)from_edge / (double)ramp);
}

static snoozefuse_status tone_render(snoozefuse_sound_source *self, float *out, uint32_t frames) {
    tone *t = self->plugin_data;
    if (!t->active) return SNOOZEFUSE_STATUS_WRONG_STATE;
    const uint64_t period = t->rate;
    const double two_pi = 2 * M_PI;
    for (uint32_t i = 0; i < frames; i++) {
        double sample = 0;
        uint64_t f = t->frame;
        switch (t->pattern) {
        case PATTERN_BEEP: { /* four 100 ms beeps 200 ms apart, then 300 ms of silence */
            uint64_t spacing = t->rate / 5, length = t->rate / 10, beep = f / spacing, in = f - beep * spacing;
            if (beep < 4 && in < length) {
                t->phase += two_pi * t->frequency / t->rate;
                sample = sin(t->phase) * edge(in, length, t->rate);
            } else t->phase = 0;
            break;
        }
        case PATTERN_CHIME: { /* two decaying notes (a fifth apart), 0 and 0.4 s */
            uint64_t second = t->rate * 2 / 5;
            double base = f < second ? t->frequency : t->frequency * 1.5;
            uint64_t in = f < second ? f : f - second;
            double decay = exp(-6.0 * (double)in / t->rate);
            t->phase += two_pi * base / t->rate;
            sample = sin(t->phase) * decay * edge(in < 100 ? in : 100, 202, t->rate);
            if (f + 1 == second) t->phase = 0;
            break;
        }
        case PATTERN_SIREN: { /* sweeps frequency..2*frequency and back each second */
            double x = (double)f / period;
            double tri = x < 0.5 ? 2 * x : 2 - 2 * x;
            t->phase += two_pi * t->frequency * (1 + tri) / t->rate;
            sample = sin(t->phase);
            break;
        }
        }
        if (t->phase > two_pi) t->phase -= two_pi;
        float value = (float)(sample * t->volume);
        for (uint32_t c = 0; c < t->channels; c++) out[i * t->channels + c] = value;
        t->frame = f + 1 == period ? 0 : f + 1;
    }
    return SNOOZEFUSE_STATUS_OK;
}

static void tone_deactivate(snoozefuse_sound_source *self) { ((tone *)self->plugin_data)->active = 0; }

static void tone_destroy(snoozefuse_sound_source *self) { free(self->plugin_data); }

static snoozefuse_status create_source(const snoozefuse_host *host, snoozefuse_sound_source **out, char *message,
                                       uint32_t capacity) {
    (void)host;
    tone *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(message, capacity, "out of memory");
        return SNOOZEFUSE_STATUS_FAILED;
    }
    t->source.struct_size = sizeof t->source;
    t->source.plugin_data = t;
    t->source.activate = tone_activate;
    t->source.render = tone_render;
    t->source.deactivate = tone_deactivate;
    t->source.destroy = tone_destroy;
    *out = &t->source;
    return SNOOZEFUSE_STATUS_OK;
}

static const snoozefuse_plugin_descriptor descriptor = {
    .struct_size = sizeof(snoozefuse_plugin_descriptor),
    .abi_major = SNOOZEFUSE_PLUGIN_ABI_MAJOR,
    .abi_minor = SNOOZEFUSE_PLUGIN_ABI_MINOR,
    .kinds = SNOOZEFUSE_KIND_SOUND_SOURCE,
    .features = 0,
    .id = "org.snoozefuse.tone",
    .name = "Tone",
    .version = "1.0.0",
    .vendor = "snoozefuse",
    .description = "Synthesized alarm patterns: beep, chime, siren",
    .config_help = "pattern=beep|chime|siren: the pattern (default beep)\n"
                   "frequency=HZ: pitch from 20 to 8000 (default 880; siren sweeps up to twice it)\n"
                   "volume=0..1: peak amplitude (default 0.8)",
    .create_sound_source = create_source,
    .create_pulse_emitter = NULL,
    .get_extension = NULL,
};

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void) { return &descriptor; }

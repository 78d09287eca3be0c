/* Render cost of sound-source plugins vs decoding the same length of WAV with libsndfile.
 * Built and run by Scripts/bench-report.py (section plugins):  bench-plugin-render SECONDS WAV PLUGIN.so[:config]... */
#define _GNU_SOURCE
#include "snoozefuse_plugin.h"
#include <dlfcn.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RATE = 48000, CHANNELS = 2, BLOCK = 1024 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 4) return 64;
    int seconds = atoi(argv[1]);
    long frames = (long)seconds * RATE;
    static float buffer[BLOCK * CHANNELS];

    /* A WAV of the same length (16-bit stereo, a sine), written once, then decoded. */
    SF_INFO info = {.samplerate = RATE, .channels = CHANNELS, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    SNDFILE *out = sf_open(argv[2], SFM_WRITE, &info);
    if (!out) { fprintf(stderr, "cannot write %s\n", argv[2]); return 1; }
    for (long done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < BLOCK; i++)
            buffer[2 * i] = buffer[2 * i + 1] = 0.5f * (float)__builtin_sin((done + i) * 0.0576);
        sf_writef_float(out, buffer, BLOCK);
    }
    sf_close(out);
    memset(&info, 0, sizeof info);
    double c0 = cpu();
    SNDFILE *in = sf_open(argv[2], SFM_READ, &info);
    long decoded = 0;
    sf_count_t got;
    while ((got = sf_readf_float(in, buffer, BLOCK)) > 0) decoded += got;
    sf_close(in);
    double wav = cpu() - c0;
    printf("decode WAV (libsndfile, 16-bit stereo): %.3f ms CPU per second of audio (%ld frames)\n",
           wav * 1000 / seconds, decoded);

    for (int a = 3; a < argc; a++) {
        char path[1024], *config = "";
        snprintf(path, sizeof path, "%s", argv[a]);
        char *colon = strchr(path, ':');
        if (colon) { *colon = 0; config = colon + 1; }
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!handle) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        snoozefuse_plugin_entry_fn entry = (snoozefuse_plugin_entry_fn)dlsym(handle, SNOOZEFUSE_PLUGIN_ENTRY_SYMBOL);
        const snoozefuse_plugin_descriptor *d = entry();
        snoozefuse_sound_source *s;
        char message[256] = "";
        if (d->create_sound_source(NULL, &s, message, sizeof message) ||
            s->activate(s, RATE, CHANNELS, BLOCK, config, message, sizeof message)) {
            fprintf(stderr, "%s: %s\n", path, message);
            return 1;
        }
        double w0 = now(), c1 = cpu();
        for (long done = 0; done < frames; done += BLOCK) s->render(s, buffer, BLOCK);
        double used = cpu() - c1, wall = now() - w0;
        const char *shown = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        printf("render %-36s %.3f ms CPU per second of audio (%.2fx the WAV decode; wall %.3f ms/s)\n",
               shown, used * 1000 / seconds, used / wav, wall * 1000 / seconds);
        s->deactivate(s);
        s->destroy(s);
    }
    return 0;
}

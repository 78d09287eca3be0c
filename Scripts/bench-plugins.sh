#!/bin/sh
# Plugin benchmarks (figures, not pass/fail):
#  1. scanning and loading 100 plugins (budget: 50 ms warm): `snoozefuse plugins list` over a folder
#     of 100 distinct plugins, minus the same command over an empty folder (process start-up), cold
#     (an empty cache each run: every file loaded in the scanner child) and warm (the cache from the
#     run before), side by side with a plain loop that dlopens the same files and calls their entry;
#  2. render cost of the tone and noise plugins per second of audio, against decoding the same
#     length of WAV with libsndfile.
# Usage: Scripts/bench-plugins.sh [scratch-path]   (default .build; builds in release)
set -eu
cd "$(dirname "$0")/.."
scratch=${1:-.build}
swift build -c release --scratch-path "$scratch" >/dev/null
bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 700 "$work"
mkdir -m 700 "$work/plugins" "$work/empty"

i=0
while [ $i -lt 100 ]; do
    cc -std=c11 -O2 -shared -fPIC -I Sources/SnoozeFusePluginABI/include -DPLUGIN_ID="\"org.bench.p$i\"" \
        Tests/SnoozeFusePluginTests/Fixtures/test_plugin.c -o "$work/plugins/p$i.so" -lm &
    i=$((i + 1))
    [ $((i % 8)) -eq 0 ] && wait
done
wait

# Runs "$@" N times; prints the median wall time in ms.
median_ms() {
    n=$1; shift
    k=0
    : > "$work/times"
    while [ $k -lt "$n" ]; do
        start=$(date +%s%N)
        "$@" >/dev/null 2>&1
        end=$(date +%s%N)
        echo $(( (end - start) / 1000 )) >> "$work/times"
        k=$((k + 1))
    done
    sort -n "$work/times" | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1000 }'
}

# Keep the built-in plugins of the build folder out: run copies of the binary and of the plugin host
# program (which it finds next to itself) from the work folder.
mkdir -m 700 "$work/bin"
cp "$bin/snoozefuse" "$bin/snoozefuse-plugin-host" "$work/bin/"
run() { SNOOZEFUSE_PLUGIN_PATH="$1" XDG_DATA_HOME="$work/empty" XDG_CACHE_HOME="$2" "$work/bin/snoozefuse" plugins list; }
cold() { rm -rf "$work/cache-cold"; run "$work/plugins" "$work/cache-cold"; }
warm() { run "$work/plugins" "$work/cache-warm"; }
none() { run "$work/empty" "$work/cache-none"; }
count=$(warm | wc -l)
full_cold=$(median_ms 11 cold)
full_warm=$(median_ms 21 warm)
empty=$(median_ms 21 none)

# The peer: dlopen each file and call its entry, nothing else (no isolation, no checks, no cache).
cat > "$work/dlopen-loop.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int loaded = 0;
    for (int i = 1; i < argc; i++) {
        void *library = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (!library) continue;
        const void *(*entry)(void) = (const void *(*)(void))dlsym(library, "snoozefuse_plugin_entry");
        if (entry && entry()) loaded++;
    }
    printf("%d\n", loaded);
    return 0;
}
C
cc -std=c11 -O2 "$work/dlopen-loop.c" -o "$work/dlopen-loop" -ldl
peer=$(median_ms 21 "$work/dlopen-loop" "$work"/plugins/p*.so)
peer_empty=$(median_ms 21 "$work/dlopen-loop")
echo "plugins list with $count plugins: cold $full_cold ms, warm $full_warm ms; with none: $empty ms (medians)"
awk -v c="$full_cold" -v w="$full_warm" -v e="$empty" -v p="$peer" -v pe="$peer_empty" 'BEGIN {
    printf "scanning and loading 100 plugins: cold %.2f ms, warm %.2f ms (budget 50 ms warm)\n", c - e, w - e
    printf "a plain dlopen loop over the same files: %.2f ms; ratios: cold %.1f x, warm %.1f x\n", p - pe, (c - e) / (p - pe), (w - e) / (p - pe)
}'

cc -std=c11 -O2 -I Sources/SnoozeFusePluginABI/include Scripts/bench-plugin-render.c -o "$work/render" -lsndfile -ldl -lm
"$work/render" 60 "$work/same-length.wav" \
    "$bin/libsnoozefuse-tone.so:pattern=beep" "$bin/libsnoozefuse-tone.so:pattern=siren" \
    "$bin/libsnoozefuse-noise.so:color=white" "$bin/libsnoozefuse-noise.so:color=pink" \
    "$bin/libsnoozefuse-noise.so:color=brown"

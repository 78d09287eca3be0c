#!/bin/sh
# Plugin benchmarks (figures, not pass/fail):
#  1. scanning and loading 100 plugins (budget: 50 ms): `snoozefuse plugins list` over a folder of
#     100 distinct plugins, minus the same command over an empty folder (process start-up);
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

# Keep the built-in plugins of the build folder out: run a copy of the binary from the work folder.
cp "$bin/snoozefuse" "$work/snoozefuse"
count=$(SNOOZEFUSE_PLUGIN_PATH="$work/plugins" XDG_DATA_HOME="$work/empty" "$work/snoozefuse" plugins list | wc -l)
full=$(SNOOZEFUSE_PLUGIN_PATH="$work/plugins" XDG_DATA_HOME="$work/empty" median_ms 21 "$work/snoozefuse" plugins list)
empty=$(SNOOZEFUSE_PLUGIN_PATH="$work/empty" XDG_DATA_HOME="$work/empty" median_ms 21 "$work/snoozefuse" plugins list)
echo "plugins list with $count plugins: $full ms; with none: $empty ms (median of 21)"
awk -v f="$full" -v e="$empty" 'BEGIN { printf "scanning and loading 100 plugins: %.2f ms (budget 50 ms)\n", f - e }'

cc -std=c11 -O2 -I Sources/SnoozeFusePluginABI/include Scripts/bench-plugin-render.c -o "$work/render" -lsndfile -ldl -lm
"$work/render" 60 "$work/same-length.wav" \
    "$bin/libsnoozefuse-tone.so:pattern=beep" "$bin/libsnoozefuse-tone.so:pattern=siren" \
    "$bin/libsnoozefuse-noise.so:color=white" "$bin/libsnoozefuse-noise.so:color=pink" \
    "$bin/libsnoozefuse-noise.so:color=brown"

#!/usr/bin/env bash
# Alarm lateness (SPEC §8): N short naps, each alarm's first frame written to ALSA's `null` PCM,
# measured from its deadline (the `lateness_ms` of its `alarm` event): p50, p99 and max.
#
# Usage: Scripts/bench-lateness.sh [NAPS] [BINARY]     (defaults: 50, .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
naps="${1:-50}"
binary="$(realpath "${2:-.build/release/snoozefuse}")"
[ -x "$binary" ] || { echo "bench-lateness: $binary is not built (make build)" >&2; exit 66; }
for _ in $(seq "$naps"); do
    "$binary" nap --no-hold --release 0 --nap 1 --max 5 --ring-limit 1 --device null --events jsonl --quiet 2>/dev/null \
        | sed -n 's/.*"event":"alarm".*"lateness_ms":\([0-9.]*\).*/\1/p'
done | sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "no alarm events"; exit 1 }
    p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1]
    printf "naps %d  p50 %.3f ms  p99 %.3f ms  max %.3f ms   budget p99 <= 2 ms: %s\n", NR, p50, p99, v[NR], (p99 <= 2 ? "met" : "NOT met")
}'

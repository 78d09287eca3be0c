#!/usr/bin/env bash
# Wake-ups per second while napping: voluntary context switches of every thread of the process
# (from /proc/PID/task/*/status), measured over a window that starts after start-up, side by side
# with `sleep` in the same run. Budget (SPEC §8): <= 0.05 per second with --quiet.
#
# Usage: Scripts/bench-wakeups.sh [SECONDS] [BINARY]
#   SECONDS  length of the measured window (default 30)
#   BINARY   the snoozefuse binary (default .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
window="${1:-30}"
binary="${2:-.build/release/snoozefuse}"
settle=2
[ -x "$binary" ] || { echo "bench-wakeups: $binary is not built (make build)" >&2; exit 66; }

# Sum of voluntary context switches over all threads of PID.
switches() {
    local total=0 n
    for status in /proc/"$1"/task/*/status; do
        n=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$status" 2>/dev/null || echo 0)
        total=$((total + ${n:-0}))
    done
    echo "$total"
}

span=$((window + settle + 5))
# A nap that stays in `napping` for the whole window: release 1 s, nap and max well past it.
"$binary" nap --no-hold --quiet --release 1 --nap "$((span * 2))" --max "$((span * 3))" >/dev/null 2>&1 &
nap_pid=$!
sleep "$span" &
sleep_pid=$!
trap 'kill "$nap_pid" "$sleep_pid" 2>/dev/null || true' EXIT

sleep "$settle"
nap_before=$(switches "$nap_pid"); sleep_before=$(switches "$sleep_pid")
threads=$(ls /proc/"$nap_pid"/task | wc -l)
sleep "$window"
nap_after=$(switches "$nap_pid"); sleep_after=$(switches "$sleep_pid")

awk -v w="$window" -v a="$((nap_after - nap_before))" -v b="$((sleep_after - sleep_before))" -v t="$threads" 'BEGIN {
    printf "window %d s after %d s of start-up\n", w, 2
    printf "%-34s %8s %10s\n", "process", "wakeups", "per second"
    printf "%-34s %8d %10.3f   (%d threads)\n", "snoozefuse nap --quiet (napping)", a, a / w, t
    printf "%-34s %8d %10.3f\n", "sleep", b, b / w
    printf "budget: <= 0.05 per second: %s\n", (a / w <= 0.05 ? "met" : "NOT met")
}'

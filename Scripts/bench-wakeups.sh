#!/usr/bin/env bash
# Wake-ups while napping (SPEC §8), side by side in one run: voluntary context switches of every
# thread of each process (from /proc/PID/task/*/status), counted over a window that starts after
# start-up:
#   1. napping with the countdown shown on a pseudo-terminal, next to termdown counting down on one
#      (budget: at most 1.0 per second, one redraw a second)
#   2. napping with --quiet, next to `sleep` (budget: at most 0.05 per second)
#   3. alarm lateness over NAPS naps (budget: p99 at most 2 ms)
#
# Usage: Scripts/bench-wakeups.sh [SECONDS] [NAPS] [BINARY]
#   SECONDS  length of each measured window (default 30)
#   NAPS     naps for the lateness (default 50)
#   BINARY   the snoozefuse binary (default .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
window="${1:-30}"
naps="${2:-50}"
binary="${3:-.build/release/snoozefuse}"
settle=2
[ -x "$binary" ] || { echo "bench-wakeups: $binary is not built (make build)" >&2; exit 66; }
command -v termdown >/dev/null || { echo "bench-wakeups: termdown is missing (pip install termdown)" >&2; exit 69; }

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# Sum of voluntary context switches over all threads of PID.
switches() {
    local total=0 n
    for status in /proc/"$1"/task/*/status; do
        n=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$status" 2>/dev/null || echo 0)
        total=$((total + ${n:-0}))
    done
    echo "$total"
}

# Measures two processes over the same window: prints "label wakeups per-second threads" for each.
# A process that wakes periodically wakes W or W + 1 times in a window of W seconds, depending on
# where the window falls: the window starts just after a wake-up of the first process (looked for
# every 10 ms, for at most 2 s), so it counts the wake-ups of W whole periods.
measure() {
    local label_a="$1" pid_a="$2" label_b="$3" pid_b="$4"
    sleep "$settle"
    local a0 b0 a1 b1 threads_a threads_b before
    before=$(switches "$pid_a")
    for _ in $(seq 200); do [ "$(switches "$pid_a")" -gt "$before" ] && break; sleep 0.01; done
    a0=$(switches "$pid_a"); b0=$(switches "$pid_b")
    threads_a=$(ls /proc/"$pid_a"/task | wc -l); threads_b=$(ls /proc/"$pid_b"/task | wc -l)
    sleep "$window"
    a1=$(switches "$pid_a"); b1=$(switches "$pid_b")
    awk -v w="$window" -v la="$label_a" -v a="$((a1 - a0))" -v ta="$threads_a" \
        -v lb="$label_b" -v b="$((b1 - b0))" -v tb="$threads_b" 'BEGIN {
        printf "%-44s %8d %10.3f   (%d threads)\n", la, a, a / w, ta
        printf "%-44s %8d %10.3f   (%d threads)\n", lb, b, b / w, tb
    }'
}

# Waits for a PID file that pty-run.py writes.
read_pid() {
    for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.05; done
    cat "$1"
}

span=$((window + settle + 10))
printf "%-44s %8s %10s\n" "process (window ${window} s)" "wakeups" "per second"

echo "== 1. countdown shown on a pseudo-terminal =="
./Scripts/pty-run.py "$work/nap.pid" "$binary" nap --no-hold --release 1 --nap "$((span * 2))" --max "$((span * 3))" &
pids+=($!)
./Scripts/pty-run.py "$work/termdown.pid" termdown "$((span * 2))" &
pids+=($!)
nap_pid=$(read_pid "$work/nap.pid"); termdown_pid=$(read_pid "$work/termdown.pid")
pids+=("$nap_pid" "$termdown_pid")
result=$(measure "snoozefuse nap (countdown, napping)" "$nap_pid" "termdown (countdown)" "$termdown_pid")
echo "$result"
kill "$nap_pid" "$termdown_pid" 2>/dev/null || true
echo "$result" | awk 'NR == 1 { printf "budget <= 1.0 per second with the countdown: %s\n", ($(NF - 2) <= 1.0 ? "met" : "NOT met") }'

echo "== 2. --quiet =="
"$binary" nap --no-hold --quiet --release 1 --nap "$((span * 2))" --max "$((span * 3))" >/dev/null 2>&1 &
quiet_pid=$!
sleep "$span" &
sleep_pid=$!
pids+=("$quiet_pid" "$sleep_pid")
result=$(measure "snoozefuse nap --quiet (napping)" "$quiet_pid" "sleep" "$sleep_pid")
echo "$result"
kill "$quiet_pid" "$sleep_pid" 2>/dev/null || true
echo "$result" | awk 'NR == 1 { printf "budget <= 0.05 per second with --quiet: %s\n", ($(NF - 2) <= 0.05 ? "met" : "NOT met") }'

echo "== 3. alarm lateness over $naps naps (device: null) =="
./Scripts/bench-lateness.sh "$naps" "$binary"

#!/usr/bin/env bash
# A nap that nothing silences, measured (SPEC §8, §9), side by side in one run:
#   1. `snoozefuse status` on a running nap against `cat` of its live state file (hyperfine)
#   2. wake-ups per second of a napping nap, alone and with one `status --follow` client
#   3. the idle guardian: its wake-ups per second and its peak memory (VmHWM)
#
# Usage: Scripts/bench-survival.sh [SECONDS] [BINARY]   (defaults: 20, .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
window="${1:-20}"
binary="$(realpath "${2:-.build/release/snoozefuse}")"
[ -x "$binary" ] || { echo "bench-survival: $binary is not built (make build)" >&2; exit 66; }
command -v hyperfine >/dev/null || { echo "bench-survival: hyperfine is missing (make deps)" >&2; exit 69; }

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
export XDG_STATE_HOME="$work/state" XDG_RUNTIME_DIR="$work/run" XDG_DATA_HOME="$work/data"
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"

switches() {
    local total=0 n
    for status in /proc/"$1"/task/*/status; do
        n=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$status" 2>/dev/null || echo 0)
        total=$((total + ${n:-0}))
    done
    echo "$total"
}

span=$((window * 3 + 30))
"$binary" nap --no-hold --quiet --release 1 --nap "$span" --max "$((span * 2))" --device null >/dev/null 2>&1 &
nap=$!
pids+=("$nap")
state="$XDG_STATE_HOME/snoozefuse/session.json"
for _ in $(seq 100); do [ -s "$state" ] && grep -q '"napping"' "$state" && break; sleep 0.1; done
guardian=$(sed -n 's/.*"guardianPid":\([0-9]*\).*/\1/p' "$state")
[ -n "$guardian" ] || { echo "bench-survival: the nap has no guardian" >&2; exit 70; }

echo "== 1. status against cat (nap running) =="
hyperfine -N --warmup 5 --runs 100 --export-json "$work/status.json" "$binary status" "cat $state" >/dev/null
python3 - "$work/status.json" <<'PY'
import json, sys
results = {r["command"].split()[0].split("/")[-1]: r for r in json.load(open(sys.argv[1]))["results"]}
status, cat = results["snoozefuse"], results["cat"]
print(f"snoozefuse status  median {status['median']*1000:.2f} ms (min {status['min']*1000:.2f})")
print(f"cat                median {cat['median']*1000:.2f} ms (min {cat['min']*1000:.2f})")
ratio = status["median"] / cat["median"]
print(f"ratio {ratio:.1f} x   budgets: <= 20 ms: {'met' if status['median'] <= 0.020 else 'NOT met'}; <= 2 x cat: {'met' if ratio <= 2 else 'NOT met'}")
PY

echo "== 2. wake-ups of the napping nap, alone and with one status --follow client (${window} s each) =="
a0=$(switches "$nap"); sleep "$window"; a1=$(switches "$nap")
"$binary" status --follow >/dev/null 2>&1 &
follower=$!
pids+=("$follower")
sleep 1
b0=$(switches "$nap"); f0=$(switches "$follower"); sleep "$window"; b1=$(switches "$nap"); f1=$(switches "$follower")
kill "$follower" 2>/dev/null || true
awk -v w="$window" -v a="$((a1 - a0))" -v b="$((b1 - b0))" -v f="$((f1 - f0))" 'BEGIN {
    printf "nap alone           %6.3f per second\n", a / w
    printf "nap with a follower %6.3f per second (added: %.3f)\n", b / w, (b - a) / w
    printf "the follower itself %6.3f per second (one line per displayed second)\n", f / w
}'

echo "== 3. the idle guardian (${window} s) =="
g0=$(switches "$guardian"); sleep "$window"; g1=$(switches "$guardian")
hwm=$(awk '/^VmHWM/ {print $2}' /proc/"$guardian"/status)
rss=$(awk '/^VmRSS/ {print $2}' /proc/"$guardian"/status)
awk -v w="$window" -v g="$((g1 - g0))" -v hwm="$hwm" -v rss="$rss" 'BEGIN {
    printf "guardian wake-ups %6.3f per second (budget <= 0.05: %s); peak memory %.1f MiB (now %.1f MiB)\n", g / w, (g / w <= 0.05 ? "met" : "NOT met"), hwm / 1024, rss / 1024
}'

#!/usr/bin/env bash
# Runs every benchmark script of SPEC §8 on the shipped release binary, one after another on an
# otherwise quiet machine, and writes Benchmarks/RESULTS.md: the machine, the date, the commit, a
# line per budget as the scripts judge it, and each script's own output (each compares snoozefuse
# with its peer in the same run). Adds alarm lateness with both cores saturated by stress-ng.
# Not run by CI.
#
# Usage: Scripts/bench-report.sh [--quick]
#   --quick  shorter windows and fewer naps, for development (the report says so)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

# The peers and tools, from Debian (and termdown from PyPI).
missing=()
for pair in aplay:alsa-utils sndfile-convert:sndfile-programs sox:sox hyperfine:hyperfine stress-ng:stress-ng \
            pulseaudio:pulseaudio pactl:pulseaudio-utils sqlite3:sqlite3; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v termdown >/dev/null || python3 -m pip install --quiet termdown

make build >/dev/null
binary=.build/release/snoozefuse
if [ $quick -eq 1 ]; then window=5; naps=10; minutes=3; history=1000; else window=20; naps=50; minutes=30; history=10000; fi

out=Benchmarks/RESULTS.md
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p Benchmarks

run() { # name, command…: runs it, keeps its output
    local name=$1; shift
    echo "bench-report: $name" >&2
    if ! "$@" > "$work/$name.txt" 2>&1; then echo "(exited $?)" >> "$work/$name.txt"; fi
}

run wakeups ./Scripts/bench-wakeups.sh "$window" "$naps" "$binary"
# stress-ng in a process group of its own (setsid), ended with all its workers before the next
# benchmark: a worker left spinning would load every measurement after it.
setsid stress-ng --cpu "$(nproc)" --timeout 600s >/dev/null 2>&1 &
stress=$!
sleep 2
run lateness-loaded ./Scripts/bench-lateness.sh "$naps" "$binary"
kill -INT -- "-$stress" 2>/dev/null || true
wait "$stress" 2>/dev/null || true
for _ in $(seq 50); do pgrep -g "$stress" >/dev/null || break; sleep 0.1; done
kill -KILL -- "-$stress" 2>/dev/null || true
run audio ./Scripts/bench-audio.sh "$naps" "$binary"
run import ./Scripts/bench-import.sh "$minutes" "$binary"
run survival ./Scripts/bench-survival.sh "$window" "$binary"
run history ./Scripts/bench-history.sh "$history" "$binary"
# Last: it builds the plugins and the plugin host in release with its own flags.
run plugins ./Scripts/bench-plugins.sh

{
    echo "# Benchmark results"
    echo
    echo "Written by \`Scripts/bench-report.sh$([ $quick -eq 1 ] && echo ' --quick')\` from one run; each section is one script's"
    echo "own output, with snoozefuse and its peer measured side by side in that run."
    echo
    echo "- Date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- Commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Plugins Package.swift || echo ' (with changes not committed)')"
    echo "- Machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM"
    echo "- System: $(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r), $(swift --version 2>/dev/null | head -1)"
    [ $quick -eq 1 ] && echo "- Quick mode: ${window} s windows, ${naps} naps, a ${minutes}-minute WAV, ${history} naps of history. Not for comparison."
    echo
    echo "## Budgets (as each script judges them)"
    echo
    grep -h -i -E "budget" "$work"/*.txt | sed 's/^/- /' || true
    echo
    echo "Alarm lateness with every core busy (stress-ng --cpu $(nproc)):"
    grep -h -E "^naps" "$work/lateness-loaded.txt" | sed 's/^/- /' || true
    for name in wakeups lateness-loaded audio import survival history plugins; do
        echo
        echo "## $name"
        echo
        echo '```'
        grep -v -E '^\[[0-9]+/[0-9]+\]|^Building|^Build of|^Compiling|^Write |^Planning' "$work/$name.txt" || true
        echo '```'
    done
} > "$out"
echo "bench-report: wrote $out" >&2

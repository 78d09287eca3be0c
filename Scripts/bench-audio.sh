#!/usr/bin/env bash
# Audio benchmarks (SPEC §8), side by side in one run:
#   1. alarm lateness over N short naps (deadline → first frame written to ALSA): p50/p99/max
#   2. CPU time per second of audio in steady state, the same WAV to the same real-time device (a
#      PulseAudio null sink started here, private to this run), against `aplay`
#   3. peak memory streaming a 1-hour WAV, against `aplay` (both to ALSA's `null` PCM, which takes
#      samples as fast as they come: aplay streams the whole file; snoozefuse streams it, looping,
#      for 15 s of wall time, which is far more than an hour of audio)
#
# Usage: Scripts/bench-audio.sh [NAPS] [BINARY]     (defaults: 50, .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
naps="${1:-50}"
binary="$(realpath "${2:-.build/release/snoozefuse}")"
[ -x "$binary" ] || { echo "bench-audio: $binary is not built (make build)" >&2; exit 66; }
for tool in sox aplay pulseaudio pactl python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench-audio: $tool is missing (make deps)" >&2; exit 69; }
done

work="$(mktemp -d)"
daemon_pid=""
cleanup() {
    if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "== 1. alarm lateness over $naps naps (device: null) =="
./Scripts/bench-lateness.sh "$naps" "$binary"

echo "== 2. CPU per second of audio, real-time to a PulseAudio null sink =="
export XDG_RUNTIME_DIR="$work/run"
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
export PULSE_SERVER="unix:$XDG_RUNTIME_DIR/pulse/native"
pulseaudio --daemonize=no --exit-idle-time=-1 -n --log-target=stderr \
    --load="module-null-sink sink_name=nullsink" --load=module-native-protocol-unix 2>"$work/pulse.log" &
daemon_pid=$!
for _ in $(seq 50); do pactl info >/dev/null 2>&1 && break; sleep 0.1; done
pactl info >/dev/null 2>&1 || { echo "bench-audio: PulseAudio did not start" >&2; cat "$work/pulse.log" >&2; exit 69; }
# Steady-state cost: the run time of every thread of the process (schedstat, in ns, as the
# scheduler accounts it) from 5 s after it starts to 25 s after, divided by those 20 s of audio.
# Start-up (linking, opening the device, the server's stream set-up) is outside the window, so it
# adds no noise. Each is measured 5 times, alternating, and the medians are compared.
steady_cpu() {
    python3 - "$@" <<'EOF'
import glob, os, signal, subprocess, sys, time
def run_time(pid):
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            total += int(open(path).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(5)
first = run_time(process.pid)
time.sleep(20)
second = run_time(process.pid)
alive = process.poll() is None
process.send_signal(signal.SIGTERM)
process.wait()
if not alive:
    sys.exit(f"bench-audio: {sys.argv[1]} ended before the window did")
print("%.6f" % ((second - first) / 1e9 / 20))
EOF
}
sox -n -r 44100 -c 2 -b 16 "$work/tone.wav" synth 40 sine 440 sine 660 gain -6
median() { sort -n | sed -n 3p; }
for _ in 1 2 3 4 5; do
    steady_cpu aplay -q -D pulse "$work/tone.wav" >> "$work/aplay.cpu"
    steady_cpu "$binary" sounds play "$work/tone.wav" --device pulse --duration 40 --volume 100 --fade-in 0 >> "$work/sf.cpu"
done
awk -v a="$(median < "$work/aplay.cpu")" -v b="$(median < "$work/sf.cpu")" \
    -v as="$(sort -n "$work/aplay.cpu" | tr '\n' ' ')" -v bs="$(sort -n "$work/sf.cpu" | tr '\n' ' ')" 'BEGIN {
    printf "aplay       %.6f s CPU per s of audio (median of: %s)\n", a, as
    printf "snoozefuse  %.6f s CPU per s of audio (median of: %s)\n", b, bs
    if (a > 0) printf "ratio %.2f x aplay   budget <= 1.0: %s\n", b / a, (b <= a ? "met" : "NOT met")
    else printf "aplay used no measurable CPU per second\n"
}'
kill "$daemon_pid" 2>/dev/null || true; daemon_pid=""

echo "== 3. peak memory streaming a 1-hour WAV (device: null) =="
sox -n -r 44100 -c 2 -b 16 "$work/hour.wav" synth 3600 sine 440 gain -6
/usr/bin/time -f "%M" -o "$work/aplay.mem" aplay -q -D null "$work/hour.wav"
/usr/bin/time -f "%M" -o "$work/sf.mem" "$binary" sounds play "$work/hour.wav" --device null --duration 15 --volume 100 --fade-in 0 >/dev/null 2>&1
awk -v a="$(cat "$work/aplay.mem")" -v b="$(cat "$work/sf.mem")" 'BEGIN {
    printf "aplay       peak RSS %.1f MiB\nsnoozefuse  peak RSS %.1f MiB   budget <= 20 MiB: %s\n", a / 1024, b / 1024, (b / 1024 <= 20 ? "met" : "NOT met")
}'

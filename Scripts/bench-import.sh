#!/usr/bin/env bash
# Importing a long WAV into the sound library against `sndfile-convert` writing CAF: the same
# 30-minute 44.1 kHz stereo 16-bit WAV, the same folder, the same run (hyperfine). Budget
# (SPEC §8): import <= 1.1 x sndfile-convert.
#
# The import does more than the conversion: it hashes the decoded audio (SHA-256), fsyncs the file
# and the folder, and adds the index row. Each import run starts from an empty library, so no
# run is a duplicate.
#
# Usage: Scripts/bench-import.sh [MINUTES] [BINARY]
#   MINUTES  length of the generated WAV (default 30)
#   BINARY   the snoozefuse binary (default .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-30}"
binary="$(realpath "${2:-.build/release/snoozefuse}")"
[ -x "$binary" ] || { echo "bench-import: $binary is not built (make build)" >&2; exit 66; }
for tool in hyperfine sox sndfile-convert python3; do
    command -v "$tool" >/dev/null || { echo "bench-import: $tool is not installed" >&2; exit 69; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/snoozefuse-bench-import.XXXXXX")"
trap 'rm -rf "$work"' EXIT
wav="$work/long.wav"
echo "bench-import: generating a ${minutes}-minute 44.1 kHz stereo 16-bit WAV" >&2
sox -n -r 44100 -c 2 -b 16 "$wav" synth "$((minutes * 60))" sine 300-3000 sine 440 gain -3

export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
hyperfine --warmup 1 --runs "${RUNS:-5}" --export-json "$work/result.json" \
    -n sndfile-convert --prepare "rm -f '$work/out.caf'" "sndfile-convert '$wav' '$work/out.caf'" \
    -n "snoozefuse sounds import" --prepare "rm -rf '$work/data'" "'$binary' sounds import '$wav' --name long" >&2

python3 - "$work/result.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
convert = results["sndfile-convert"]["median"]
imported = results["snoozefuse sounds import"]["median"]
ratio = imported / convert
print(f"sndfile-convert median {convert:.3f} s; snoozefuse sounds import median {imported:.3f} s; "
      f"ratio {ratio:.2f} (budget <= 1.10): {'within budget' if ratio <= 1.10 else 'OVER BUDGET'}")
PY

#!/usr/bin/env bash
# `make bench`: installs the peer tools the benchmarks compare with (from Debian; termdown from
# PyPI), builds the shipped release binary, and runs Scripts/bench-report.py, which measures every
# budget of SPEC §8 side by side with its peer (ABAB, at least 5 pairs) and writes
# Benchmarks/RESULTS.md. Run it on an otherwise quiet machine. Not run by CI.
#
# Usage: Scripts/bench-report.sh [--quick] [--only SECTION ...]   (see Scripts/bench-report.py --help)
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for pair in aplay:alsa-utils sndfile-convert:sndfile-programs sox:sox mpv:mpv hyperfine:hyperfine stress-ng:stress-ng \
            pulseaudio:pulseaudio pactl:pulseaudio-utils sqlite3:sqlite3 valgrind:valgrind cc:gcc /usr/bin/time:time; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v termdown >/dev/null || python3 -m pip install --quiet termdown

make build >/dev/null
exec python3 Scripts/bench-report.py "$@"

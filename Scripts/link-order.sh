#!/usr/bin/env bash
# Regenerates Scripts/link-order.txt: the functions a playing alarm runs, in the order the release
# link lays them out (lld --symbol-ordering-file, see RELEASE_FLAGS in the Makefile), then the data
# the short commands touch (see the end of this script).
#
# Why: the release binary is ~20 MB of code (the Swift runtime, Foundation, GRDB, ArgumentParser and
# ours, linked statically), of which an alarm runs ~0.8 MB spread over the whole of it. The kernel maps
# code 64 KiB at a time around each page touched (fault-around), so scattered hot functions cost
# their 64 KiB neighbourhoods: 8 MiB of resident code for 0.8 MiB run. Placed together they cost
# about what they weigh (SPEC §8: peak RSS playing a 1-hour file).
#
# How: every function of the binary that runs, under valgrind's callgrind, in the commands an alarm
# runs (`nap` to the alarm, `sounds play` of a 16-bit WAV and of a built-in sound), then in the short
# commands a status bar or a key binding starts again and again (`--version`, and `status`, `add`,
# `presets list` and `stop` against a running nap; issue 23: their start-up faults in each 64 KiB
# window of code it touches, and the kernel's page faults were most of their time). A function
# missing from the list (renamed since, or on a path not profiled) still links, only further away;
# rerun this (`make link-order`) after changes to the nap or playback path and commit the result.
#
# Order: first what a nap runs once its set-up is over until its alarm stops (its waiting and its
# alarm: the profiled nap is split where it gives back what its set-up touched,
# SetUpMemory.giveBack, and where its alarm stops; two naps are profiled, and what both ran there
# comes first), which is what stays resident through a nap; then the alarm's other functions:
# those every alarm command runs (with the start-up), then those of `sounds play` of a WAV (what
# the memory benchmark measures), then the alarm's rest; then the functions only the short
# commands run. Each group in order of first appearance; interleaving one command's functions with
# another's would spread each over more 64 KiB windows. Last come the functions that share one
# `.text` section with others in the toolchain's static libraries (the standard library's Swift.o
# is one 1.6 MB section): lld moves a section as a whole to where its first listed function is,
# and such a section placed early would split the cluster of the others.
#
# Usage: Scripts/link-order.sh [BINARY]   (default .build/release/snoozefuse; needs valgrind, sox, binutils)
set -euo pipefail
cd "$(dirname "$0")/.."
binary="$(realpath "${1:-.build/release/snoozefuse}")"
[ -x "$binary" ] || { echo "link-order: $binary is not built (make build)" >&2; exit 66; }
for tool in valgrind sox python3 readelf nm swift; do
    command -v "$tool" >/dev/null || { echo "link-order: $tool is missing (apt-get install valgrind sox python3 binutils)" >&2; exit 69; }
done
static_libs="$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeResourcePath"] + "_static/linux")')"
[ -d "$static_libs" ] || { echo "link-order: no static Swift libraries in $static_libs" >&2; exit 69; }
work="$(mktemp -d)"
nap=""
# The profiled nap ends with the script, however it ends (it would otherwise ring for two hours).
trap '[ -n "$nap" ] && kill "$nap" 2>/dev/null; rm -rf "$work"' EXIT
# Folders of its own, the control socket's too: a nap of the person running this keeps its own.
export HOME="$work/home" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config" \
    XDG_RUNTIME_DIR="$work/run"
mkdir -p "$HOME"
mkdir -m 700 "$XDG_RUNTIME_DIR"
sox -n -r 44100 -c 2 -b 16 "$work/tone.wav" synth 3 sine 440 gain -6

profile() {
    local name="$1"; shift
    valgrind --tool=callgrind --demangle=no ${split:+"--dump-before=$split"} ${ring_end:+"--dump-before=$ring_end"} \
        --callgrind-out-file="$work/$name.callgrind" \
        "$binary" "$@" >/dev/null 2>"$work/$name.log" || {
        echo "link-order: '$*' failed under valgrind:" >&2; tail -20 "$work/$name.log" >&2; exit 1; }
}
profile play-wav sounds play "$work/tone.wav" --device null --duration 2 --volume 100 --fade-in 0
profile play-builtin sounds play chime --device null --duration 2
# A nap as the memory benchmark rings it, in three parts: its set-up, until it gives back what that
# touched (SetUpMemory.giveBack: nap.callgrind.1); its waiting and alarm, until the alarm stops
# (AudioAlarmOutput.stop: nap.callgrind.2); and its end (the history, the files removed: the
# later dumps). Twice: what runs in the middle part differs between runs (valgrind runs one
# thread at a time, and a one-time initialisation, of a type's metadata say, falls on either side
# of a split as the threads happen to run), so what both runs ran there comes first (see the order
# below).
for run in nap nap-again; do
    split='*SetUpMemory*giveBack*' ring_end='*AudioAlarmOutputC4stop*' profile "$run" nap --no-hold --release 0 --nap 6 --max 20 \
        --ring-limit 2 --device null --quiet --sound "$work/tone.wav" --volume 100 --fade-in 0
    [ -s "$work/$run.callgrind.2" ] || { echo "link-order: the profiled nap did not give back its set-up's memory (SetUpMemory.giveBack) and then stop its alarm (AudioAlarmOutput.stop)" >&2; exit 1; }
done
profile version --version
# The short commands against a running nap (started here, ended by the profiled `stop`).
"$binary" nap --no-hold --release 0 --nap 1h --max 2h --device null --quiet >/dev/null 2>&1 &
nap=$!
for _ in $(seq 100); do grep -qs '"napping"' "$XDG_STATE_HOME/snoozefuse/session.json" && break; sleep 0.1; done
grep -qs '"napping"' "$XDG_STATE_HOME/snoozefuse/session.json" || { echo "link-order: the nap to profile against did not start" >&2; exit 1; }
profile status status
profile add add 1s
profile presets presets list
# Every load and store of the same short commands (lackey), for the order of the data below.
trace() {
    local name="$1"; shift
    valgrind --tool=lackey --trace-mem=yes --log-file="$work/$name.lackey" "$binary" "$@" >/dev/null 2>&1 || {
        echo "link-order: '$*' failed under valgrind's lackey (see $work/$name.lackey)" >&2; exit 1; }
}
trace version --version
trace status status
trace add add 1s
trace presets presets list
profile stop stop --yes
wait "$nap" || true
nap=""

# Functions that share a `.text` section with other functions, in the static libraries.
for library in "$static_libs"/*.a; do
    readelf -SsW "$library" 2>/dev/null
done | python3 -c '
import re, sys
member, text_sections, functions = None, set(), {}
def flush():
    for (section, names) in functions.items():
        if section in text_sections and len(names) > 1:
            print("\n".join(names))
for line in sys.stdin.buffer:
    line = line.decode("utf-8", "replace")
    if line.startswith("File: "):
        flush(); member, text_sections, functions = line, set(), {}
        continue
    m = re.match(r"^\s*\[\s*(\d+)\]\s+\.text\s", line)
    if m:
        text_sections.add(m.group(1)); continue
    p = line.split()
    if len(p) >= 8 and p[3] == "FUNC" and p[6].isdigit():
        functions.setdefault(p[6], []).append(p[7])
flush()
' > "$work/shared-sections.txt"

python3 - "$binary" "$work/shared-sections.txt" "$work" > Scripts/link-order.txt <<'EOF'
import glob, re, sys
binary, shared_path, work = sys.argv[1:4]
# Each nap's waiting and alarm (its second part), then the rest of what an alarm runs (see above).
waits = [f"{work}/nap.callgrind.2", f"{work}/nap-again.callgrind.2"]
ends = [path for path in glob.glob(f"{work}/nap.callgrind*") if path != f"{work}/nap.callgrind.1" and path not in waits]
played = f"{work}/play-wav.callgrind"
alarm = waits + [played, f"{work}/play-builtin.callgrind", f"{work}/nap.callgrind.1"] + sorted(ends)
outputs = alarm + [f"{work}/{name}.callgrind" for name in ("version", "status", "add", "presets", "stop")]
shared = set(open(shared_path).read().split())
first_seen, runs_in = {}, {}
for path in outputs:
    objects, functions, current, here = {}, {}, None, set()
    for line in open(path, errors="replace"):
        m = re.match(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, number, name = m.groups()
        if kind in ("ob", "cob"):
            if name:
                objects[number] = name
            if kind == "ob":
                current = objects.get(number)
            continue
        if name:
            functions[number] = name     # callgrind names a function in full once, then by number
        if kind != "fn" or current != binary:
            continue
        symbol = functions[number].split("'")[0]   # and marks recursion levels as name'2
        if symbol.startswith("0x") or symbol in here:
            continue
        here.add(symbol)
        first_seen.setdefault(symbol, len(first_seen))
        runs_in.setdefault(symbol, []).append(path)
def key(s):
    # Each alarm command once, however many parts its profile has (a nap's count as one).
    in_alarm = {"nap" if path.startswith(f"{work}/nap") else path for path in runs_in[s] if path in alarm}
    waited = sum(path in runs_in[s] for path in waits)
    # What a nap runs once its set-up is over and until its alarm stops (its waiting and its alarm)
    # first: that is what stays resident through the nap, and it is not spread by the set-up's code
    # or the nap's end around it; what both profiled naps ran then before what one of them did.
    # Then the alarm's other functions as they always were laid out (every alarm command's first,
    # then a WAV playing's), then the short commands' own, which no alarm runs: a playing alarm's
    # layout is not spread by them (its first frame would fault in more windows at the deadline).
    return (s in shared, -waited, not in_alarm, -len(in_alarm), played not in in_alarm, first_seen[s])
order = sorted(first_seen, key=key)
print("\n".join(order))
print(f"{len(order)} functions, {sum(s in shared for s in order)} of them in shared sections", file=sys.stderr)
EOF
# Then the data: each object file's `.data` and `.bss` is one section (Swift has no data-sections
# option), and the start-up of a short command touched pages all over a 1 MB `.bss` and a 330 KB
# `.data`, each a page fault of its own (issue 23). Listing a symbol of each section the short
# commands touch, in the order they first touch them, gathers those sections at the start of
# `.data` and `.bss` (lld orders any section by the symbols listed, and ignores `#` lines).
# Page faults, this list added to the functions' order before it: `status` 317 -> 259,
# `--version` 202 -> 174, `presets list` 417 -> 359 (with the functions profiled anew as well,
# 242, 166 and 345).
python3 - "$binary" "$work/version.lackey" "$work/status.lackey" "$work/add.lackey" "$work/presets.lackey" \
    >> Scripts/link-order.txt <<'EOF'
import bisect, subprocess, sys
binary, traces = sys.argv[1], sys.argv[2:]
ranges = []
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.replace("[ ", "[").split()
    if len(fields) > 5 and fields[1] in (".data", ".bss"):
        ranges.append((int(fields[3], 16), int(fields[3], 16) + int(fields[5], 16)))
symbols = []
for line in subprocess.run(["nm", "-nS", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 4 and fields[2] in "bBdD":
        symbols.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
starts = [start for start, _, _ in symbols]
order, seen = [], set()
for path in traces:
    for line in open(path, errors="replace"):
        if line[:2] not in (" S", " M", " L"):
            continue
        address = int(line[3:].split(",")[0], 16)
        if not any(low <= address < high for low, high in ranges):
            continue
        index = bisect.bisect_right(starts, address) - 1
        if index < 0 or address >= symbols[index][0] + max(symbols[index][1], 1):
            continue
        name = symbols[index][2]
        if name not in seen:
            seen.add(name)
            order.append(name)
print("# The data the short commands touch, in the order they first touch it.")
print("\n".join(order))
print(f"{len(order)} data symbols", file=sys.stderr)
EOF
echo "link-order: written to Scripts/link-order.txt" >&2

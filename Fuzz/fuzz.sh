#!/usr/bin/env bash
# Builds one libFuzzer target (with AddressSanitizer) from a pure-Swift module's sources plus an
# entry file, and runs it on its committed seeds.
#
# Usage: Fuzz/fuzz.sh TARGET [RUNS] [extra libFuzzer flags...]
#   TARGET  durations  (SnoozeFuseCore: the duration parser)
#           caf        (SnoozeFuseCAF: the CAF chunk inspector)
#           control    (SnoozeFuseCore: the control socket's request intake)
#           x11        (SnoozeFuseCore: the X11 messages of --hold desktop, Xauthority, DISPLAY)
#           json       (SnoozeFuseCore: the JSON reader of the live state and the nap's answers, and
#                       the live state's ranges, with extreme numbers planted at each member)
#   RUNS    executions (default 1000000)
# Generated files (binary, grown corpus, crash artifacts) go to Fuzz/out/TARGET/, which git ignores.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:?usage: Fuzz/fuzz.sh TARGET [RUNS] [libFuzzer flags...]}"
runs="${2:-1000000}"
shift $(( $# < 2 ? $# : 2 ))
case "$target" in
    durations) module=SnoozeFuseCore entry=Fuzz/Durations/FuzzDurations.swift seeds=Fuzz/Durations/seeds max_len=64 ;;
    caf) module=SnoozeFuseCAF entry=Fuzz/CAF/FuzzCAF.swift seeds=Fuzz/CAF/seeds max_len=4096 ;;
    control) module=SnoozeFuseCore entry=Fuzz/Control/FuzzControlIntake.swift seeds=Fuzz/Control/seeds max_len=1024 ;;
    x11) module=SnoozeFuseCore entry=Fuzz/X11/FuzzX11Wire.swift seeds=Fuzz/X11/seeds max_len=512 ;;
    json) module=SnoozeFuseCore entry=Fuzz/JSON/FuzzJSON.swift seeds=Fuzz/JSON/seeds max_len=4096 ;;
    *) echo "fuzz.sh: unknown target '$target' (known: durations, caf, control, x11, json)" >&2; exit 64 ;;
esac

out="Fuzz/out/$target"
mkdir -p "$out/corpus"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -module-name "$module" \
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault \
    -require-explicit-sendable \
    $(find "Sources/$module" -name '*.swift' | sort) "$entry" \
    -use-ld=lld -o "$out/fuzz-$target"

# Let libFuzzer and AddressSanitizer report crashes; the Swift runtime's backtracer would wait.
export SWIFT_BACKTRACE=enable=no
exec "$out/fuzz-$target" -runs="$runs" -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$out/" "$@" "$out/corpus" "$seeds"

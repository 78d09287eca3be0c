#!/usr/bin/env bash
# Builds the CAF inspector fuzz target (libFuzzer + AddressSanitizer) and runs it.
# Usage: Fuzz/fuzz-caf.sh [RUNS] [extra libFuzzer flags...]   (RUNS defaults to 1000000)
# Everything generated (binary, grown corpus, crash artifacts) goes to Fuzz/out/caf/, which git ignores.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
shift || true
out=Fuzz/out/caf
mkdir -p "$out/corpus"

swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -module-name SnoozeFuseCAF \
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault \
    -require-explicit-sendable \
    Sources/SnoozeFuseCAF/*.swift Fuzz/CAF/FuzzCAF.swift \
    -use-ld=lld -o "$out/fuzz-caf"

# Let libFuzzer and AddressSanitizer report crashes; the Swift runtime's own backtracer would wait.
export SWIFT_BACKTRACE=enable=no

# New inputs go to the first folder; the committed seeds are only read.
exec "$out/fuzz-caf" -runs="$runs" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$out/" "$@" "$out/corpus" Fuzz/CAF/seeds

#!/usr/bin/env bash
# Runs the test suite (Swift Testing) and closes with one plain line, `N passed, N failed`, so the
# result reads the same to people and to CI. XCTest's own "Executed 0 tests" line only means that
# no XCTest-style tests exist; every test here is a Swift Testing test.
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
swift test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
summary="$(grep -E 'Test run with [0-9]+ tests?' "$log" | tail -n 1)"
total="$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' <<<"$summary")"
skipped="$(grep -cE '^➜ Test .* skipped' "$log")"
if [ -z "$total" ]; then
    echo "run-tests: no Swift Testing summary found (swift test exited $status)" >&2
    exit $(( status == 0 ? 1 : status ))
fi
if [ "$status" -eq 0 ]; then
    echo "$((total - skipped)) passed, 0 failed, $skipped skipped"
else
    failed="$(grep -cE '^✘ Test [^ ]+.* failed after' "$log")"
    echo "$((total - skipped - failed)) passed, $failed failed, $skipped skipped"
fi
exit "$status"

#!/usr/bin/env bash
# Runs the test suite (Swift Testing) and closes with one plain line, `N passed, N failed`, so the
# result reads the same to people and to CI. XCTest's own "Executed 0 tests" line only means that
# no XCTest-style tests exist; every test here is a Swift Testing test.
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# A test that hangs must not hang CI: the whole run gets TEST_TIME_LIMIT seconds (default 40 min; a
# full run takes about 5 min on 2 cores), then the tests still running are named. Output is line-buffered so
# that what was printed before a hang is not lost with the process.
limit="${TEST_TIME_LIMIT:-2400}"
timeout --kill-after=30 "$limit" stdbuf -oL -eL swift test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "run-tests: the tests did not finish within ${limit} s; still running when stopped:" >&2
    # Started but never finished (a parameterised test's cases are named through their test).
    sed -nE 's/^◇ Test (.*) started\.$/\1/p' "$log" | grep -vE '^(case passing|run$)' | sort -u > "$log.started"
    sed -nE 's/^[✔✘] Test (.*) (passed|failed) after .*/\1/p' "$log" | sed -E 's/ with [0-9]+ test cases?$//' | sort -u > "$log.ended"
    comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    rm -f "$log.started" "$log.ended"
fi
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
    failed="$(grep -E '^✘ Test [^ ]+.* failed after' "$log" | grep -cv '^✘ Test run with')"
    # The failures again, last, where a reader of only the end of the log (CI) sees them.
    grep -E '^✘ Test ' "$log" | grep -v '^✘ Test run with' | sed 's/^/failed: /' >&2
    grep -E '^✘ .*(recorded an issue|Expectation failed)' "$log" | head -n 20 | cut -c1-400 | sed 's/^/  /' >&2
    echo "$((total - skipped - failed)) passed, $failed failed, $skipped skipped"
fi
exit "$status"

#!/usr/bin/env bash
# Runs the test suite (Swift Testing) and closes with one plain line, `N passed, N failed`, so the
# result reads the same to people and to CI. XCTest's own "Executed 0 tests" line only means that
# no XCTest-style tests exist; every test here is a Swift Testing test.
#
# Without arguments each test target runs in a process of its own, one after the other: in one
# process for all, two cores give Swift's shared pool two threads, and the plugin and packaging
# tests that wait for programs held both for over a minute; when they let go, every other test
# started at once, and the real-time audio tests (a sound server, a nap, a recording) ran on a
# machine with no time to give them. With arguments (`--filter X`), one `swift test "$@"`.
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log" "$log.run"' EXIT
# A test that hangs must not hang CI: the whole run gets TEST_TIME_LIMIT seconds (default 40 min; a
# full run takes about 14 min on 2 cores), then the tests still running are named. Output is
# line-buffered so that what was printed before a hang is not lost with the process.
limit="${TEST_TIME_LIMIT:-2400}"
deadline=$(( $(date +%s) + limit ))

# Runs `swift test ARGS…` within what is left of the time limit, its output into the log.
run() {
    local left=$(( deadline - $(date +%s) ))
    [ "$left" -gt 0 ] || return 124
    timeout --kill-after=30 "$left" stdbuf -oL -eL swift test "$@" 2>&1 | tee "$log.run"
    local status=${PIPESTATUS[0]}
    cat "$log.run" >> "$log"
    return "$status"
}

status=0
total=0
if [ "$#" -gt 0 ]; then
    run "$@"
    status=$?
else
    # The build once, then each target's tests with it.
    swift build --build-tests 2>&1 | tail -n 3
    build=${PIPESTATUS[0]}
    if [ "$build" -ne 0 ]; then
        echo "run-tests: the build failed (swift build --build-tests exited $build)" >&2
        exit "$build"
    fi
    targets=$(sed -nE '/\.testTarget\(/{n;s/.*name: "([^"]+)".*/\1/p}' Package.swift)
    [ -n "$targets" ] || { echo "run-tests: no test target found in Package.swift" >&2; exit 1; }
    for target in $targets; do
        echo "run-tests: $target"
        run --skip-build --filter "$target\\."
        result=$?
        if [ "$result" -ne 0 ] && [ "$status" -eq 0 ]; then status=$result; fi
        if [ "$result" -eq 124 ] || [ "$result" -eq 137 ]; then break; fi
    done
fi
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "run-tests: the tests did not finish within ${limit} s; still running when stopped:" >&2
    # Started but never finished (a parameterised test's cases are named through their test).
    sed -nE 's/^◇ Test (.*) started\.$/\1/p' "$log" | grep -vE '^(case passing|run$)' | sort -u > "$log.started"
    sed -nE 's/^[✔✘] Test (.*) (passed|failed) after .*/\1/p' "$log" | sed -E 's/ with [0-9]+ test cases?$//' | sort -u > "$log.ended"
    comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    rm -f "$log.started" "$log.ended"
fi
# Every run's summary line: `Test run with N tests in M suites passed|failed after …`.
while read -r count; do total=$(( total + count )); done < <(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' "$log")
skipped="$(grep -cE '^➜ Test .* skipped' "$log")"
if ! grep -qE 'Test run with [0-9]+ tests?' "$log"; then
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

#!/usr/bin/env bash
# `snoozefuse history` over 10,000 recorded naps against `sqlite3` running the same query on the
# same database (SPEC §8: ≤ 2 × sqlite3), side by side in one hyperfine run. Both write to
# /dev/null: snoozefuse its table, summary and chart (plain: not a terminal), sqlite3 the rows.
# The naps are written by the program's own schema (a first `config set` creates the database),
# then filled in with one SQL statement; a `history export --csv` is measured alongside.
#
# Usage: Scripts/bench-history.sh [NAPS] [BINARY]   (defaults: 10000, .build/release/snoozefuse)
set -euo pipefail
cd "$(dirname "$0")/.."
naps="${1:-10000}"
binary="$(realpath "${2:-.build/release/snoozefuse}")"
[ -x "$binary" ] || { echo "bench-history: $binary is not built (make build)" >&2; exit 66; }
for tool in hyperfine sqlite3; do
    command -v "$tool" >/dev/null || { echo "bench-history: $tool is missing (make deps)" >&2; exit 69; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" NO_COLOR=1
"$binary" config set bpm 60 2>/dev/null
database="$XDG_DATA_HOME/snoozefuse/library.sqlite"
sqlite3 "$database" >/dev/null <<SQL
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $naps - 1)
INSERT INTO naps (napId, startedAt, endedAt, fallAsleepSeconds, napSeconds, latenessMs, outcome,
                  alarmReason, snoozes, sound, output, rungBy, recordedBy, preset)
SELECT printf('nap-%05d', i),
       strftime('%Y-%m-%dT%H:%M:%S.000Z', 'now', printf('-%d minutes', ($naps - i) * 90)),
       strftime('%Y-%m-%dT%H:%M:%S.000Z', 'now', printf('-%d minutes', ($naps - i) * 90 - 25)),
       CASE WHEN i % 7 = 0 THEN NULL ELSE 60 + (i * 37) % 600 END, 1200, 0.2 + (i % 50) / 100.0,
       CASE WHEN i % 11 = 0 THEN 'cancelled' ELSE 'dismissed' END,
       CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN 'max' ELSE 'nap' END,
       i % 3, 'chime', 'ALSA default', 'nap', 'nap', 'basic'
FROM n;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
echo "bench-history: $(sqlite3 "$database" 'SELECT count(*) FROM naps') naps in $database"
# The query `history` runs (StoreDatabase.napsQuery), with its bound argument written in.
query="SELECT napId, startedAt, endedAt, fallAsleepSeconds, napSeconds, latenessMs, outcome, alarmReason, snoozes, sound, output, rungBy, recordedBy, preset FROM naps WHERE startedAt >= '' ORDER BY startedAt, id"
"$binary" history | tail -6

hyperfine -N --warmup 5 --runs 100 --export-json "$work/history.json" \
    "$binary history" "sqlite3 $database \"$query\"" "$binary history export --csv" >/dev/null
python3 - "$work/history.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
history, sqlite, export = results
for name, r in (("snoozefuse history", history), ("sqlite3, same query", sqlite), ("history export --csv", export)):
    print(f"{name:22} median {r['median']*1000:7.2f} ms (min {r['min']*1000:.2f}, max {r['max']*1000:.2f})")
ratio = history["median"] / sqlite["median"]
print(f"history / sqlite3: {ratio:.2f} x   budget <= 2 x: {'met' if ratio <= 2 else 'NOT met'}")
PY

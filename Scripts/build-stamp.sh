#!/bin/sh
# Writes .build/build-stamp.o: the commit the program is built from (`git describe`: its short
# hash, `-dirty` with changes not committed), which `make build` links into every program
# (--version prints it). Rewritten only when the commit changes, so an unchanged tree does not
# relink. Outside a git checkout the stamp says `unknown` (a checkout owned by another user is
# read all the same: safe.directory).
#
# usage: Scripts/build-stamp.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.build"
commit=$(git -C "$root" -c safe.directory="$root" describe --always --dirty --abbrev=12 --exclude '*' 2>/dev/null || echo unknown)
source="$root/.build/build-stamp.c"
text="const char *snoozefuse_build_commit(void) { return \"$commit\"; }"
if [ "$(cat "$source" 2>/dev/null)" != "$text" ] || [ ! -f "$root/.build/build-stamp.o" ]; then
    printf '%s\n' "$text" > "$source"
    ${CC:-cc} -O2 -c "$source" -o "$root/.build/build-stamp.o"
fi

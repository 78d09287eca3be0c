#!/bin/sh
# Strips the programs and plugins of an installed tree (PREFIX/bin/snoozefuse,
# PREFIX/lib/snoozefuse/snoozefuse-{plugin-host,guardian}, PREFIX/lib/snoozefuse/plugins/*.so),
# and, with DEBUG_FOLDER, keeps each one's debug information there by build id
# (DEBUG_FOLDER/usr/lib/debug/.build-id/ab/cdef….debug, where gdb looks for it) with a link to it in
# the stripped file. The .deb's and the tarball's programs have the same build ids (the .deb's also
# carry the link to their debug file): the .deb's debug tree serves both.
#
# usage: Scripts/strip-programs.sh PREFIX_FOLDER [DEBUG_FOLDER]
set -eu
tree=${1:?usage: Scripts/strip-programs.sh PREFIX_FOLDER [DEBUG_FOLDER]}
debug=${2:-}
for file in "$tree/bin/snoozefuse" "$tree/lib/snoozefuse/snoozefuse-plugin-host" \
            "$tree/lib/snoozefuse/snoozefuse-guardian" "$tree"/lib/snoozefuse/plugins/*.so; do
    [ -f "$file" ] || { echo "strip-programs.sh: $file is missing" >&2; exit 66; }
    id=$(readelf -n "$file" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
    if [ -n "$debug" ] && [ -n "$id" ]; then
        folder="$debug/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)"
        mkdir -p "$folder"
        target="$folder/$(echo "$id" | cut -c3-).debug"
        objcopy --only-keep-debug --compress-debug-sections "$file" "$target"
        strip --strip-unneeded --remove-section=.comment --remove-section=.note "$file"
        objcopy --add-gnu-debuglink="$target" "$file"
    else
        strip --strip-unneeded --remove-section=.comment --remove-section=.note "$file"
    fi
done

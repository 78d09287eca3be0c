#!/bin/sh
# Builds the six built-in plugins into FOLDER as the C they are, with the system's C compiler:
#   FOLDER/libsnoozefuse-{tone,noise,terminal,command,led,rumble}.so
# SwiftPM links every product it makes with the Swift runtime (libswiftCore.so, its start-up object
# included), which no machine without a Swift toolchain has: built so, not one of them loads
# anywhere else. Built here, each needs only the C library (and libm for the tone): what the
# plugin ABI promises (PLUGINS.md). With debug information; packaging strips it into a file of its own.
#
# usage: Scripts/build-plugins.sh FOLDER        (CC chooses the compiler; cc by default)
set -eu
folder=${1:?usage: Scripts/build-plugins.sh FOLDER}
root=$(cd "$(dirname "$0")/.." && pwd)
compiler=${CC:-cc}
mkdir -p "$folder"
for plugin in tone noise terminal command led rumble; do
    "$compiler" -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -Werror \
        -I "$root/Sources/SnoozeFusePluginABI/include" "$root/Plugins/$plugin/$plugin.c" \
        -o "$folder/libsnoozefuse-$plugin.so" -Wl,--as-needed -Wl,-z,relro -Wl,-z,now -lm -lpthread
done

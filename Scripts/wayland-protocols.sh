#!/bin/sh
# Writes the Wayland protocol code of Sources/CWayland/protocols from the protocols' XML, as Debian's
# packages install it (libwayland-dev: wayland.xml and wayland-scanner; wayland-protocols:
# ext-idle-notify-v1.xml). The output is committed: a build needs neither the scanner nor the XML.
# KWin's idle protocol (kde-idle-*) is written by hand: see kde-idle-client.h.
set -eu
cd "$(dirname "$0")/../Sources/CWayland/protocols"
staging=/usr/share/wayland-protocols/staging
wayland-scanner client-header "$staging/ext-idle-notify/ext-idle-notify-v1.xml" ext-idle-notify-v1-client.h
wayland-scanner private-code "$staging/ext-idle-notify/ext-idle-notify-v1.xml" ext-idle-notify-v1-protocol.c
wayland-scanner private-code /usr/share/wayland/wayland.xml wayland-protocol.c
echo "wayland-protocols.sh: wrote $(ls | tr '\n' ' ')"

#!/bin/sh
# Makes the tarball for distributions other than Debian's (`make dist`):
#   OUT/snoozefuse-VERSION-linux-ARCH.tar.gz, one folder snoozefuse-VERSION/ holding
#     bin/snoozefuse, lib/snoozefuse/{snoozefuse-plugin-host,snoozefuse-guardian,plugins/*.so},
#     share/snoozefuse/sounds/*.caf, share/man/man1/snoozefuse.1, the bash, zsh and fish completions,
#     share/doc/snoozefuse/{copyright,changelog}, the user unit's template
#     (share/snoozefuse/snoozefuse-resume.service.in), runtime-libraries.txt, and install.sh
#     (Packaging/tarball-install.sh: under ~/.local by default, --prefix DIR, --uninstall).
# The same stripped programs as the .deb (same build ids: the .deb's debug file serves both). The
# tree is relocatable: snoozefuse finds the rest from its own location. The systemd user unit is
# written by install.sh, with the path it installs to.
#
# usage: Scripts/make-dist.sh PRODUCTS_FOLDER OUT_FOLDER
set -eu
products=${1:?usage: Scripts/make-dist.sh PRODUCTS_FOLDER OUT_FOLDER}
out=${2:?usage: Scripts/make-dist.sh PRODUCTS_FOLDER OUT_FOLDER}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/.*static let release = "\(.*\)".*/\1/p' "$root/Sources/SnoozeFuseSystem/BuildStamp.swift")
[ -n "$version" ] || { echo "make-dist.sh: no version in Sources/SnoozeFuseSystem/BuildStamp.swift" >&2; exit 70; }
arch=$(uname -m)
name="snoozefuse-$version"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree="$work/$name"

DESTDIR="$work" "$root/Scripts/install.sh" "$products" "/$name" >/dev/null
"$root/Scripts/strip-programs.sh" "$tree"
# install.sh writes the unit with the install's own path: the tarball's install.sh writes it anew.
rm -r "$tree/lib/systemd"
install -d "$tree/share/doc/snoozefuse"
install -m 0644 "$root/Packaging/copyright" "$tree/share/doc/snoozefuse/copyright"
install -m 0644 "$root/Packaging/changelog" "$tree/share/doc/snoozefuse/changelog"
install -m 0644 "$root/Packaging/runtime-libraries.txt" "$tree/runtime-libraries.txt"
install -m 0755 "$root/Packaging/tarball-install.sh" "$tree/install.sh"
install -m 0644 "$root/Packaging/snoozefuse-resume.service.in" "$tree/share/snoozefuse/snoozefuse-resume.service.in"

tarball="$out/$name-linux-$arch.tar.gz"
tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name -czf "$tarball" "$name"
echo "$tarball ($(du -k "$tarball" | cut -f1) KiB): unpack, then $name/install.sh (under ~/.local; --prefix DIR)"

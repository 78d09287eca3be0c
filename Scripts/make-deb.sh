#!/bin/sh
# Makes the Debian package from a folder of built products (`make deb`):
#   OUT/snoozefuse_VERSION_ARCH.deb              what `make install PREFIX=/usr` lays down, stripped:
#       /usr/bin/snoozefuse, /usr/lib/snoozefuse/{snoozefuse-plugin-host,snoozefuse-guardian},
#       /usr/lib/snoozefuse/plugins/libsnoozefuse-*.so, /usr/share/snoozefuse/sounds/*.caf,
#       /usr/lib/systemd/user/snoozefuse-resume.service, /usr/share/man/man1/snoozefuse.1.gz,
#       the bash, zsh and fish completions, /usr/share/doc/snoozefuse/{copyright,changelog.gz}
#   OUT/snoozefuse_VERSION_ARCH.debug.tar.xz     the programs' debug information, by build id
#                                                (usr/lib/debug/.build-id/…, as gdb looks for it)
#
# Built with dpkg-deb from a control file kept in Packaging/ (not debhelper): the programs link
# their Swift runtime statically and open every other library lazily, so dh_shlibdeps would find
# nothing to depend on, and the build is SwiftPM's, not a debian/rules one. The Depends come from
# Packaging/runtime-libraries.txt (each library the code opens, with its package; a test keeps
# the two in step); the version from Sources/SnoozeFuseSystem/BuildStamp.swift.
#
# usage: Scripts/make-deb.sh PRODUCTS_FOLDER OUT_FOLDER
set -eu
products=${1:?usage: Scripts/make-deb.sh PRODUCTS_FOLDER OUT_FOLDER}
out=${2:?usage: Scripts/make-deb.sh PRODUCTS_FOLDER OUT_FOLDER}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/.*static let release = "\(.*\)".*/\1/p' "$root/Sources/SnoozeFuseSystem/BuildStamp.swift")
arch=$(dpkg --print-architecture)
[ -n "$version" ] || { echo "make-deb.sh: no version in Sources/SnoozeFuseSystem/BuildStamp.swift" >&2; exit 70; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
package="$work/package"
debug="$work/debug"

DESTDIR="$package" "$root/Scripts/install.sh" "$products" /usr >/dev/null

# Stripped programs and plugins; their debug information in a file of its own for each, named by
# build id, and a link to it in each stripped file.
"$root/Scripts/strip-programs.sh" "$package/usr" "$debug"

# Debian's places and forms: a compressed manual, zsh's vendor completions, the documentation.
gzip -9n "$package/usr/share/man/man1/snoozefuse.1"
mkdir -p "$package/usr/share/zsh/vendor-completions"
mv "$package/usr/share/zsh/site-functions/_snoozefuse" "$package/usr/share/zsh/vendor-completions/_snoozefuse"
rmdir "$package/usr/share/zsh/site-functions"
# A completion script is sourced, not run: no #! line.
sed -i '1{/^#!/d}' "$package/usr/share/bash-completion/completions/snoozefuse"
# What lintian says of a deliberate choice, and why (no PIE: see the file).
mkdir -p "$package/usr/share/lintian/overrides"
install -m 0644 "$root/Packaging/lintian-overrides" "$package/usr/share/lintian/overrides/snoozefuse"
mkdir -p "$package/usr/share/doc/snoozefuse"
install -m 0644 "$root/Packaging/copyright" "$package/usr/share/doc/snoozefuse/copyright"
gzip -9n -c "$root/Packaging/changelog" > "$package/usr/share/doc/snoozefuse/changelog.gz"
chmod 0644 "$package/usr/share/doc/snoozefuse/changelog.gz"

# The control file: Depends from the list of libraries the code opens, each package once.
depends=$(grep -v '^\s*#' "$root/Packaging/runtime-libraries.txt" | grep -v '^\s*$' | cut -d' ' -f2- | awk '!seen[$0]++' | paste -sd, - | sed 's/,/, /g')
# Installed-Size as dpkg-gencontrol reckons it: each file (or link) its size in KiB rounded up,
# each folder 1 KiB (du's apparent size counted every folder as 4 KiB).
files=$(find "$package" \( -type f -o -type l \) -printf '%s\n' | awk '{ n += int(($1 + 1023) / 1024) } END { print n + 0 }')
folders=$(find "$package" -type d | wc -l)
size=$((files + folders))
mkdir -p "$package/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    "$root/Packaging/control" > "$package/DEBIAN/control"
(cd "$package" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$package/DEBIAN/md5sums"
chmod 0644 "$package/DEBIAN/control" "$package/DEBIAN/md5sums"
find "$package" -type d -exec chmod 0755 {} +

deb="$out/snoozefuse_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz -z9 --build "$package" "$deb" >/dev/null
tar -C "$debug" --owner=0 --group=0 -cJf "$out/snoozefuse_${version}_${arch}.debug.tar.xz" usr
echo "$deb ($(du -k "$deb" | cut -f1) KiB; installed $size KiB), and its debug information: $out/snoozefuse_${version}_${arch}.debug.tar.xz"
